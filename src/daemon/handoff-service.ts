// Hand-off by speed inside agentd (issue #20; docs/handoff.md; the rule:
// core/board/handoff-choice.ts). Both ends of a hand-off run here:
//
// - the holder's daemon checks its held tasks every `checkMs`: one held for
//   longer than factor x the median claim-to-done time of the board's done
//   tasks (and the floor), or than that median alone when this agent is slow
//   by its own record (its median claim-to-done, over at least 2 tasks it
//   finished, is above factor x the board's), whose work is not on its way to the shared branch,
//   goes to a live peer that is not slow: an assistant on the task first, else
//   an idle agent. The daemon pushes the work so far to the task's wip ref,
//   releases the claim with hand-off notes and `to` naming the receiver, and
//   tells its agent to stop and record what it learned. Its later integrate of
//   the task is refused: it no longer holds it, and once the receiver lands,
//   the remote's task fence refuses the old epoch too.
// - the receiver's daemon, when it folds a release naming it (or at start,
//   or at the next check), claims the task at the next epoch while the board
//   still reserves it for it (board.handedTo: nobody claimed since, it holds
//   nothing), puts its workspace on the task branch, from its own assist
//   branch when it assisted the task, else from the holder's wip ref, ends its
//   assist (a note: the approach goes on as the holder's) and tells its agent.
//   Other daemons' claim --next leaves such a task to its receiver for a while
//   (claim-choice readyChoice); a claim by name still takes it.
import {
  PLAN_TASK_ID,
  agentsAtWork,
  chooseHandoff,
  handoffLimitMs,
  usualTaskMs,
  type HandoffDecision,
  type HandoffPeer,
  type HandoffPolicy,
  type HolderInfo
} from '../core/board/index.js'
import { decodeBody } from '../core/log/kinds.js'
import type { StoredEntry } from '../core/log/ingest-result.js'
import type { AssistService } from './assist-service.js'
import type { BoardService } from './board-service.js'
import type { LogService } from './log-service.js'
import type { Logger } from '../logger.js'
import { handedAway, handedToYou } from '../core/agent-words.js'

/** What the receiver's claim answered, with where its workspace is. */
export interface HandoffClaim {
  outcome: string
  epoch: number
  winner: string
  workspace: string
}

export interface HandoffServiceInit {
  me: string
  board: BoardService
  log: LogService
  assists: AssistService
  logger: Logger
  /** this machine's wall clock: how long a task has been held (its claim's time is the holder's own clock) */
  wallClock: () => number
  policy: HandoffPolicy
  /** how often held tasks are checked, ms */
  checkMs: number
  /** the peers presence knows to be live */
  livePeers: () => string[]
  /** whether this agent's work on the task is on its way to the shared branch */
  merging: (task: string, epoch: number) => boolean
  /** pushes the task's branch to its wip ref; the ref, or '' when nothing was pushed */
  saveWork: (task: string) => Promise<string>
  /** claims a task handed to this agent and puts the workspace on it (from the assist branch named) */
  claim: (task: string, fromAssist: string | undefined) => Promise<HandoffClaim>
  /** writes a notice to this daemon's agent */
  notice: (text: string, task: string) => void
}

export const DEFAULT_HANDOFF_CHECK_MS = 10_000

export class HandoffService {
  private readonly init: HandoffServiceInit
  private timer?: NodeJS.Timeout
  private unsubscribe?: () => void
  private stopped = false
  private checking?: Promise<void>
  /** tasks handed to this agent being claimed now */
  private readonly receiving = new Set<string>()

  constructor(init: HandoffServiceInit) {
    this.init = init
  }

  get policy(): HandoffPolicy {
    return this.init.policy
  }

  /** Call once the log is loaded, the board folded and the workspace open. */
  start(): void {
    if (!(this.init.policy.factor > 0)) return
    this.unsubscribe = this.init.log.onAccepted(e => {
      this.onEntry(e)
    })
    this.timer = setInterval(() => {
      void this.check()
    }, this.init.checkMs)
    this.timer.unref()
    void this.check()
  }

  stop(): void {
    this.stopped = true
    clearInterval(this.timer)
    this.unsubscribe?.()
  }

  /** Resolves once the check running now (if any) is over. */
  async settled(): Promise<void> {
    await this.checking
  }

  private onEntry(e: StoredEntry): void {
    if (e.entry.kind !== 'release' || e.entry.author === this.init.me) return
    try {
      const r = decodeBody('release', e.entry.body)
      // After the listeners: the board folds the release first.
      if (r.to === this.init.me)
        setImmediate(() => {
          void this.receive(r.task)
        })
    } catch (err) {
      this.init.logger.debug({ err: (err as Error).message }, 'no hand-off for a malformed release')
    }
  }

  /** One pass: this agent's slow tasks are handed off, tasks handed to it are claimed. One at a time. */
  async check(): Promise<void> {
    if (this.stopped || this.checking !== undefined) return await this.checking
    this.checking = (async () => {
      try {
        await this.handOffSlow()
        for (const task of this.handedToMe()) await this.receive(task)
      } catch (err) {
        this.init.logger.warn({ err }, 'hand-off check failed')
      } finally {
        this.checking = undefined
      }
    })()
    await this.checking
  }

  /** Whether and to whom this agent's held `task` would be handed now (nothing is written). */
  decide(task: string): HandoffDecision {
    const h = this.init.board.board.holder(task)
    if (h?.holder !== this.init.me) return { refusal: `you do not hold ${task}` }
    return this.decideFor(h, this.usualMs(), this.myRecord())
  }

  /** This agent's claim-to-done times as the holder of the tasks it finished: its record, for hand-off by its own speed. */
  private myRecord(): number[] {
    return this.init.board.board.doneTimesByAgent().get(this.init.me) ?? []
  }

  /**
   * The usual time of a task: the median claim-to-done time of the tasks
   * finished by their holder, both times on its own clock (a task an
   * assistant finished pairs the holder's claim time with the assistant's
   * clock, and measures nobody's speed).
   */
  private usualMs(): number | undefined {
    return usualTaskMs([...this.init.board.board.doneTimesByAgent().values()].flat())
  }

  private decideFor(h: HolderInfo, usualMs: number | undefined, holderDone: readonly number[]): HandoffDecision {
    const board = this.init.board.board
    const heldMs = Math.max(0, this.init.wallClock() - (board.claimTime(h.task) ?? this.init.wallClock()))
    const peers = this.peers(h.task)
    // with no peer to take it, the refusal says so, whatever is on its way
    const merging = peers.length > 0 && this.init.merging(h.task, h.epoch)
    return chooseHandoff({ task: h.task, holder: this.init.me, heldMs, usualMs, merging, peers, policy: this.init.policy, holderDone })
  }

  private async handOffSlow(): Promise<void> {
    const board = this.init.board.board
    const held = this.init.board.held().filter(h => h.task !== PLAN_TASK_ID)
    if (held.length === 0) return
    const usualMs = this.usualMs()
    const record = this.myRecord()
    const limit = handoffLimitMs(usualMs, this.init.policy, record)
    if (limit === undefined) return
    for (const h of held) {
      const since = board.claimTime(h.task)
      if (since === undefined || this.init.wallClock() - since <= limit) continue // the cheap test first
      const d = this.decideFor(h, usualMs, record)
      if (d.receiver === undefined) {
        this.init.logger.debug({ task: h.task, why: d.refusal }, 'no hand-off')
        continue
      }
      await this.handOff(h, d.receiver, d.text)
    }
  }

  /** Live peers that may take `task`: its live assistants, then the live peers that hold nothing and assist nothing. */
  private peers(task: string): HandoffPeer[] {
    const b = this.init.board
    const now = b.now()
    const isLive = (peer: string): boolean => b.protocol.leases.isLive(peer, now)
    const speeds = b.board.doneTimesByAgent()
    const usual = (agent: string): number | undefined => usualTaskMs(speeds.get(agent) ?? [])
    const out: HandoffPeer[] = []
    const seen = new Set<string>([this.init.me])
    for (const a of this.init.assists.activeOn(task, isLive)) {
      if (seen.has(a.author)) continue
      seen.add(a.author)
      out.push({ agent: a.author, assisting: true, usualMs: usual(a.author) })
    }
    // a peer whose held tasks are all on their way to the shared branch is free (core/board/carry-on)
    const holding = agentsAtWork(b.board)
    for (const peer of this.init.livePeers()) {
      if (seen.has(peer) || !isLive(peer) || holding.has(peer) || this.init.assists.assisting(peer)) continue
      seen.add(peer)
      out.push({ agent: peer, assisting: false, usualMs: usual(peer) })
    }
    return out
  }

  private async handOff(h: HolderInfo, receiver: HandoffPeer, why: string): Promise<void> {
    const { task, epoch } = h
    const branch = await this.init.saveWork(task)
    // The push took a while: the task may have been done, lost or sent to the branch meanwhile.
    const now = this.init.board.board.holder(task)
    if (this.stopped || now?.holder !== this.init.me || now.epoch !== epoch || this.init.merging(task, epoch)) return
    const work = branch !== '' ? `the holder's work so far is at ${branch}` : 'the holder pushed no work'
    await this.init.board.release(task, `${why}; ${work}`, branch, receiver.agent)
    this.init.logger.info({ task, epoch, to: receiver.agent }, 'handed off by speed')
    this.init.notice(handedAway({ task, epoch, receiver: receiver.agent, why, branch }), task)
  }

  /** Tasks the board reserves for this agent by a hand-off. */
  private handedToMe(): string[] {
    const b = this.init.board
    const now = b.now()
    const out: string[] = []
    for (const t of b.board.tasks(now, 'open'))
      if (t.handoff?.to === this.init.me && b.board.handedTo(t.id, now) === this.init.me) out.push(t.id)
    return out
  }

  /** Claims a task handed to this agent, while the board still reserves it for it. */
  private async receive(task: string): Promise<void> {
    const b = this.init.board
    if (this.stopped || this.receiving.has(task) || b.board.handedTo(task, b.now()) !== this.init.me) return
    this.receiving.add(task)
    try {
      const from = b.board.handoff(task)?.from ?? 'its holder'
      const fromAssist = this.init.assists.assistBranchTask(task)
      const a = await this.init.claim(task, fromAssist)
      if (a.outcome !== 'HELD') {
        this.init.logger.info({ task, outcome: a.outcome, winner: a.winner }, 'a task handed to this agent went to another')
        return
      }
      if (fromAssist !== undefined) await this.init.assists.endAsHolder(task, from)
      const notes = b.board.task(task, b.now())?.handoff?.note ?? ''
      this.init.notice(
        handedToYou({ task, epoch: a.epoch, from, notes, workspace: a.workspace, fromAssist: fromAssist !== undefined }),
        task
      )
    } catch (err) {
      this.init.logger.warn({ err, task }, 'cannot claim a task handed to this agent')
    } finally {
      this.receiving.delete(task)
    }
  }
}
