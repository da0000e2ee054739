// The end of a real run, read as the checks want it: each replica's log and
// board through its API, the holder rule's winners folded from a log with the
// core's claim ledger, the integrations that landed from the shared branch's
// history (the merge trailers say under which claim), the messages in each
// inbox. Where the real world does not see what the simulator sees, the
// record takes the bound that cannot raise a false alarm: a claim was written
// no sooner than the call that made it was invoked, and an integration landed
// no sooner than its call was invoked.
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import type { Agency } from '../../src/client/agency.js'
import { ClaimLedger } from '../../src/core/board/claim-ledger.js'
import type { AgencyClient, InboxMessage, LogEntry } from '../../src/gen/agency/v1/api.js'
import { Claim, Release } from '../../src/gen/agency/v1/log.js'
import {
  eventsOf,
  pairsOf,
  type HistoryData,
  type HistoryEvent,
  type InvokeEvent,
  type CompleteEvent
} from '../../src/sim/faults/history.js'
import type { ReplicaState, RunRecord } from '../../src/sim/faults/run-record.js'
import type { Landed } from '../../src/sim/faults/shared-branch.js'

const run = promisify(execFile)

export interface ReplicaRead {
  node: string
  peerId: string
  up: boolean
  log: LogEntry[]
  board: string[]
  inbox: InboxMessage[]
}

export async function readLog(api: Agency): Promise<LogEntry[]> {
  const out: LogEntry[] = []
  for await (const e of api.stream((c: AgencyClient, m) => c.watchLog({ after: 0, follow: false }, m))) out.push(e)
  return out
}

export async function readReplica(node: string, peerId: string, api: Agency, nameOf: (peer: string) => string): Promise<ReplicaRead> {
  const log = await readLog(api)
  const { tasks } = await api.call((c: AgencyClient) => c.listTasks, { state: '' })
  const { messages } = await api.call((c: AgencyClient) => c.readInbox, { after: 0, limit: 10_000, all: true, peek: true })
  const board = tasks
    .map(t => `${t.id} ${t.state === 'expired' ? 'claimed' : t.state} ${t.holder !== '' ? nameOf(t.holder) : '-'}@${t.epoch}`)
    .sort()
  return { node, peerId, up: true, log, board, inbox: messages }
}

/** Integrations on the shared branch, oldest first: task, epoch and agent from each merge's trailers. */
export async function readLandings(
  gitDir: string,
  branch: string
): Promise<Array<{ task: string; epoch: number; agent: string; commitMs: number }>> {
  const r = await run(
    'git',
    [
      '--git-dir',
      gitDir,
      'log',
      '--first-parent',
      '--reverse',
      `--format=%ct%x01%(trailers:key=Agency-Task,valueonly,separator=%x02)%x01%(trailers:key=Agency-Agent,valueonly,separator=%x02)%x03`,
      branch
    ],
    { maxBuffer: 64 * 1024 * 1024 }
  )
  const out: Array<{ task: string; epoch: number; agent: string; commitMs: number }> = []
  for (const rec of r.stdout.split('\u0003')) {
    const [ct, tasks, agents] = rec.trim().split('\u0001')
    if (tasks === undefined || tasks.trim() === '') continue
    const agent = (agents ?? '').split('\u0002')[0].trim()
    for (const t of tasks.split('\u0002')) {
      const m = /^(.+)@(\d+)$/.exec(t.trim())
      if (m != null) out.push({ task: m[1], epoch: Number(m[2]), agent, commitMs: Number(ct) * 1000 })
    }
  }
  return out
}

/** "task@epoch" -> the winner's node, by the holder rule over one replica's log. */
export function winnersOf(log: readonly LogEntry[], nameOf: (peer: string) => string): Map<string, string> {
  const ledger = new ClaimLedger()
  const claims: Array<{ task: string; epoch: number }> = []
  for (const e of log) {
    const h = { id: e.id, author: e.author, seq: Number(e.seq), lamport: Number(e.lamport), time: Number(e.time) }
    if (e.kind === 'claim') {
      const c = Claim.fromJSON(JSON.parse(e.bodyJson))
      if (ledger.addClaim(h, c)) claims.push({ task: c.task, epoch: c.epoch })
    } else if (e.kind === 'release') {
      ledger.addRelease(h, Release.fromJSON(JSON.parse(e.bodyJson)))
    }
  }
  const out = new Map<string, string>()
  for (const { task, epoch } of claims) {
    const w = ledger.winnerAt(task, epoch)
    if (w !== undefined) out.set(`${task}@${epoch}`, nameOf(w.author))
  }
  return out
}

interface Op {
  invoke: InvokeEvent
  complete?: CompleteEvent
}

/**
 * When `node`'s claim of `task` at `epoch` was written, at the latest bound
 * the client knows: the invoke of the first call in the run of claim calls
 * that ended with the HELD answer at that epoch (a call cut off by a crash
 * may have written it; a call answered at another epoch, or a release, ends
 * the run).
 */
function claimWrittenAt(ops: Op[], releases: InvokeEvent[], epoch: number): number | undefined {
  const i = ops.findIndex(o => o.complete?.type === 'ok' && o.complete.outcome === 'HELD' && o.complete.epoch === epoch)
  if (i < 0) return undefined
  let first = i
  for (let j = i - 1; j >= 0; j--) {
    const c = ops[j].complete
    if (c?.type === 'ok' && c.epoch !== epoch) break
    if (releases.some(r => r.time > ops[j].invoke.time && r.time < ops[first].invoke.time)) break
    first = j
  }
  return ops[first].invoke.time
}

export interface RecordInput {
  history: HistoryData
  replicas: ReplicaRead[]
  /** nodes whose daemon is not up at the end */
  down: ReadonlySet<string>
  landings: Array<{ task: string; epoch: number; agent: string; commitMs: number }>
  nameOf: (peer: string) => string
  peerOf: (node: string) => string
  /** the campaign's clock at the end, and its wall-clock origin */
  endTime: number
  wallOrigin: number
}

/** The history with what the end shows added (acknowledged entries, deliveries, notices kept in inboxes), and the record. */
export function buildRecord(o: RecordInput): RunRecord {
  const events: HistoryEvent[] = [...o.history.events]
  const h = {
    events,
    add: (e: HistoryEvent): void => {
      events.push(e)
    }
  }
  const byId = new Map<string, LogEntry>()
  for (const r of o.replicas) for (const e of r.log) byId.set(e.id, e)
  const all = [...byId.values()]
  const body = (e: LogEntry): { task?: string; epoch?: number } => {
    try {
      return JSON.parse(e.bodyJson) ?? {}
    } catch {
      return {}
    }
  }
  const find = (node: string, kind: string, task: string, epoch?: number): LogEntry | undefined =>
    all.find(
      e =>
        e.author === o.peerOf(node) && e.kind === kind && body(e).task === task && (epoch === undefined || Number(body(e).epoch) === epoch)
    )

  const pairs = pairsOf(h)
  const ops = new Map<string, Op[]>()
  for (const e of eventsOf(h, 'invoke')) {
    if (e.f !== 'claim') continue
    const k = `${e.node} ${e.task ?? ''}`
    ops.set(k, [...(ops.get(k) ?? []), { invoke: e, complete: pairs.find(p => p.invoke.op === e.op)?.complete }])
  }
  const releases = eventsOf(h, 'invoke').filter(e => e.f === 'release')
  const acked = new Set<string>()
  for (const { invoke: i, complete: c } of pairs) {
    if (c.type !== 'ok' || i.task === undefined) continue
    if (i.f === 'claim' && c.outcome === 'HELD' && c.epoch !== undefined) {
      const key = `${i.node} ${i.task}@${c.epoch}`
      if (acked.has(key)) continue
      acked.add(key)
      const time =
        claimWrittenAt(
          ops.get(`${i.node} ${i.task}`) ?? [],
          releases.filter(r => r.node === i.node && r.task === i.task),
          c.epoch
        ) ?? i.time
      const e = find(i.node, 'claim', i.task, c.epoch)
      h.add({
        kind: 'append',
        time,
        node: i.node,
        id: e?.id ?? `missing claim ${i.node} ${i.task}@${c.epoch}`,
        entryKind: 'claim',
        task: i.task,
        epoch: c.epoch
      })
    } else if (i.f === 'release' || i.f === 'done') {
      const e = find(i.node, i.f, i.task, i.epoch)
      h.add({
        kind: 'append',
        time: i.time,
        node: i.node,
        id: e?.id ?? `missing ${i.f} ${i.node} ${i.task}@${i.epoch ?? 0}`,
        entryKind: i.f,
        task: i.task,
        epoch: i.epoch
      })
    } else if (i.f === 'note' && c.id !== undefined) {
      h.add({ kind: 'append', time: i.time, node: i.node, id: c.id, entryKind: 'finding' })
    }
  }

  for (const r of o.replicas) {
    for (const m of r.inbox) {
      // The agents' messages; daemons also write to each other (an overlap of claims), which no client sent.
      if (m.kind === 'message' && m.text.startsWith('hello '))
        h.add({ kind: 'deliver', time: o.endTime, node: r.node, from: o.nameOf(m.from), id: m.id })
      if (m.kind === 'claim_lost' || m.kind === 'claim_superseded') {
        const at = /on (\S+)@(\d+)/.exec(m.text)
        if (at == null) continue
        const [task, epoch] = [at[1], Number(at[2])]
        // The stream may have missed it (the agent was reconnecting); the inbox keeps it.
        if (!eventsOf(h, 'notice').some(n => n.node === r.node && n.task === task && n.epoch === epoch)) {
          h.add({ kind: 'notice', time: o.endTime, node: r.node, task, epoch, reason: m.kind })
        }
      }
    }
  }

  const merges = pairs.filter(p => p.invoke.f === 'merge')
  const landed: Landed[] = o.landings.map(l => {
    const node = o.nameOf(l.agent)
    const op =
      merges.find(p => p.invoke.node === node && p.invoke.task === l.task && p.invoke.epoch === l.epoch && p.complete.type !== 'fail') ??
      merges.find(p => p.invoke.node === node && p.invoke.task === l.task && p.invoke.epoch === l.epoch)
    return { task: l.task, epoch: l.epoch, agent: node, time: op?.invoke.time ?? l.commitMs - o.wallOrigin }
  })

  const first = o.replicas[0]
  const replicas: ReplicaState[] = o.replicas.map(r => ({
    node: r.node,
    up: r.up && !o.down.has(r.node),
    entryIds: r.log.map(e => e.id).sort(),
    board: r.board
  }))
  for (const node of o.down) if (!replicas.some(r => r.node === node)) replicas.push({ node, up: false, entryIds: [], board: [] })
  return { history: h, branch: { landed }, replicas, winners: first !== undefined ? winnersOf(first.log, o.nameOf) : new Map() }
}
