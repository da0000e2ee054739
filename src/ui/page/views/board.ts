// The board: tasks by state with holder, epoch and dependencies, the `plan`
// task first; the graph of agents whose live claims overlap.
import type { VNode } from 'preact'
import { useState } from 'preact/hooks'
import { url, useResource, type Page } from '../api.js'
import { AgentLink, Empty, ErrorLine, Pager, SearchBox, Section, html } from '../components.js'
import { OverlapGraph, type OverlapRow } from '../overlap-graph.js'
import type { TaskRow } from '../types.js'

const STATES = ['open', 'claimed', 'expired', 'done'] as const
const LABELS: Record<string, string> = { open: 'Open', claimed: 'Claimed', expired: 'Expired lease', done: 'Done' }
const COLUMN = 50

function TaskCard({ t }: { t: TaskRow }): VNode {
  return html`<li class=${`task ${t.state}${t.id === 'plan' ? ' plan' : ''}`} data-task=${t.id}>
    <div class="task-head"><code>${t.id}</code>${t.epoch > 0 ? html`<span class="epoch" title="epoch">@${t.epoch}</span>` : null}</div>
    ${t.title !== '' && t.title !== t.id ? html`<div class="title">${t.title}</div>` : null}
    ${t.holder !== '' ? html`<div class="holder">${t.state === 'done' ? 'done by ' : t.state === 'expired' ? 'was held by ' : 'held by '}<${AgentLink} id=${t.state === 'done' && t.doneBy !== '' ? t.doneBy : t.holder} name=${t.holderName} /></div>` : null}
    ${t.deps.length > 0 ? html`<div class="deps">needs ${t.deps.map(d => html`<span class=${`dep ${d.done ? 'met' : ''}`} key=${d.id} title=${d.done ? 'done' : 'not done'}>${d.id}</span>`)}</div>` : null}
    ${t.scope.length > 0 ? html`<div class="scope" title=${t.scope.join('\n')}>${t.scope.slice(0, 3).join('  ')}${t.scope.length > 3 ? ` +${t.scope.length - 3}` : ''}</div>` : null}
  </li>`
}

function Column({ state, first, q }: { state: string; first: Page<TaskRow>; q: string }): VNode {
  const [offset, setOffset] = useState(0)
  // The first page comes with the board; later pages are fetched on their own.
  const more = useResource<Page<TaskRow>>(offset > 0 ? url('api/tasks', { state, offset, limit: COLUMN, q }) : null, ['board'])
  const page = offset > 0 && more.data != null ? more.data : first
  return html`<div class=${`column ${state}`}>
    <h3>${LABELS[state]} <span class="count">${first.total}</span></h3>
    <ul>
      ${page.items.map(t => html`<${TaskCard} key=${t.id} t=${t} />`)}
    </ul>
    ${page.items.length === 0 ? html`<${Empty}>none</${Empty}>` : null}
    <${Pager} offset=${offset > 0 ? offset : 0} limit=${COLUMN} total=${first.total} onPage=${setOffset} />
  </div>`
}

export function OverlapsPanel(): VNode {
  const r = useResource<{ items: OverlapRow[]; total: number; claims: number; skipped: boolean }>('api/overlaps', ['board', 'agents'])
  const d = r.data
  return html`<${Section} title="Overlapping scopes" extra=${d != null ? html`<span class="muted">${d.total} pairs among ${d.claims} live claims</span>` : null}>
    <${ErrorLine} error=${r.error} />
    ${
      d == null
        ? null
        : d.skipped
          ? html`<${Empty}>Too many live claims to compare on request (${d.claims}).</${Empty}>`
          : d.items.length === 0
            ? html`<${Empty}>No live claims overlap.</${Empty}>`
            : html` <div class="overlaps">
                <${OverlapGraph} rows=${d.items} />
                <table class="pairs">
                  <thead>
                    <tr>
                      <th>Agent</th>
                      <th>Task</th>
                      <th>Agent</th>
                      <th>Task</th>
                      <th>Shared paths</th>
                    </tr>
                  </thead>
                  <tbody>
                    ${d.items.slice(0, 30).map(
                      (o, i) =>
                        html`<tr key=${i}>
                          <td><${AgentLink} id=${o.a.holder} name=${o.a.name} /></td>
                          <td><code>${o.a.task}</code></td>
                          <td><${AgentLink} id=${o.b.holder} name=${o.b.name} /></td>
                          <td><code>${o.b.task}</code></td>
                          <td class="paths">${o.paths.join(', ')}</td>
                        </tr>`
                    )}
                  </tbody>
                </table>
              </div>`
    }
  </${Section}>`
}

export function BoardView(): VNode {
  const [q, setQ] = useState('')
  const r = useResource<{ goal: { text: string; setByName: string } | null; columns: Record<string, Page<TaskRow>> }>(
    url('api/board', { limit: COLUMN, q }),
    ['board']
  )
  return html`<div class="stack">
    <${Section} title="Board" extra=${html`<${SearchBox} label="Filter" name="task-q" value=${q} placeholder="task, title or holder" onChange=${setQ} />`}>
      <${ErrorLine} error=${r.error} />
      ${r.data?.goal != null ? html`<p class="goal-line"><strong>Goal:</strong> ${r.data.goal.text} <span class="muted">(set by ${r.data.goal.setByName})</span></p>` : r.data != null ? html`<${Empty}>No goal is set.</${Empty}>` : null}
      ${r.data == null ? null : html`<div class="columns">${STATES.map(s => html`<${Column} key=${`${s}|${q}`} state=${s} first=${r.data!.columns[s]} q=${q} />`)}</div>`}
    </${Section}>
    <${OverlapsPanel} />
  </div>`
}
