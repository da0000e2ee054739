// The peers a daemon was connected to, remembered in its data dir so that a
// restart redials them: a daemon started without --peers (or whose bootstrap
// peers are gone) is otherwise found again only by peers short of
// connections, and only if they still have its address. Bounded: at most
// MAX_REMEMBERED peers (the most recently connected first), MAX_ADDRS
// addresses each, as their heartbeats gave them.
//
// Saved a few seconds after a new connection, every SAVE_EVERY_MS while
// connected, and at the stop, so a daemon killed with SIGKILL remembers
// nearly as much as one stopped cleanly. At start, every remembered peer is
// handed to the dialer as a peer learned from presence (PeerDialer.remember):
// it dials them while short of connections, with its usual backoff.
//
// The mode (agentd --remembered-peers): on (the default) as above; off, for a
// restart that stays alone: nothing is redialled and nothing saved (the list
// on disk is left as it was, for a later start with on); forget: the list is
// cleared at start, then the peers of this run are remembered as with on.
import type { StateStore } from '../store/index.js'
import type { Logger } from '../logger.js'

/** peers remembered at most */
export const MAX_REMEMBERED = 16
/** addresses kept per peer, and the longest one kept */
const MAX_ADDRS = 8
const MAX_ADDR_CHARS = 256
/** where the list is kept in the state store */
export const REMEMBERED_PEERS_KEY = 'mesh/remembered-peers'
const KEY = REMEMBERED_PEERS_KEY
/** a save this long after a new connection (several connecting at once make one save) */
const SAVE_AFTER_CONNECT_MS = 2000
const SAVE_EVERY_MS = 60_000

export interface RememberedPeer {
  peer: string
  addrs: string[]
}

/**
 * What a remembered list holds after `connected` (most recent first) are added in front of `earlier`: bounded, without duplicates or bad
 * records.
 */
export function mergeRemembered(connected: readonly RememberedPeer[], earlier: readonly unknown[], max = MAX_REMEMBERED): RememberedPeer[] {
  const out: RememberedPeer[] = []
  const seen = new Set<string>()
  for (const p of [...connected, ...earlier]) {
    if (out.length >= max) break
    const r = rememberedPeer(p)
    if (r === undefined || seen.has(r.peer)) continue
    seen.add(r.peer)
    out.push(r)
  }
  return out
}

/** A record as it may be kept (undefined: not one): a peer id and its dialable addresses, bounded. */
function rememberedPeer(p: unknown): RememberedPeer | undefined {
  if (typeof p !== 'object' || p === null) return undefined
  const { peer, addrs } = p as Record<string, unknown>
  if (typeof peer !== 'string' || peer.length === 0 || peer.length > 128 || !Array.isArray(addrs)) return undefined
  const kept = addrs.filter((a): a is string => typeof a === 'string' && a.length > 0 && a.length <= MAX_ADDR_CHARS).slice(0, MAX_ADDRS)
  return kept.length === 0 ? undefined : { peer, addrs: kept }
}

/** What a daemon does with the peers of its last run (see the head of this file). */
export type RememberedPeersMode = 'on' | 'off' | 'forget'
export const REMEMBERED_PEERS_MODES: readonly RememberedPeersMode[] = ['on', 'off', 'forget']

export interface RememberedPeersInit {
  state: StateStore
  /** default on */
  mode?: RememberedPeersMode
  /** the peers connected now, most recently connected first, with the addresses they announced (none known: left out) */
  connected: () => RememberedPeer[]
  /** hands a remembered peer to the dialer */
  dial: (peer: string, addrs: string[]) => void
  logger: Logger
}

export class RememberedPeers {
  private readonly init: RememberedPeersInit
  private list: RememberedPeer[] = []
  private soon?: NodeJS.Timeout
  private every?: NodeJS.Timeout
  private saving: Promise<void> = Promise.resolve()

  constructor(init: RememberedPeersInit) {
    this.init = init
  }

  /** Loads the list and hands every peer in it to the dialer (per the mode). A list that does not read is ignored. */
  async start(): Promise<void> {
    const mode = this.init.mode ?? 'on'
    if (mode === 'off') {
      this.init.logger.info('remembered peers off: none redialled, none saved')
      return
    }
    let saved: unknown
    if (mode === 'forget') {
      try {
        await this.init.state.del(KEY)
      } catch (err) {
        this.init.logger.warn({ err }, 'the remembered peers were not forgotten')
      }
      this.init.logger.info('the peers of the last run forgotten')
    } else {
      try {
        saved = await this.init.state.get(KEY)
      } catch (err) {
        this.init.logger.warn({ err }, 'the remembered peers do not read: none redialled')
      }
    }
    this.list = mergeRemembered([], Array.isArray(saved) ? saved : [])
    for (const p of this.list) this.init.dial(p.peer, p.addrs)
    if (this.list.length > 0) this.init.logger.info({ peers: this.list.length }, 'redialling the peers of the last run')
    this.every = setInterval(() => {
      this.save()
    }, SAVE_EVERY_MS)
    this.every.unref()
  }

  /** A new connection: saved a little later. */
  connected(): void {
    if (this.soon !== undefined || this.every === undefined) return
    this.soon = setTimeout(() => {
      this.soon = undefined
      this.save()
    }, SAVE_AFTER_CONNECT_MS)
    this.soon.unref()
  }

  /** Saves the connected peers in front of those remembered (nothing when none is connected: the list stays as it was). */
  private save(): void {
    const connected = this.init.connected()
    if (connected.length === 0) return
    const next = mergeRemembered(connected, this.list)
    if (JSON.stringify(next) === JSON.stringify(this.list)) return
    this.list = next
    this.saving = this.saving
      .then(async () => {
        await this.init.state.put(KEY, next)
      })
      .catch(err => {
        this.init.logger.warn({ err }, 'the connected peers were not remembered')
      })
  }

  /** Saves once more and stops (before the store closes). */
  async stop(): Promise<void> {
    clearTimeout(this.soon)
    clearInterval(this.every)
    this.soon = undefined
    if (this.every === undefined) return
    this.every = undefined
    this.save()
    await this.saving
  }
}
