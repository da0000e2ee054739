// The shared record's findings: full-text search with kind, path and author
// filters, failures first, a page at a time.
import type { VNode } from 'preact'
import { useState } from 'preact/hooks'
import { url, useResource, type Page } from '../api.js'
import { Ago, AgentLink, Empty, ErrorLine, KindBadge, Pager, SearchBox, Section, html } from '../components.js'
import type { FindingRow } from '../types.js'

const KINDS = ['failure', 'bug', 'discovery', 'decision', 'note']

export function FindingItem({ f }: { f: FindingRow }): VNode {
  const [open, setOpen] = useState(false)
  const long = f.text.length > 280 || f.text.split('\n').length > 4
  return html`<li class=${`finding ${f.kind}${f.superseded ? ' superseded' : ''}`} data-finding=${f.id}>
    <div class="meta">
      <${KindBadge} kind=${f.kind} />
      ${f.superseded ? html`<span class="badge plain" title="a later finding supersedes this one">superseded</span>` : null}
      <${AgentLink} id=${f.author} name=${f.authorName} />
      <${Ago} time=${f.time} />
    </div>
    <p class=${`text${long && !open ? ' clamped' : ''}`}>${f.text}</p>
    ${
      long
        ? html`<button
            type="button"
            class="link"
            onClick=${() => {
              setOpen(!open)
            }}
          >
            ${open ? 'less' : 'more'}
          </button>`
        : null
    }
    ${
      f.paths.length > 0 || f.tags.length > 0
        ? html`<div class="tags">
            ${f.paths.map(p => html`<code key=${`p:${p}`}>${p}</code>`)}${f.tags.map(t => html`<span class="chip" key=${`t:${t}`}>${t}</span>`)}
          </div>`
        : null
    }
  </li>`
}

export function FindingsView(): VNode {
  const [q, setQ] = useState('')
  const [kind, setKind] = useState('')
  const [path, setPath] = useState('')
  const [author, setAuthor] = useState('')
  const [offset, setOffset] = useState(0)
  const reset =
    <T>(set: (v: T) => void) =>
    (v: T): void => {
      set(v)
      setOffset(0)
    }
  const r = useResource<Page<FindingRow> & { authorUnknown?: boolean }>(url('api/findings', { q, kind, path, author, offset, limit: 50 }), [
    'findings'
  ])
  return html`<${Section} title="Findings" extra=${html` <${SearchBox}
      label="Search"
      name="finding-q"
      value=${q}
      placeholder="words in text, paths, tags"
      onChange=${reset(setQ)}
    />
    <label class="field"
      ><span>Kind</span
      ><select
        name="kind"
        value=${kind}
        onChange=${(e: Event) => {
          reset(setKind)((e.target as HTMLSelectElement).value)
        }}
      >
        <option value="">all (failures first)</option>
        ${KINDS.map(k => html`<option value=${k}>${k}</option>`)}
      </select></label
    >
    <${SearchBox} label="Path" name="finding-path" value=${path} placeholder="src/parser" onChange=${reset(setPath)} />
    <${SearchBox} label="Author" name="finding-author" value=${author} placeholder="name or peer id" onChange=${reset(setAuthor)} />`}>
    <${ErrorLine} error=${r.error} />
    ${r.data?.authorUnknown === true ? html`<${Empty}>No agent is called that.</${Empty}>` : null}
    ${
      r.data == null
        ? null
        : r.data.items.length === 0 && r.data.authorUnknown !== true
          ? html`<${Empty}>No finding matches.</${Empty}>`
          : html`<ul class="findings">
              ${r.data.items.map(f => html`<${FindingItem} key=${f.id} f=${f} />`)}
            </ul>`
    }
    ${r.data != null ? html`<${Pager} offset=${r.data.offset} limit=${r.data.limit} total=${r.data.total} onPage=${setOffset} />` : null}
  </${Section}>`
}
