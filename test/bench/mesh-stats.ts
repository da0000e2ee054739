// Shared pieces of the mesh benchmark: what one setup reports, percentiles,
// and CPU / RSS probes for this process and for child processes (/proc).
import { readFile } from 'node:fs/promises'

export interface VisibilityRecord {
  /** what was published: claim, finding, raw */
  kind: string
  /** ms from the publish call to acceptance at each peer that saw it */
  delays: number[]
  /** peers that had not seen it when the wait ended */
  missing: number
}

export interface SetupResult {
  setup: string
  system: 'agency' | 'raw gossipsub'
  nodes: number
  /** published messages measured */
  published: number
  /** ms until the last peer saw it, per message that reached every peer */
  allPeers: { p50: number; p99: number; max: number } | null
  /** ms per (message, peer) delivery */
  perPeer: { p50: number; p99: number } | null
  /** messages some peer never saw within the wait */
  incomplete: number
  payloadBytes: number
  /** share of one core per node while idle (heartbeats, anti-entropy, gossipsub upkeep) */
  idleCpuPerNode: number
  /** share of one core per node while publishing */
  busyCpuPerNode: number
  /** bytes each node sent per second while idle, by the kernel's TCP counters (hosted setup only) */
  idleBytesPerNodePerSecond?: number
  rssPerNodeBytes: number
  startSeconds: number
  /**
   * CPU (ms, all nodes) the publishing window cost beyond idling, per
   * (message, peer) delivery: what a loaded machine's wall-clock figures
   * cannot show (TCP setup only)
   */
  cpuPerDeliveryMs?: number
  /**
   * TCP setup: gossip alone, from the author sending the message (agency:
   * placing its entry, after its durable write) until each peer took it in,
   * both by the nodes' clocks: the API call and the author's write left out
   */
  gossipOnly?: Pick<SetupResult, 'allPeers' | 'perPeer'>
  /** agency: from the publish call until the author answered it (its entry gossiped and durable) */
  ackMs?: { p50: number; p99: number }
  note?: string
}

export function percentile(values: readonly number[], q: number): number {
  const s = [...values].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))]
}

export function summarize(
  records: readonly VisibilityRecord[],
  peers: number
): Pick<SetupResult, 'allPeers' | 'perPeer' | 'incomplete' | 'published'> {
  const complete = records.filter(r => r.missing === 0 && r.delays.length >= peers)
  const lasts = complete.map(r => Math.max(...r.delays))
  const all = records.flatMap(r => r.delays)
  return {
    published: records.length,
    allPeers: lasts.length === 0 ? null : { p50: percentile(lasts, 0.5), p99: percentile(lasts, 0.99), max: Math.max(...lasts) },
    perPeer: all.length === 0 ? null : { p50: percentile(all, 0.5), p99: percentile(all, 0.99) },
    incomplete: records.length - complete.length
  }
}

/** CPU seconds (user + system) this process has used. */
export function ownCpuSeconds(): number {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1e6
}

/** CPU seconds a child process has used, from /proc/<pid>/stat (Linux, 100 ticks per second). */
export async function childCpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) / 100
}

export async function childRssBytes(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8')
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? NaN) * 1024
}

export function formatMs(ms: number | undefined): string {
  if (ms === undefined) return '—'
  return ms < 10 ? ms.toFixed(1) : ms.toFixed(0)
}

export function resultsMarkdown(results: readonly SetupResult[]): string {
  const lines = [
    "| setup | system | nodes | visible at all peers p50 / p99 (ms) | per peer p50 / p99 (ms) | gossip alone: from the author's send, p50 / p99 (ms) | incomplete | payload | idle CPU / node | idle bytes sent / node / s | busy CPU / node | RSS / node | start (s) |",
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|'
  ]
  for (const r of results) {
    if (r.published === 0) {
      lines.push(`| ${r.setup} | ${r.system} | ${r.nodes} | — | — | — | — | — | — | — | — | — | — |`)
      continue
    }
    const all = r.allPeers === null ? '—' : `${formatMs(r.allPeers.p50)} / ${formatMs(r.allPeers.p99)}`
    const per = r.perPeer === null ? '—' : `${formatMs(r.perPeer.p50)} / ${formatMs(r.perPeer.p99)}`
    const spans = (x: SetupResult['gossipOnly']): string =>
      x?.allPeers == null ? '—' : `${formatMs(x.allPeers.p50)} / ${formatMs(x.allPeers.p99)}`
    lines.push(
      `| ${r.setup} | ${r.system} | ${r.nodes} | ${all} | ${per} | ${spans(r.gossipOnly)} | ${r.incomplete} of ${r.published} | ${r.payloadBytes} B | ${(r.idleCpuPerNode * 100).toFixed(2)} % | ${r.idleBytesPerNodePerSecond === undefined ? '—' : r.idleBytesPerNodePerSecond.toFixed(0)} | ${(r.busyCpuPerNode * 100).toFixed(1)} % | ${(r.rssPerNodeBytes / 1024 / 1024).toFixed(1)} MiB | ${r.startSeconds.toFixed(0)} |`
    )
  }
  return lines.join('\n') + '\n'
}

/** agency ÷ raw gossipsub, per setup. */
export function ratioMarkdown(results: readonly SetupResult[]): string {
  const lines = [
    '| setup | nodes | all peers p50 ratio | all peers p99 ratio | gossip alone: p50 / p99 ratio | idle CPU ratio | idle bytes ratio | CPU per delivery ratio | RSS ratio |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|'
  ]
  for (const a of results.filter(r => r.system === 'agency')) {
    const raw = results.find(r => r.system === 'raw gossipsub' && r.setup === a.setup && r.nodes === a.nodes)
    if (raw === undefined || a.published === 0 || raw.published === 0) continue
    const ratio = (x: number | undefined, y: number | undefined): string =>
      x === undefined || y === undefined || y === 0 ? '—' : `${(x / y).toFixed(1)}×`
    const both = (x: SetupResult['gossipOnly'], y: SetupResult['gossipOnly']): string =>
      x === undefined || y === undefined ? '—' : `${ratio(x.allPeers?.p50, y.allPeers?.p50)} / ${ratio(x.allPeers?.p99, y.allPeers?.p99)}`
    lines.push(
      `| ${a.setup} | ${a.nodes} | ${ratio(a.allPeers?.p50, raw.allPeers?.p50)} | ${ratio(a.allPeers?.p99, raw.allPeers?.p99)} | ${both(a.gossipOnly, raw.gossipOnly)} | ${ratio(a.idleCpuPerNode, raw.idleCpuPerNode)} | ${ratio(a.idleBytesPerNodePerSecond, raw.idleBytesPerNodePerSecond)} | ${ratio(a.cpuPerDeliveryMs, raw.cpuPerDeliveryMs)} | ${ratio(a.rssPerNodeBytes, raw.rssPerNodeBytes)} |`
    )
  }
  return lines.join('\n') + '\n'
}
