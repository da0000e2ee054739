// What the TCP mesh benchmark's nodes did in a window, beside their CPU: the
// connections each held, and (with --counts, which starts every agentd with
// a metrics endpoint) the gossip messages each received and sent by kind,
// anti-entropy rounds and libp2p bytes. The figures say where a difference in
// CPU comes from: more messages, or more copies of each.
import type { Agency } from '../../src/client/agency.js'

/** A metrics scrape: sample name with its labels as written, to value. */
export type Scrape = Map<string, number>

export async function scrape(addr: string): Promise<Scrape> {
  const out: Scrape = new Map()
  const res = await fetch(`http://${addr}/metrics`)
  for (const line of (await res.text()).split('\n')) {
    if (line === '' || line.startsWith('#')) continue
    const at = line.lastIndexOf(' ')
    out.set(line.slice(0, at), Number(line.slice(at + 1)))
  }
  return out
}

/** The counts of one node over a window (the difference of two scrapes). */
interface Counted {
  received: Map<string, number>
  sent: Map<string, number>
  syncRounds: number
  bytesSent: number
  opened: number
}

const label = (sample: string, name: string): string | undefined => new RegExp(`${name}="([^"]*)"`).exec(sample)?.[1]

function counted(a: Scrape, b: Scrape): Counted {
  const c: Counted = { received: new Map(), sent: new Map(), syncRounds: 0, bytesSent: 0, opened: 0 }
  for (const [k, v1] of b) {
    const d = v1 - (a.get(k) ?? 0)
    if (k.startsWith('agentd_gossip_messages_received_total{')) {
      const key = `${label(k, 'kind') ?? '?'} ${label(k, 'verdict') ?? '?'}`
      c.received.set(key, (c.received.get(key) ?? 0) + d)
    } else if (k.startsWith('agentd_gossip_messages_sent_total{')) {
      const key = label(k, 'kind') ?? '?'
      c.sent.set(key, (c.sent.get(key) ?? 0) + d)
    } else if (k === 'agentd_sync_rounds_total') c.syncRounds += d
    else if (k.startsWith('agentd_libp2p_connections_opened_total')) c.opened += d
    else if (k.startsWith('agentd_libp2p_transfer_bytes_total{') && label(k, 'protocol') === 'all' && label(k, 'direction') === 'sent')
      c.bytesSent += d
  }
  return c
}

/** One line per window: per node and second, what was received (kind and verdict, non-zero only) and sent. */
export function countsLine(window: string, before: Scrape[], after: Scrape[], seconds: number): string {
  const n = before.length
  const total: Counted = { received: new Map(), sent: new Map(), syncRounds: 0, bytesSent: 0, opened: 0 }
  for (let i = 0; i < n; i++) {
    const c = counted(before[i], after[i])
    for (const [k, v] of c.received) total.received.set(k, (total.received.get(k) ?? 0) + v)
    for (const [k, v] of c.sent) total.sent.set(k, (total.sent.get(k) ?? 0) + v)
    total.syncRounds += c.syncRounds
    total.bytesSent += c.bytesSent
    total.opened += c.opened
  }
  const rate = (v: number): string => (v / n / seconds).toFixed(2)
  const list = (m: Map<string, number>): string =>
    [...m]
      .filter(([, v]) => v > 0)
      .map(([k, v]) => `${k} ${rate(v)}`)
      .join(', ') || 'none'
  return `${window}, per daemon per second: received ${list(total.received)}; sent ${list(total.sent)}; sync rounds ${rate(total.syncRounds)}; connections opened ${rate(total.opened)}; libp2p bytes sent ${rate(total.bytesSent)}`
}

/** The mean of the peers each daemon is connected to now, as its status says. */
export async function agencyConnections(clients: Agency[]): Promise<number> {
  const counts = await Promise.all(
    clients.map(async c => ((await c.call(x => x.getStatus, {})) as { peersConnected: number }).peersConnected)
  )
  return counts.reduce((a, b) => a + b, 0) / counts.length
}
