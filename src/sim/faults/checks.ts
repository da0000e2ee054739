// The checks of a fault run, over its history and the replicas' final state:
//
// (a) no two agents are told HELD for the same task and epoch, unless a fault
//     separated them while they settled (a partition between them, one of
//     them down, or a claim between them lost or cut); and then, once healed,
//     exactly one keeps it (the holder rule's claim) and every other is told.
//     And no HELD comes sooner than the shortest settle window after its
//     claim was written.
// (b) no superseded claim's work reaches the shared branch: every landed
//     integration was HELD, not told lost before it landed, and no work of
//     a higher epoch (or of another agent at its epoch) had landed before.
// (c) every acknowledged entry is at every live replica after the heal.
// (d) every acknowledged direct message is delivered exactly once.
// (e) all replicas end with the same entries and the same board.

import { eventsOf, pairsOf, type CompleteEvent, type DropEvent, type HistoryData, type NemesisEvent } from './history.js'
import type { RunRecord } from './run-record.js'

export type CheckName = 'a' | 'b' | 'c' | 'd' | 'e'

export interface Violation {
  check: CheckName
  text: string
}

export interface CheckOptions {
  /** no claim may be HELD sooner than this after it was written (the settle window's floor) */
  minSettleMs: number
}

export function checkRun(run: RunRecord, opts: CheckOptions): Violation[] {
  const all = [...checkHeld(run, opts), ...checkLanded(run), ...checkEntries(run), ...checkMessages(run), ...checkConverged(run)]
  // A claim and its retry are one claim: say each thing once.
  const seen = new Set<string>()
  return all.filter(v => !seen.has(v.text) && seen.add(v.text) !== undefined)
}

interface Held {
  node: string
  task: string
  epoch: number
  claimedAt: number
  at: number
}

/** (a) */
function checkHeld(run: RunRecord, opts: CheckOptions): Violation[] {
  const out: Violation[] = []
  const h = run.history
  const written = new Map<string, number>()
  for (const e of eventsOf(h, 'append')) if (e.entryKind === 'claim') written.set(`${e.node} ${e.task ?? ''}@${e.epoch ?? 0}`, e.time)
  const held = new Map<string, Held[]>()
  for (const { complete: c, invoke: i } of pairsOf(h)) {
    if (i.f !== 'claim' || c.type !== 'ok' || c.outcome !== 'HELD' || i.task === undefined || c.epoch === undefined) continue
    const claimedAt = written.get(`${i.node} ${i.task}@${c.epoch}`)
    if (claimedAt === undefined) {
      out.push({ check: 'a', text: `${i.node} was told HELD for ${i.task}@${c.epoch} at ${ms(c.time)} without having written a claim` })
      continue
    }
    if (c.time - claimedAt < opts.minSettleMs) {
      out.push({
        check: 'a',
        text: `${i.node} was told HELD for ${i.task}@${c.epoch} at ${ms(c.time)}, ${ms(c.time - claimedAt)} after its claim: sooner than any settle window (${opts.minSettleMs} ms)`
      })
    }
    const key = `${i.task}@${c.epoch}`
    const list = held.get(key) ?? []
    if (!list.some(x => x.node === i.node)) list.push({ node: i.node, task: i.task, epoch: c.epoch, claimedAt, at: c.time })
    held.set(key, list)
  }
  const separation = new Separation(h)
  for (const [key, list] of held) {
    if (list.length < 2) continue
    for (let x = 0; x < list.length; x++) {
      for (let y = x + 1; y < list.length; y++) {
        const [p, q] = [list[x], list[y]]
        const from = Math.min(p.claimedAt, q.claimedAt)
        const to = Math.max(p.at, q.at)
        if (!separation.between(p.node, q.node, from, to)) {
          out.push({
            check: 'a',
            text: `${p.node} and ${q.node} were both told HELD for ${key} (at ${ms(p.at)} and ${ms(q.at)}) with no fault between them from ${ms(from)}`
          })
        }
      }
    }
    out.push(...keptByOne(run, key, list, opts, separation))
  }
  return out
}

/**
 * After the heal, of several told HELD for one task and epoch, only the claim
 * the holder rule picks on the converged board keeps it; every other holder
 * is told (a notice, or an answer or a notice about its claim of the task at a later epoch),
 * unless it gave its claim back itself. Finishing the task is no excuse: a
 * done counts only from the holder rule's claim.
 */
function keptByOne(run: RunRecord, key: string, list: Held[], opts: CheckOptions, separation: Separation): Violation[] {
  const [task, epoch] = [list[0].task, list[0].epoch]
  const winner = run.winners.get(key)
  const notices = eventsOf(run.history, 'notice').filter(n => n.task === task && n.epoch === epoch)
  const gaveBack = new Set(
    pairsOf(run.history)
      .filter(({ invoke: i, complete: c }) => i.f === 'release' && i.task === task && i.epoch === epoch && c.type === 'ok')
      .map(({ invoke: i }) => i.node)
  )
  // An agent that claimed the task again was told about its later claim: an answer, or a notice.
  const later = [
    ...pairsOf(run.history)
      .filter(({ invoke: i, complete: c }) => i.f === 'claim' && i.task === task && c.type === 'ok' && (c.epoch ?? 0) > epoch)
      .map(({ invoke: i }) => i.node),
    ...eventsOf(run.history, 'notice')
      .filter(n => n.task === task && n.epoch > epoch)
      .map(n => n.node)
  ]
  const out: Violation[] = []
  for (const m of list) {
    const told = [...notices.filter(n => n.node === m.node), ...later.filter(n => n === m.node).map(() => ({ reason: 'claimed again' }))]
    if (m.node === winner) {
      // Told it was outbid by a claim given back a settle window or more before (and nothing lost in
      // between): a loss the daemon should have seen was none. A release still in flight is no fault.
      const released = (n: string): number | undefined =>
        eventsOf(run.history, 'append').find(e => e.entryKind === 'release' && e.node === n && e.task === task && e.epoch === epoch)?.time
      const wrong = notices
        .filter(n => n.node === m.node && n.reason === 'outbid')
        .find(n => {
          if (n.winner === undefined) return true
          const r = released(n.winner)
          return r !== undefined && r <= n.time - opts.minSettleMs && !separation.between(n.winner, m.node, r, n.time)
        })
      if (wrong !== undefined)
        out.push({
          check: 'a',
          text: `${m.node} holds ${key} by the holder rule, but was told at ${ms(wrong.time)} that ${wrong.winner ?? 'someone'} outbid it, whose claim was given back at ${ms(released(wrong.winner ?? '') ?? 0)}`
        })
    } else if (told.length === 0 && !gaveBack.has(m.node)) {
      out.push({
        check: 'a',
        text: `${m.node} was told HELD for ${key}; after the heal ${winner ?? 'nobody'} keeps it by the holder rule, and ${m.node} was never told`
      })
    }
  }
  return out
}

/** Whether a fault stood between two nodes in a span of time. */
class Separation {
  private readonly nemesis: NemesisEvent[]
  private readonly drops: DropEvent[]

  constructor(h: HistoryData) {
    this.nemesis = eventsOf(h, 'nemesis')
    this.drops = eventsOf(h, 'drop')
  }

  between(a: string, b: string, from: number, to: number): boolean {
    if (this.drops.some(d => d.time >= from && d.time <= to && ((d.from === a && d.to === b) || (d.from === b && d.to === a)))) return true
    // Down at some point in the span: it went down in it, or was down when it began.
    for (const n of [a, b]) if (this.downDuring(n, from, to)) return true
    return this.apartDuring(a, b, from, to)
  }

  /** Down (crashed or paused) or on a degraded link at some point in the span. */
  private downDuring(node: string, from: number, to: number): boolean {
    const spans: Array<[NemesisEvent['f'], NemesisEvent['f']]> = [
      ['crash', 'restart'],
      ['pause', 'resume'],
      ['slow', 'fast']
    ]
    for (const [start, end] of spans) {
      let down = false
      for (const e of this.nemesis) {
        if (e.time > to) break
        if (e.node !== node) continue
        if (e.f === start) {
          if (e.time >= from) return true
          down = true
        }
        if (e.f === end) {
          if (down && e.time >= from) return true
          down = false
        }
      }
      if (down) return true
    }
    return false
  }

  private apartDuring(a: string, b: string, from: number, to: number): boolean {
    let groups: string[][] | undefined
    const apart = (): boolean => groups !== undefined && !together(groups, a, b)
    for (const e of this.nemesis) {
      if (e.time > to) break
      if (e.f === 'partition') groups = e.groups
      else if (e.f === 'heal' || e.f === 'quiet') groups = undefined
      else continue
      if (e.time >= from && apart()) return true
    }
    return apart()
  }
}

/** Whether two nodes share a group; nodes named in none form one more group. */
function together(groups: string[][], a: string, b: string): boolean {
  const of = (n: string): number[] => {
    const gs = groups.flatMap((g, i) => (g.includes(n) ? [i] : []))
    return gs.length > 0 ? gs : [-1]
  }
  const ga = of(a)
  return of(b).some(g => ga.includes(g))
}

/** (b) */
function checkLanded(run: RunRecord): Violation[] {
  const out: Violation[] = []
  const pairs = pairsOf(run.history)
  const heldAt = (node: string, task: string, epoch: number, before: number): boolean =>
    pairs.some(
      ({ invoke: i, complete: c }) =>
        i.node === node &&
        i.f === 'claim' &&
        i.task === task &&
        c.type === 'ok' &&
        c.outcome === 'HELD' &&
        c.epoch === epoch &&
        c.time <= before
    )
  const lostAt = (
    node: string,
    task: string,
    epoch: number,
    before: number
  ): CompleteEvent | { time: number; reason: string } | undefined =>
    eventsOf(run.history, 'notice').find(n => n.node === node && n.task === task && n.epoch === epoch && n.time < before) ??
    pairs.find(
      ({ invoke: i, complete: c }) =>
        i.node === node &&
        i.f === 'claim' &&
        i.task === task &&
        c.type === 'ok' &&
        c.outcome === 'LOST' &&
        c.epoch === epoch &&
        c.time < before
    )?.complete
  run.branch.landed.forEach((l, i) => {
    const what = `${l.agent}'s work on ${l.task}@${l.epoch} landed at ${ms(l.time)}`
    if (!heldAt(l.agent, l.task, l.epoch, l.time)) out.push({ check: 'b', text: `${what} though it was never told HELD for it` })
    const lost = lostAt(l.agent, l.task, l.epoch, l.time)
    if (lost !== undefined)
      out.push({ check: 'b', text: `${what} though it had been told at ${ms(lost.time)} that the claim was lost (${lost.reason ?? ''})` })
    const earlier = run.branch.landed
      .slice(0, i)
      .find(e => e.task === l.task && (e.epoch > l.epoch || (e.epoch === l.epoch && e.agent !== l.agent)))
    if (earlier !== undefined) out.push({ check: 'b', text: `${what} after ${earlier.agent}'s work at epoch ${earlier.epoch} had landed` })
  })
  return out
}

/** (c) */
function checkEntries(run: RunRecord): Violation[] {
  const out: Violation[] = []
  const acked = eventsOf(run.history, 'append')
  for (const r of run.replicas) {
    if (!r.up) continue
    const has = new Set(r.entryIds)
    const missing = acked.filter(e => !has.has(e.id))
    if (missing.length > 0)
      out.push({
        check: 'c',
        text: `${r.node} lacks ${missing.length} acknowledged entries after the heal, e.g. ${missing[0].id} (${missing[0].entryKind} by ${missing[0].node} at ${ms(missing[0].time)})`
      })
  }
  return out
}

/** (d) */
function checkMessages(run: RunRecord): Violation[] {
  const out: Violation[] = []
  const deliveries = new Map<string, number>()
  for (const d of eventsOf(run.history, 'deliver')) deliveries.set(`${d.node} ${d.id}`, (deliveries.get(`${d.node} ${d.id}`) ?? 0) + 1)
  const sent = pairsOf(run.history).filter(({ invoke: i, complete: c }) => i.f === 'send' && c.type === 'ok')
  const known = new Set<string>()
  for (const { invoke: i, complete: c } of sent) {
    const key = `${i.to ?? ''} ${c.id ?? ''}`
    known.add(key)
    const n = deliveries.get(key) ?? 0
    if (n !== 1)
      out.push({
        check: 'd',
        text: `message ${c.id ?? ''} from ${i.node} to ${i.to ?? ''}, acknowledged at ${ms(c.time)}, was delivered ${n} times`
      })
  }
  // A send whose call was cut off (info) may have been stored: at most one delivery each, from that sender to that recipient.
  const unknown = new Map<string, number>()
  for (const { invoke: i, complete: c } of pairsOf(run.history))
    if (i.f === 'send' && c.type === 'info') unknown.set(`${i.node} ${i.to ?? ''}`, (unknown.get(`${i.node} ${i.to ?? ''}`) ?? 0) + 1)
  for (const d of eventsOf(run.history, 'deliver')) {
    const key = `${d.node} ${d.id}`
    if (known.has(key)) continue
    const left = unknown.get(`${d.from} ${d.node}`) ?? 0
    if (left > 0) {
      unknown.set(`${d.from} ${d.node}`, left - 1)
      continue
    }
    out.push({ check: 'd', text: `a message no one sent reached an inbox: ${key}` })
  }
  return out
}

/** (e) */
function checkConverged(run: RunRecord): Violation[] {
  const live = run.replicas.filter(r => r.up)
  if (live.length < run.replicas.length)
    return [{ check: 'e', text: `${run.replicas.length - live.length} replicas are not up at the end` }]
  const [first, ...rest] = live
  const out: Violation[] = []
  for (const r of rest) {
    if (r.entryIds.join() !== first.entryIds.join())
      out.push({ check: 'e', text: `${r.node} holds ${r.entryIds.length} entries, ${first.node} ${first.entryIds.length}: they differ` })
    const i = Array.from({ length: Math.max(r.board.length, first.board.length) }, (_, k) => k).find(k => r.board[k] !== first.board[k])
    if (i !== undefined)
      out.push({
        check: 'e',
        text: `${r.node}'s board differs from ${first.node}'s: "${r.board[i] ?? '(none)'}" against "${first.board[i] ?? '(none)'}"`
      })
  }
  return out
}

function ms(t: number): string {
  return `${Math.round(t)} ms`
}
