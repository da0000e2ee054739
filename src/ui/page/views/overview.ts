// The swarm at a glance: counts, the pass rate, the live activity, the
// latest failures and the first agents.
import type { VNode } from 'preact'
import { url, useFeedState, useResource, type Activity, type Page } from '../api.js'
import { AgentLink, Empty, ErrorLine, Section, clock, html, percent } from '../components.js'
import { AgentsTable } from './agents.js'
import { FindingItem } from './findings.js'
import { PassRatePanel } from './tests.js'
import type { AgentRow, FindingRow, SpendSummary, Summary } from '../types.js'

function Card({ label, value, sub, href }: { label: string; value: string; sub?: VNode | string; href: string }): VNode {
  return html`<a class="card" href=${href}
    ><span class="label">${label}</span><span class="value">${value}</span>${sub != null ? html`<span class="sub">${sub}</span>` : null}</a
  >`
}

function TaskBar({ t }: { t: Summary['tasks'] }): VNode {
  const total = Math.max(1, t.total)
  return html`<span class="bar" title=${`${t.open} open, ${t.claimed} claimed, ${t.expired} expired, ${t.done} done`}>
    ${(['done', 'claimed', 'expired', 'open'] as const).map(s => html`<span class=${s} style=${{ width: `${(100 * t[s]) / total}%` }}></span>`)}
  </span>`
}

export function Cards({ s }: { s: Summary }): VNode {
  return html`<div class="cards">
    <${Card}
      label="Pass rate"
      href="#/tests"
      value=${s.tests != null ? percent(s.tests.passRate) : '—'}
      sub=${s.tests != null ? `${s.tests.passed}/${s.tests.total} tests, ${s.tests.runs} runs` : 'no test run yet'}
    />
    <${Card}
      label="Tasks done"
      href="#/board"
      value=${`${s.tasks.done}/${s.tasks.total}`}
      sub=${html`<${TaskBar} t=${s.tasks} /> ${s.tasks.claimed} claimed · ${s.tasks.open} open${s.tasks.expired > 0 ? ` · ${s.tasks.expired} expired` : ''}`}
    />
    <${Card}
      label="Agents live"
      href="#/agents"
      value=${`${s.agents.live}/${s.agents.total}`}
      sub=${`${s.entries.toLocaleString()} log entries`}
    />
    <${Card}
      label="Findings"
      href="#/findings"
      value=${s.findings.total.toLocaleString()}
      sub=${`${s.findings.byKind.failure ?? 0} failures · ${s.findings.byKind.bug ?? 0} bugs`}
    />
    <${Card}
      label="Integrations"
      href="#/tests"
      value=${s.integrations.total.toLocaleString()}
      sub=${`${s.integrations.merged} merged · ${s.integrations.conflict} conflicts · ${s.integrations.failed} failed`}
    />
    <${Card}
      label="Messages"
      href="#/messages"
      value=${s.messages.inbox.toLocaleString()}
      sub=${`received · ${s.messages.announcements} announcements`}
    />
    ${s.spend != null ? html`<${Card} label="Spend" href="#/" value=${`$${s.spend.usd.toFixed(2)}${s.spend.estimated ? ' est.' : ''}`} sub=${spendLine(s.spend)} />` : null}
  </div>`
}

/** Tokens in and out, and the budget: reached (no new run starts) or its caps. */
function spendLine(p: SpendSummary): string {
  const tokens = `${p.inputTokens.toLocaleString()} in · ${p.outputTokens.toLocaleString()} out`
  const caps = [
    p.budget.usd > 0 ? `$${p.budget.usd}` : '',
    p.budget.tokens > 0 ? `${p.budget.tokens.toLocaleString()} tokens` : '',
    p.budget.hours > 0 ? `${p.budget.hours} agent-h` : ''
  ].filter(c => c !== '')
  const budget = p.reached ? `budget reached: ${p.reasons.join('; ')}` : caps.length > 0 ? `budget ${caps.join(', ')}` : 'no budget'
  return `${tokens} · ${budget}`
}

function describe(a: Activity): VNode {
  const who = html`<${AgentLink} id=${a.peerId} name=${a.name} />`
  const task =
    a.task != null ? html`<code>${a.task}</code>${a.epoch != null && a.epoch > 0 ? html`<small>@${a.epoch}</small>` : null}` : null
  switch (a.kind) {
    case 'claim':
      return html`${who} claimed ${task}`
    case 'release':
      return html`${who} released ${task}`
    case 'done':
      return html`${who} finished ${task}`
    case 'task':
      return html`${who} added task ${task}`
    case 'goal':
      return html`${who} set the goal: <span class="text">${a.text}</span>`
    case 'finding':
      return html`${who} recorded a <strong>${a.detail}</strong>: <span class="text">${a.text}</span>`
    case 'integration':
      return html`${who} integrated ${task}: <strong>${a.detail}</strong>`
    case 'test_run':
      return html`${who} ran the tests: <strong>${a.detail}</strong> pass`
    case 'announcement':
      return html`${who} announced: <span class="text">${a.text}</span>`
    case 'message':
      return html`${who} sent this daemon a direct message`
    case 'peer_joined':
      return html`${who} joined`
    case 'peer_left':
      return html`${who} went silent`
    default:
      return html`${who} wrote a ${a.kind} entry`
  }
}

export function ActivityFeed(): VNode {
  const { activity, connected } = useFeedState()
  return html`<${Section} title="Live activity" extra=${html`<span class="muted">${connected ? 'as it happens' : 'reconnecting…'}</span>`}>
    ${
      activity.length === 0
        ? html`<${Empty}>Nothing has happened since this page opened.</${Empty}>`
        : html`<ol class="activity">
            ${activity.slice(0, 40).map((a, i) => html`<li key=${`${a.time}-${i}-${activity.length}`} class=${`act-${a.kind}`}><time>${clock(a.time)}</time> ${describe(a)}</li>`)}
          </ol>`
    }
  </${Section}>`
}

export function OverviewView({ summary }: { summary?: Summary }): VNode {
  const failures = useResource<Page<FindingRow>>(url('api/findings', { limit: 5 }), ['findings'])
  const agents = useResource<Page<AgentRow>>(url('api/agents', { limit: 10 }), ['agents'])
  return html`<div class="stack">
    ${summary != null ? html`<${Cards} s=${summary} />` : null}
    <div class="two wide-left"><${PassRatePanel} /><${ActivityFeed} /></div>
    <div class="two">
      <${Section} title="Latest findings, failures first" extra=${html`<a href="#/findings">all findings</a>`}>
        <${ErrorLine} error=${failures.error} />
        ${
          failures.data == null
            ? null
            : failures.data.items.length === 0
              ? html`<${Empty}>No finding yet.</${Empty}>`
              : html`<ul class="findings">
                  ${failures.data.items.map(f => html`<${FindingItem} key=${f.id} f=${f} />`)}
                </ul>`
        }
      </${Section}>
      <${Section} title="Agents" extra=${html`<a href="#/agents">all ${agents.data?.total ?? ''} agents</a>`}>
        <${ErrorLine} error=${agents.error} />
        ${agents.data != null ? html`<${AgentsTable} rows=${agents.data.items} />` : null}
      </${Section}>
    </div>
  </div>`
}
