// One agent: what it does now, its claims, findings, messages with this
// daemon, and integrations.
import type { VNode } from 'preact'
import { url, useResource } from '../api.js'
import { Ago, AgentLink, Empty, ErrorLine, HarnessBadge, KindBadge, LiveDot, Section, html } from '../components.js'
import { FindingItem } from './findings.js'
import type { AgentPage } from '../types.js'

function more(shown: number, total: number): VNode | null {
  return total > shown ? html`<p class="muted">${shown} of ${total} shown</p>` : null
}

export function AgentView({ id }: { id: string }): VNode {
  const r = useResource<AgentPage>(url('api/agent', { id }), ['agents', 'board', 'findings', 'runs', 'messages'])
  if (r.error != null)
    return html`<${Section} title="Agent"><${ErrorLine} error=${r.error} /><p><a href="#/agents">All agents</a></p></${Section}>`
  const p = r.data
  if (p == null) return html`<${Section} title="Agent"><p class="muted">Loading…</p></${Section}>`
  const a = p.agent
  return html`<div class="stack agent-page" data-peer=${a.peerId}>
    <${Section} title=${html`<${LiveDot} live=${a.live} /> <span class="agent-name">${a.name}</span>`} extra=${html`<a href="#/agents">All agents</a>`}>
      <dl class="facts">
        <dt>Peer id</dt><dd><code>${a.peerId}</code></dd>
        <dt>Live</dt><dd>${a.live ? 'yes' : 'no'}${a.self ? ' (this daemon)' : ''}</dd>
        <dt>Status line</dt><dd class="status">${a.status !== '' ? a.status : html`<span class="muted">—</span>`}</dd>
        <dt>Last seen</dt><dd>${a.self ? 'now' : html`<${Ago} time=${a.lastSeen} />`}</dd>
        <dt>Harness</dt><dd><${HarnessBadge} state=${a.harness} /></dd>
        <dt>Holds</dt><dd>${a.held.length === 0 ? html`<span class="muted">nothing</span>` : a.held.map(h => html`<span class="chip" key=${h.task}>${h.task}<small>@${h.epoch}</small></span>`)}</dd>
        <dt>Log entries</dt><dd>${p.seq}</dd>
      </dl>
    </${Section}>
    <div class="two">
      <${Section} title=${`Claims (${p.claims.total})`}>
        ${
          p.claims.items.length === 0
            ? html`<${Empty}>No claim.</${Empty}>`
            : html`<table class="claims">
                <thead>
                  <tr>
                    <th>Task</th>
                    <th>Epoch</th>
                    <th>Now</th>
                    <th>When</th>
                  </tr>
                </thead>
                <tbody>
                  ${p.claims.items.map(
                    (c, i) =>
                      html`<tr key=${i}>
                        <td><code>${c.task}</code></td>
                        <td>${c.epoch}</td>
                        <td>${c.status}</td>
                        <td><${Ago} time=${c.time} /></td>
                      </tr>`
                  )}
                </tbody>
              </table>`
        }
        ${more(p.claims.items.length, p.claims.total)}
        ${p.done.length > 0 ? html`<p>Done: ${p.done.map(d => html`<span class="chip" key=${d.task}>${d.task}</span>`)}</p>` : null}
      </${Section}>
      <${Section} title=${`Integrations (${p.integrations.total})`}>
        ${
          p.integrations.items.length === 0
            ? html`<${Empty}>No integration.</${Empty}>`
            : html`<table class="integrations">
                <thead>
                  <tr>
                    <th>Task</th>
                    <th>Result</th>
                    <th>Commit</th>
                    <th>When</th>
                  </tr>
                </thead>
                <tbody>
                  ${p.integrations.items.map(
                    (i, n) =>
                      html`<tr key=${n}>
                        <td><code>${i.task}</code><small>@${i.epoch}</small></td>
                        <td><${KindBadge} kind=${i.result} /></td>
                        <td><code>${i.commit.slice(0, 10)}</code></td>
                        <td><${Ago} time=${i.time} /></td>
                      </tr>`
                  )}
                </tbody>
              </table>`
        }
        ${more(p.integrations.items.length, p.integrations.total)}
      </${Section}>
    </div>
    <div class="two">
      <${Section} title=${`Findings (${p.findings.total})`}>
        ${
          p.findings.items.length === 0
            ? html`<${Empty}>No finding.</${Empty}>`
            : html`<ul class="findings">
                ${p.findings.items.map(f => html`<${FindingItem} key=${f.id} f=${f} />`)}
              </ul>`
        }
        ${more(p.findings.items.length, p.findings.total)}
      </${Section}>
      <${Section} title=${`Messages with this daemon (${p.messages.total})`}>
        ${
          p.messages.items.length === 0
            ? html`<${Empty}>${a.self ? 'This is the daemon serving the page.' : 'No direct message between this agent and this daemon.'}</${Empty}>`
            : html`<table class="messages">
                <thead>
                  <tr>
                    <th>From</th>
                    <th></th>
                    <th>To</th>
                    <th>When</th>
                    <th>Size</th>
                  </tr>
                </thead>
                <tbody>
                  ${p.messages.items.map(
                    (m, i) =>
                      html`<tr key=${i}>
                        <td><${AgentLink} id=${m.from} /></td>
                        <td class="arrow">→</td>
                        <td><${AgentLink} id=${m.to} /></td>
                        <td><${Ago} time=${m.time} /></td>
                        <td>${m.chars} chars${m.delivered ? '' : ' (waiting)'}</td>
                      </tr>`
                  )}
                </tbody>
              </table>`
        }
      </${Section}>
    </div>
  </div>`
}
