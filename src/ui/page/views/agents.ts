// Every agent this daemon knows of, a page at a time: live or not, status
// line, held tasks, last heartbeat, harness state.
import type { VNode } from 'preact'
import { useState } from 'preact/hooks'
import { url, useResource, type Page } from '../api.js'
import { Ago, AgentLink, Empty, ErrorLine, HarnessBadge, LiveDot, Pager, SearchBox, Section, html } from '../components.js'
import type { AgentRow } from '../types.js'

export function AgentsTable({ rows }: { rows: AgentRow[] }): VNode {
  return html`<table class="agents">
    <thead>
      <tr>
        <th></th>
        <th>Agent</th>
        <th>Status line</th>
        <th>Holds</th>
        <th>Last seen</th>
        <th>Harness</th>
      </tr>
    </thead>
    <tbody>
      ${rows.map(
        a =>
          html`<tr key=${a.peerId} data-peer=${a.peerId}>
            <td><${LiveDot} live=${a.live} /></td>
            <td><${AgentLink} id=${a.peerId} name=${a.name} />${a.self ? html` <span class="badge plain">this daemon</span>` : null}</td>
            <td class="status">${a.status !== '' ? a.status : html`<span class="muted">—</span>`}</td>
            <td>
              ${a.held.length === 0 ? html`<span class="muted">—</span>` : a.held.map(h => html`<span class="chip" key=${h.task}>${h.task}<small>@${h.epoch}</small></span>`)}
            </td>
            <td>${a.self ? html`<span class="muted">now</span>` : html`<${Ago} time=${a.lastSeen} />`}</td>
            <td>
              <${HarnessBadge}
                state=${a.harness}
              />${a.sandbox !== '' ? html` <span class="muted" title="what the harness runs in">sandbox ${a.sandbox}</span>` : null}
            </td>
          </tr>`
      )}
    </tbody>
  </table>`
}

export function AgentsView(): VNode {
  const [q, setQ] = useState('')
  const [live, setLive] = useState('')
  const [offset, setOffset] = useState(0)
  const limit = 100
  const r = useResource<Page<AgentRow>>(url('api/agents', { q, live, offset, limit }), ['agents'])
  return html`<${Section} title="Agents" extra=${html` <${SearchBox}
      label="Find"
      name="agent-q"
      value=${q}
      placeholder="name, id, status or task"
      onChange=${(v: string) => {
        setQ(v)
        setOffset(0)
      }}
    />
    <label class="field"
      ><span>Show</span
      ><select
        value=${live}
        onChange=${(e: Event) => {
          setLive((e.target as HTMLSelectElement).value)
          setOffset(0)
        }}
      >
        <option value="">all</option>
        <option value="live">live</option>
        <option value="offline">not live</option>
      </select></label
    >`}>
    <${ErrorLine} error=${r.error} />
    ${r.data == null ? null : r.data.items.length === 0 ? html`<${Empty}>No agent matches.</${Empty}>` : html`<${AgentsTable} rows=${r.data.items} />`}
    ${r.data != null ? html`<${Pager} offset=${r.data.offset} limit=${r.data.limit} total=${r.data.total} onPage=${setOffset} />` : null}
  </${Section}>`
}
