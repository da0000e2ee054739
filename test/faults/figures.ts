// Figures from the histories of a campaign, for SECURITY.md's "Disk and
// clock": how long claims took to be answered HELD with a host's wall clock
// jumped and without, and what happened to a daemon whose disk filled.
import { eventsOf, pairsOf, type HistoryData } from '../../src/sim/faults/history.js'

export class CampaignFigures {
  readonly heldMs = { jumped: [] as number[], onTime: [] as number[] }
  readonly disk = { fills: 0, exits: [] as number[], survived: 0, calls: new Map<string, number>() }
  clockJumps = 0
  largestJumpMs = 0

  add(h: HistoryData): void {
    const nemesis = eventsOf(h, 'nemesis')
    const offsetAt = (node: string, t: number): number => {
      let off = 0
      for (const e of nemesis) if (e.time <= t && e.f === 'clock' && e.node === node) off = e.offsetMs ?? 0
      return off
    }
    for (const e of nemesis) {
      if (e.f === 'clock' && (e.offsetMs ?? 0) !== 0) {
        this.clockJumps++
        this.largestJumpMs = Math.max(this.largestJumpMs, Math.abs(e.offsetMs ?? 0))
      }
    }
    const pairs = pairsOf(h)
    for (const { invoke: i, complete: c } of pairs) {
      if (i.f !== 'claim' || c.type !== 'ok' || c.outcome !== 'HELD' || i.retry === true) continue
      ;(offsetAt(i.node, i.time) !== 0 ? this.heldMs.jumped : this.heldMs.onTime).push(c.time - i.time)
    }
    for (const full of nemesis.filter(e => e.f === 'disk-full')) {
      this.disk.fills++
      const free = nemesis.find(e => e.f === 'disk-free' && e.node === full.node && e.time > full.time)?.time ?? Infinity
      const exit = nemesis.find(e => e.f === 'crash' && e.node === full.node && e.time > full.time && e.time < free)
      if (exit !== undefined) this.disk.exits.push(exit.time - full.time)
      else this.disk.survived++
      const end = exit?.time ?? free
      for (const { invoke: i, complete: c } of pairs) {
        if (i.node !== full.node || i.time < full.time || i.time > end) continue
        const key = `${i.f} ${c.type}${c.type !== 'ok' && c.reason !== undefined ? `: ${c.reason.replace(/[0-9a-f]{12,}/g, '…').slice(0, 90)}` : ''}`
        this.disk.calls.set(key, (this.disk.calls.get(key) ?? 0) + 1)
      }
    }
  }

  lines(): string[] {
    const q = (xs: number[], p: number): number =>
      xs.length === 0 ? NaN : [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))]
    const dist = (xs: number[]): string =>
      `n=${xs.length} p50=${Math.round(q(xs, 0.5))} ms p90=${Math.round(q(xs, 0.9))} ms max=${Math.round(Math.max(...xs))} ms`
    return [
      `claim to HELD, host's wall clock on time: ${dist(this.heldMs.onTime)}`,
      `claim to HELD, host's wall clock jumped: ${dist(this.heldMs.jumped)} (${this.clockJumps} jumps, up to ${Math.round(this.largestJumpMs / 1000)} s)`,
      `full disks: ${this.disk.fills}; the daemon stopped in ${this.disk.exits.length} (after ${this.disk.exits.map(x => Math.round(x)).join(', ')} ms), kept serving until room came back in ${this.disk.survived}`,
      ...[...this.disk.calls].map(([k, v]) => `  calls while full: ${v}× ${k}`)
    ]
  }
}
