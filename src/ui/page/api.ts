// The page's link to its daemon: one EventSource of change notices, and JSON
// pages fetched again when a notice names the view that shows them.
import { useEffect, useRef, useState } from 'preact/hooks'

export type Topic = 'summary' | 'agents' | 'board' | 'findings' | 'messages' | 'runs'
export const ALL_TOPICS: Topic[] = ['summary', 'agents', 'board', 'findings', 'messages', 'runs']

export interface Activity {
  time: number
  kind: string
  peerId: string
  name: string
  task?: string
  epoch?: number
  detail?: string
  text?: string
}

export interface Page<T> {
  items: T[]
  total: number
  offset: number
  limit: number
}

type NoticeListener = (topics: Set<Topic>) => void

/** Keeps the last activity lines the stream brought, newest first. */
const ACTIVITY_KEPT = 200

class Feed {
  readonly listeners = new Set<NoticeListener>()
  readonly stateListeners = new Set<() => void>()
  activity: Activity[] = []
  connected = false
  private seen = false

  start(): void {
    const source = new EventSource('events')
    source.addEventListener('hello', () => {
      this.connected = true
      this.notifyState()
      // After a reconnect whatever happened meanwhile is unknown: refresh every view.
      if (this.seen) this.emit(new Set(ALL_TOPICS))
      this.seen = true
    })
    source.addEventListener('change', (ev: MessageEvent<string>) => {
      let n: { topics: Topic[]; activity: Activity[] }
      try {
        n = JSON.parse(ev.data) as typeof n
      } catch {
        return
      }
      const fresh = Array.isArray(n.activity) && n.activity.length > 0
      if (fresh) this.activity = [...n.activity.slice().reverse(), ...this.activity].slice(0, ACTIVITY_KEPT)
      this.emit(new Set(n.topics))
      if (fresh || !this.connected) {
        this.connected = true
        this.notifyState()
      }
    })
    source.addEventListener('error', () => {
      this.connected = false
      this.notifyState()
    })
  }

  private notifyState(): void {
    for (const l of this.stateListeners) l()
  }

  private emit(topics: Set<Topic>): void {
    for (const l of this.listeners) l(topics)
  }
}

export const feed = new Feed()

export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number
  ) {
    super(message)
  }
}

export async function getJson<T>(path: string, signal?: AbortSignal): Promise<T> {
  const res = await fetch(path, { signal, headers: { accept: 'application/json' }, credentials: 'same-origin' })
  const body = (await res.json().catch(() => null)) as { error?: { message?: string } } | null
  if (!res.ok) throw new ApiError(body?.error?.message ?? `${res.status} ${res.statusText}`, res.status)
  return body as T
}

/** Builds `path?k=v&...`, leaving out empty values. */
export function url(path: string, params: Record<string, string | number | undefined> = {}): string {
  const q = new URLSearchParams()
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') q.set(k, String(v))
  const s = q.toString()
  return s === '' ? path : `${path}?${s}`
}

export interface Resource<T> {
  data?: T
  error?: string
  loading: boolean
}

/** The shortest time between two fetches of one view when the swarm is busy. */
const REFRESH_GAP_MS = 1000

/**
 * Fetches `path`, and fetches it again when a change notice names one of
 * `topics`: at most once a second, never two at a time, so a busy swarm does
 * not turn into a busy page (or a busy daemon).
 */
export function useResource<T>(path: string | null, topics: Topic[]): Resource<T> {
  const [state, setState] = useState<Resource<T>>({ loading: path != null })
  const topicKey = topics.join(',')
  const ref = useRef<{ inFlight: boolean; dirty: boolean; last: number; timer: ReturnType<typeof setTimeout> | undefined }>({
    inFlight: false,
    dirty: false,
    last: 0,
    timer: undefined
  })
  useEffect(() => {
    if (path == null) {
      setState({ loading: false })
      return
    }
    let alive = true
    const r = ref.current
    r.inFlight = false
    r.dirty = false
    const controller = new AbortController()
    const load = (): void => {
      if (!alive) return
      if (r.inFlight) {
        r.dirty = true
        return
      }
      const wait = r.last + REFRESH_GAP_MS - Date.now()
      if (wait > 0) {
        if (r.timer == null)
          r.timer = setTimeout(() => {
            r.timer = undefined
            load()
          }, wait)
        return
      }
      r.inFlight = true
      r.last = Date.now()
      getJson<T>(path, controller.signal)
        .then(
          data => {
            if (alive) setState({ data, loading: false })
          },
          (err: Error) => {
            if (alive && err.name !== 'AbortError') setState(s => ({ data: s.data, error: err.message, loading: false }))
          }
        )
        .finally(() => {
          r.inFlight = false
          if (alive && r.dirty) {
            r.dirty = false
            load()
          }
        })
    }
    setState(s => ({ data: s.data, loading: true }))
    r.last = 0
    load()
    const wanted = new Set(topicKey.split(','))
    const listener: NoticeListener = changed => {
      for (const t of changed)
        if (wanted.has(t)) {
          load()
          return
        }
    }
    feed.listeners.add(listener)
    return () => {
      alive = false
      controller.abort()
      clearTimeout(r.timer)
      r.timer = undefined
      feed.listeners.delete(listener)
    }
  }, [path, topicKey])
  return state
}

/** Re-renders when the stream connects, drops, or brings activity. */
export function useFeedState(): { connected: boolean; activity: Activity[] } {
  const [, setTick] = useState(0)
  useEffect(() => {
    const l = (): void => {
      setTick(t => t + 1)
    }
    feed.stateListeners.add(l)
    return () => {
      feed.stateListeners.delete(l)
    }
  }, [])
  return { connected: feed.connected, activity: feed.activity }
}
