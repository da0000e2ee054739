// Small pieces every view uses. Everything a peer wrote goes into the page as
// a text child or an attribute value through preact, which never parses it as
// markup; nothing here sets innerHTML.
import { h, type ComponentChildren, type VNode } from 'preact'
import { useEffect, useRef, useState } from 'preact/hooks'
import htm from 'htm'

export const html = htm.bind(h) as (strings: TemplateStringsArray, ...values: unknown[]) => VNode

// ---- time ----

const listeners = new Set<() => void>()
setInterval(() => {
  for (const l of listeners) l()
}, 1000)

/** The wall clock, re-rendering the caller every second. */
export function useNow(): number {
  const [now, setNow] = useState(Date.now())
  useEffect(() => {
    const l = (): void => {
      setNow(Date.now())
    }
    listeners.add(l)
    return () => {
      listeners.delete(l)
    }
  }, [])
  return now
}

export function ago(time: number, now: number): string {
  if (time <= 0) return 'never'
  const s = Math.max(0, Math.round((now - time) / 1000))
  if (s < 60) return `${s}s ago`
  if (s < 3600) return `${Math.floor(s / 60)}m ago`
  if (s < 86400) return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m ago`
  return new Date(time).toLocaleString()
}

export function Ago({ time }: { time: number }): VNode {
  const now = useNow()
  return html`<time title=${time > 0 ? new Date(time).toLocaleString() : ''}>${ago(time, now)}</time>`
}

export function clock(time: number): string {
  return new Date(time).toLocaleTimeString([], { hour12: false })
}

// ---- small pieces ----

export function short(peerId: string): string {
  return peerId.length > 12 ? `…${peerId.slice(-8)}` : peerId
}

export function agentHref(peerId: string): string {
  return `#/agent/${encodeURIComponent(peerId)}`
}

/** An agent's name linking to its page, with the end of its id. */
export function AgentLink({ id, name }: { id: string; name?: string }): VNode {
  if (id === '') return html`<span class="muted">—</span>`
  return html`<a class="agent" href=${agentHref(id)} title=${id}>${name != null && name !== '' ? name : short(id)}</a>`
}

export function LiveDot({ live }: { live: boolean }): VNode {
  return html`<span
    class=${`dot ${live ? 'on' : 'off'}`}
    title=${live ? 'live' : 'not live'}
    aria-label=${live ? 'live' : 'not live'}
  ></span>`
}

// The harness supervisor's states (src/daemon/harness-service.ts), as heartbeats carry them.
const HARNESS_CLASS: Record<string, string> = {
  running: 'ok',
  backing_off: 'warn',
  held: 'warn',
  failing: 'bad',
  idle: 'info',
  stopped: 'bad',
  finished: 'done'
}
const HARNESS_WORDS: Record<string, string> = { backing_off: 'backing off', idle: 'starting' }

export function HarnessBadge({ state }: { state: string }): VNode {
  if (state === '') return html`<span class="muted">none</span>`
  return html`<span class=${`badge ${HARNESS_CLASS[state] ?? 'info'}`}>${HARNESS_WORDS[state] ?? state}</span>`
}

const KIND_CLASS: Record<string, string> = {
  failure: 'bad',
  bug: 'warn',
  discovery: 'info',
  decision: 'done',
  note: 'plain',
  merged: 'ok',
  conflict: 'warn',
  failed: 'bad'
}

export function KindBadge({ kind }: { kind: string }): VNode {
  return html`<span class=${`badge ${KIND_CLASS[kind] ?? 'plain'}`}>${kind}</span>`
}

export function Section({
  title,
  extra,
  children
}: {
  title: ComponentChildren
  extra?: ComponentChildren
  children?: ComponentChildren
}): VNode {
  return html`<section class="panel">
    <header>
      <h2>${title}</h2>
      ${extra != null ? html`<div class="extra">${extra}</div>` : null}
    </header>
    ${children}
  </section>`
}

export function Empty({ children }: { children?: ComponentChildren }): VNode {
  return html`<p class="empty">${children}</p>`
}

export function ErrorLine({ error }: { error?: string }): VNode | null {
  return error == null ? null : html`<p class="error" role="alert">${error}</p>`
}

/** "1–50 of 1024" with previous and next buttons. */
export function Pager({
  offset,
  limit,
  total,
  onPage
}: {
  offset: number
  limit: number
  total: number
  onPage: (offset: number) => void
}): VNode | null {
  if (total <= limit && offset === 0) return total > 0 ? html`<div class="pager"><span>${total} in all</span></div>` : null
  const last = Math.min(total, offset + limit)
  return html`<div class="pager">
    <button
      type="button"
      disabled=${offset === 0}
      onClick=${() => {
        onPage(Math.max(0, offset - limit))
      }}
    >
      ‹ Previous
    </button>
    <span>${total === 0 ? 0 : offset + 1}–${last} of ${total.toLocaleString()}</span>
    <button
      type="button"
      disabled=${last >= total}
      onClick=${() => {
        onPage(offset + limit)
      }}
    >
      Next ›
    </button>
  </div>`
}

export function percent(x: number): string {
  return `${Math.round(x * 1000) / 10}%`
}

/** A text input that reports what was typed once typing pauses. */
export function SearchBox({
  value,
  placeholder,
  onChange,
  label,
  name
}: {
  value: string
  placeholder: string
  onChange: (v: string) => void
  label: string
  name: string
}): VNode {
  const [text, setText] = useState(value)
  // Follow a new value from above (a reset), but never overwrite what is typed with the value it started from:
  // the effect runs after the first paint, and a fast typist (or a test) may already have typed.
  const shown = useRef(value)
  useEffect(() => {
    if (shown.current === value) return
    shown.current = value
    setText(value)
  }, [value])
  useEffect(() => {
    if (text === value) return
    const t = setTimeout(() => {
      onChange(text)
    }, 250)
    return () => {
      clearTimeout(t)
    }
  }, [text])
  return html`<label class="field"
    ><span>${label}</span
    ><input
      type="search"
      name=${name}
      value=${text}
      placeholder=${placeholder}
      onInput=${(e: Event) => {
        setText((e.target as HTMLInputElement).value)
      }}
  /></label>`
}
