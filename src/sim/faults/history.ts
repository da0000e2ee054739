// The history of one run, the way Jepsen and Porcupine record it: every
// operation an agent invokes and how it completed (ok, fail, or info when its
// process died before the answer), what each daemon told its agent, what
// reached each inbox, and what the nemesis did (crashes, restarts,
// partitions, heals, and every message the network did not deliver). The
// checks read nothing else, plus the replicas' final state.

export type OpName = 'claim' | 'release' | 'merge' | 'done' | 'send' | 'note'

export interface InvokeEvent {
  kind: 'invoke'
  op: number
  time: number
  node: string
  f: OpName
  /** claim, release, merge, done: the task (and epoch); send: the recipient */
  task?: string
  epoch?: number
  to?: string
  /** a claim called again while the first is waiting (a CLI or MCP retry) */
  retry?: boolean
}

export interface CompleteEvent {
  kind: 'complete'
  op: number
  time: number
  node: string
  type: 'ok' | 'fail' | 'info'
  /** claim: HELD or LOST; merge: landed or refused; send: the message id */
  outcome?: string
  epoch?: number
  winner?: string
  reason?: string
  id?: string
}

/** The daemon told its agent that a claim it held is lost. */
export interface NoticeEvent {
  kind: 'notice'
  time: number
  node: string
  task: string
  epoch: number
  reason: string
  winner?: string
}

/** An entry a daemon appended and acknowledged (it is on disk). */
export interface AppendEvent {
  kind: 'append'
  time: number
  node: string
  id: string
  entryKind: string
  task?: string
  epoch?: number
}

/** A direct message stored in its recipient's inbox. */
export interface DeliverEvent {
  kind: 'deliver'
  time: number
  node: string
  from: string
  id: string
}

/**
 * What the nemesis did. The checks read crash and restart, pause and resume
 * (a stopped process hears nothing), partition and heal (groups that cannot
 * reach each other; a node in several groups bridges them), slow and fast (a
 * node's packets delayed or lost beyond any settle window) and quiet (the end
 * of the faults). The other kinds are recorded so a history says all that
 * happened; no check excuses anything by them.
 */
export interface NemesisEvent {
  kind: 'nemesis'
  time: number
  f:
    | 'crash'
    | 'restart'
    | 'pause'
    | 'resume'
    | 'partition'
    | 'heal'
    | 'slow'
    | 'fast'
    | 'quiet'
    | 'clock'
    | 'disk-full'
    | 'disk-free'
    | 'remote-slow'
    | 'remote-cut'
    | 'remote-heal'
  node?: string
  loseUnsynced?: boolean
  groups?: string[][]
  /** clock: the offset, ms, the node's wall clock now reads ahead (negative: behind) */
  offsetMs?: number
}

/** A message carrying entries that the network lost or cut. */
export interface DropEvent {
  kind: 'drop'
  time: number
  from: string
  to: string
  why: 'lost' | 'cut'
}

export type HistoryEvent = InvokeEvent | CompleteEvent | NoticeEvent | AppendEvent | DeliverEvent | NemesisEvent | DropEvent

/** A history as plain data: what the checks read, from the simulator or from real processes. */
export interface HistoryData {
  readonly events: readonly HistoryEvent[]
}

/** invoke -> complete, for every completed operation. */
export function pairsOf(h: HistoryData): Array<{ invoke: InvokeEvent; complete: CompleteEvent }> {
  const invokes = new Map<number, InvokeEvent>()
  const out: Array<{ invoke: InvokeEvent; complete: CompleteEvent }> = []
  for (const e of h.events) {
    if (e.kind === 'invoke') invokes.set(e.op, e)
    else if (e.kind === 'complete') {
      const invoke = invokes.get(e.op)
      if (invoke !== undefined) out.push({ invoke, complete: e })
    }
  }
  return out
}

export function eventsOf<K extends HistoryEvent['kind']>(h: HistoryData, kind: K): Array<Extract<HistoryEvent, { kind: K }>> {
  return h.events.filter((e): e is Extract<HistoryEvent, { kind: K }> => e.kind === kind)
}

export class History implements HistoryData {
  readonly events: HistoryEvent[] = []
  private nextOp = 0
  private readonly open = new Map<number, InvokeEvent>()

  invoke(e: Omit<InvokeEvent, 'kind' | 'op'>): number {
    const op = ++this.nextOp
    const event: InvokeEvent = { kind: 'invoke', op, ...e }
    this.events.push(event)
    this.open.set(op, event)
    return op
  }

  complete(op: number, time: number, result: Omit<CompleteEvent, 'kind' | 'op' | 'time' | 'node'>): void {
    const inv = this.open.get(op)
    if (inv === undefined) return
    this.open.delete(op)
    this.events.push({ kind: 'complete', op, time, node: inv.node, ...result })
  }

  /** Operations of `node` still open when its process died end as info: their outcome is unknown. */
  crashed(node: string, time: number): void {
    for (const [op, inv] of [...this.open]) if (inv.node === node) this.complete(op, time, { type: 'info' })
  }

  add(e: Exclude<HistoryEvent, InvokeEvent | CompleteEvent>): void {
    this.events.push(e)
  }

  /** invoke -> complete, for every completed operation. */
  pairs(): Array<{ invoke: InvokeEvent; complete: CompleteEvent }> {
    return pairsOf(this)
  }

  of<K extends HistoryEvent['kind']>(kind: K): Array<Extract<HistoryEvent, { kind: K }>> {
    return eventsOf(this, kind)
  }
}
