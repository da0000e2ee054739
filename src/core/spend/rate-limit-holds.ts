// "Provider P is limited until T", as the swarm heard it: the fold of
// rate_limit entries. An agent whose harness uses provider P (the same
// account: P is a hash of the provider and its key) starts no run before T,
// plus a spread of its own so that the agents held together do not all start
// again at the same moment. A hold is cut to a week past its entry's time.
import type { RateLimit } from '../../gen/agency/v1/log.js'
import { MAX_HOLD_MS } from './spend-bounds.js'

export interface RateLimitHoldView {
  provider: string
  until: number
  kind: 'transient' | 'quota'
  message: string
  reportedBy: string
}

export class RateLimitHolds {
  private readonly byProvider = new Map<string, RateLimitHoldView>()

  /** Folds one entry in; the latest `until` per provider holds (a later report never shortens a hold). */
  add(author: string, time: number, r: RateLimit): boolean {
    const until = Math.min(r.until, time + MAX_HOLD_MS)
    const seen = this.byProvider.get(r.provider)
    if (seen != null && (seen.until > until || (seen.until === until && seen.reportedBy <= author))) return false
    this.byProvider.set(r.provider, {
      provider: r.provider,
      until,
      kind: r.kind === 'quota' ? 'quota' : 'transient',
      message: r.message,
      reportedBy: author
    })
    return true
  }

  /** The hold on `provider` still in force at `now`, if any. */
  current(provider: string, now: number): RateLimitHoldView | undefined {
    const h = this.byProvider.get(provider)
    return h != null && h.until > now ? { ...h } : undefined
  }

  /** Every hold in force at `now`. */
  all(now: number): RateLimitHoldView[] {
    return [...this.byProvider.values()].filter(h => h.until > now).map(h => ({ ...h }))
  }
}

/**
 * When `agent` may start again after a hold ending at `until`: until plus a
 * spread in [0, spreadMs) drawn from the agent and the hold, so each agent
 * draws its own and every daemon computes the same one for it.
 */
export function resumeAt(until: number, agent: string, spreadMs: number): number {
  if (spreadMs <= 0) return until
  return until + (fnv1a(`${agent}|${until}`) % Math.floor(spreadMs))
}

function fnv1a(text: string): number {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i)
    h = Math.imul(h, 0x01000193) >>> 0
  }
  return h
}
