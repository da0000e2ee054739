// Announcements (with their text) and this daemon's direct messages (who to
// whom and when: a direct message's text is for its reader, not the page).
import type { VNode } from 'preact'
import { useState } from 'preact/hooks'
import { url, useResource, type Page } from '../api.js'
import { Ago, AgentLink, Empty, ErrorLine, Pager, Section, html } from '../components.js'

interface AnnouncementRow {
  id: string
  from: string
  name: string
  text: string
  time: number
  receivedAt: number
}
interface DirectRow {
  from: string
  fromName: string
  to: string
  toName: string
  time: number
  chars: number
  thread?: string
  attempts?: number
}

function Announcements(): VNode {
  const [offset, setOffset] = useState(0)
  const r = useResource<Page<AnnouncementRow>>(url('api/announcements', { offset, limit: 50 }), ['messages'])
  return html`<${Section} title="Announcements" extra=${html`<span class="muted">heard since this dashboard started</span>`}>
    <${ErrorLine} error=${r.error} />
    ${
      r.data == null
        ? null
        : r.data.items.length === 0
          ? html`<${Empty}>No announcement yet.</${Empty}>`
          : html`<ul class="announcements">
              ${r.data.items.map(
                a =>
                  html`<li key=${a.id}>
                    <div class="meta"><${AgentLink} id=${a.from} name=${a.name} /> to everyone <${Ago} time=${a.time} /></div>
                    <p class="text">${a.text}</p>
                  </li>`
              )}
            </ul>`
    }
    ${r.data != null ? html`<${Pager} offset=${r.data.offset} limit=${r.data.limit} total=${r.data.total} onPage=${setOffset} />` : null}
  </${Section}>`
}

function DirectTable({ rows, pending }: { rows: DirectRow[]; pending: boolean }): VNode {
  return html`<table class="messages">
    <thead>
      <tr>
        <th>From</th>
        <th></th>
        <th>To</th>
        <th>When</th>
        <th>Size</th>
        ${pending ? html`<th>Attempts</th>` : null}
      </tr>
    </thead>
    <tbody>
      ${rows.map(
        (m, i) =>
          html`<tr key=${i}>
            <td><${AgentLink} id=${m.from} name=${m.fromName} /></td>
            <td class="arrow">→</td>
            <td><${AgentLink} id=${m.to} name=${m.toName} /></td>
            <td><${Ago} time=${m.time} /></td>
            <td>${m.chars} chars</td>
            ${pending ? html`<td>${m.attempts}</td>` : null}
          </tr>`
      )}
    </tbody>
  </table>`
}

function Inbox(): VNode {
  const [offset, setOffset] = useState(0)
  const r = useResource<Page<DirectRow>>(url('api/inbox', { offset, limit: 50 }), ['messages'])
  return html`<${Section} title="Direct messages received">
    <${ErrorLine} error=${r.error} />
    ${r.data == null ? null : r.data.items.length === 0 ? html`<${Empty}>This daemon has received no direct message.</${Empty}>` : html`<${DirectTable} rows=${r.data.items} pending=${false} />`}
    ${r.data != null ? html`<${Pager} offset=${r.data.offset} limit=${r.data.limit} total=${r.data.total} onPage=${setOffset} />` : null}
  </${Section}>`
}

function Outbox(): VNode {
  const [offset, setOffset] = useState(0)
  const r = useResource<Page<DirectRow>>(url('api/outbox', { offset, limit: 50 }), ['messages'])
  return html`<${Section} title="Waiting to be delivered">
    <${ErrorLine} error=${r.error} />
    ${r.data == null ? null : r.data.items.length === 0 ? html`<${Empty}>Nothing is waiting: every message this daemon sent was delivered.</${Empty}>` : html`<${DirectTable} rows=${r.data.items} pending=${true} />`}
    ${r.data != null ? html`<${Pager} offset=${r.data.offset} limit=${r.data.limit} total=${r.data.total} onPage=${setOffset} />` : null}
  </${Section}>`
}

export function MessagesView(): VNode {
  return html`<div class="stack">
    <${Announcements} />
    <div class="two"><${Inbox} /><${Outbox} /></div>
  </div>`
}
