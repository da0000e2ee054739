// Assists inside agentd (issue #20, "idle agents help"): an agent with
// nothing to claim helps a task a peer holds, on the critical path, with an
// approach nobody announced yet (the rule: core/board/assist-choice.ts). The
// approaches are findings in the log (core/board/assist-book.ts), folded here
// from the findings index and kept up to date from accepted entries; the
// holder is told in its inbox when an assistant joins, and an assistant when
// the task it assists is done by someone else. Integration of an assisted
// task is integration.ts's (integrateTarget says how to integrate, directly or
// through an integrator); the done of an assist that landed is written here,
// for both: when this agent's own integration or an integrator's answering its
// request is folded, and at start for any landing whose done a crash or a stop
// lost (core/board/assist-landing), once per task.
import {
  APPROACH_FINDING_KIND,
  APPROACH_TAG,
  ASSIST_END_TAG,
  AssistBook,
  checkApproach,
  checkAssistTask,
  chooseAssist,
  agentsAtWork,
  assistCandidates,
  assistsAt,
  freeAgentCount,
  isAssistFinding,
  landedWithoutDone,
  taskTag,
  type ApproachView,
  type AssistCandidate,
  type AssistInput,
  type AssistPolicy
} from '../core/board/index.js'
import { FailedPreconditionError, InvalidArgumentError } from '../core/errors.js'
import { decodeBody } from '../core/log/kinds.js'
import { mayHaveTag } from '../core/log/finding-scan.js'
import type { StoredEntry } from '../core/log/ingest-result.js'
import { MAX_SEARCH_LIMIT } from '../core/findings/findings-index.js'
import type { AssistApproach, AssistReply } from '../gen/agency/v1/api.js'
import type { BoardService } from './board-service.js'
import type { LogService } from './log-service.js'
import type { Logger } from '../logger.js'
import {
  ASSIST_NOTHING_TO_STOP,
  ASSIST_SAY_WHAT_LEARNED,
  assistEnded,
  assistOffer,
  assistantJoined,
  assistedTaskDone,
  assistedTaskUnheld,
  doneFirst,
  nothingToAssist
} from '../core/agent-words.js'

export interface AssistServiceInit {
  me: string
  board: BoardService
  log: LogService
  logger: Logger
  /** this machine's wall clock, for how long a task has been held */
  wallClock: () => number
  policy: AssistPolicy
  /** the peers presence knows to be live (for spare places while many agents are free: core/board/assist-spare); absent: none counted */
  livePeers?: () => string[]
  /** writes a notice to this daemon's agent */
  notice: (text: string, task: string) => void
}

/** What is learned at most per assist's end, in characters. */
export const MAX_LEARNED_CHARS = 8000

/** The assist this agent is on, as integrate needs it. */
export interface AssistTarget {
  task: string
  /** the holder's epoch now: an assistant's integration and done are at it */
  epoch: number
  /** the assistant's branch for this assist */
  branch: string
}

export class AssistService {
  private readonly init: AssistServiceInit
  private book?: AssistBook
  private unsubscribe?: () => void
  /** tasks whose done this daemon is writing after its assist landed */
  private readonly landing = new Map<string, Promise<void>>()
  private stopped = false
  /** tasks this agent assists whose done by someone else it was told of */
  private readonly toldDone = new Set<string>()

  constructor(init: AssistServiceInit) {
    this.init = init
  }

  get policy(): AssistPolicy {
    return this.init.policy
  }

  /** Call once the log is loaded and the board folded: writes the done of any assist that landed without it. */
  beforeStart(): void {
    this.unsubscribe = this.init.log.onAccepted(e => {
      this.onEntry(e)
    })
    this.writeLandedDones()
  }

  /** From now on no done is written (a landing's done is then written at the next start). */
  stop(): void {
    this.stopped = true
    this.unsubscribe?.()
  }

  /**
   * The book of approaches, built on first use from the findings index (which
   * catches up with the log then), later kept up to date entry by entry.
   */
  private approaches(): AssistBook {
    if (this.book !== undefined) return this.book
    const book = new AssistBook()
    const index = this.init.log.findings
    for (let offset = 0; ; offset += MAX_SEARCH_LIMIT) {
      const page = index.page({ tag: APPROACH_TAG, limit: MAX_SEARCH_LIMIT, offset })
      for (const h of page.hits) book.add(header(h.entry), h.finding)
      if (offset + MAX_SEARCH_LIMIT >= page.total) break
    }
    this.book = book
    return book
  }

  private onEntry(e: StoredEntry): void {
    const { entry } = e
    try {
      if (entry.kind === 'finding') {
        // most findings are not an assist's: those in the plain form without the approach tag are not decoded
        if (!mayHaveTag(entry.body, APPROACH_TAG)) return
        const f = decodeBody('finding', entry.body)
        if (!isAssistFinding(f)) return
        this.book?.add(header(e), f)
        const task = f.tags.find(t => t.startsWith('task:'))?.slice(5) ?? ''
        const holder = this.init.board.board.holder(task)
        if (entry.author === this.init.me || holder?.holder !== this.init.me || f.tags.includes(ASSIST_END_TAG)) return
        this.init.notice(assistantJoined(entry.author, task, f.text), task)
      } else if (entry.kind === 'integration') {
        const i = decodeBody('integration', entry.body)
        if (entry.author === this.init.me || this.init.log.state.get(i.request)?.entry.author === this.init.me) this.writeLandedDones()
        // An assistant's done counts once the integration that landed it is here, whichever came first.
        this.tellDone(i.task)
      } else if (entry.kind === 'integration_request') {
        if (entry.author === this.init.me) this.writeLandedDones()
        this.tellDone(decodeBody('integration_request', entry.body).task)
      } else if (entry.kind === 'done') {
        this.tellDone(decodeBody('done', entry.body).task)
      }
    } catch (err) {
      this.init.logger.debug({ err: (err as Error).message }, 'no assist notice for a malformed entry')
    }
  }

  /** Tells this agent, once, that the task it assists was done by someone else. */
  private tellDone(task: string): void {
    const done = this.init.board.board.doneRecord(task)
    if (done === undefined || done.by === this.init.me || this.toldDone.has(task) || this.mineOn(task) === undefined) return
    this.toldDone.add(task)
    this.init.notice(assistedTaskDone(task, done.by, done.commit), task)
  }

  /**
   * Writes this agent's done for every assist of its that landed (its own
   * merged integration, or an integrator's answering its request) on a task
   * not done yet: the first passing integration won, so the task is done by
   * it (counted by core/board/landed-work). The holder and the other
   * assistants are told from that done. Idempotent: the decision is the
   * board's (core/board/assist-landing), and a done being written is not
   * written twice.
   */
  private writeLandedDones(): void {
    if (this.stopped) return
    for (const l of landedWithoutDone(this.init.board.board, () => this.approaches(), this.init.me)) {
      if (this.landing.has(l.task)) continue
      const writing = this.init.log
        .append('done', { task: l.task, epoch: l.epoch, commit: l.commit, paths: l.paths })
        .then(() => {
          this.init.logger.info({ task: l.task, epoch: l.epoch }, 'assist landed: done')
        })
        .catch(err => {
          this.init.logger.warn({ err, task: l.task }, 'cannot write the done of an assist that landed')
        })
        .finally(() => {
          this.landing.delete(l.task)
        })
      this.landing.set(l.task, writing)
    }
  }

  /**
   * After this agent's integration of `task` as its assistant merged: its
   * done is written (by the listener that folded the integration, or now).
   * Resolves once it is on the log; throws when it is not (the daemon is
   * stopping: the next start writes it).
   */
  async landed(task: string): Promise<void> {
    this.writeLandedDones()
    await this.landing.get(task)
    if (this.init.board.board.doneRecord(task)?.by !== this.init.me) {
      throw new FailedPreconditionError(
        `your assist of ${task} landed, but its done is not written yet (the daemon is stopping): it is written when the daemon starts again`
      )
    }
  }

  /** Resolves once every done being written is on the log (or failed). */
  async settled(): Promise<void> {
    await Promise.all([...this.landing.values()])
  }

  /**
   * Whether this agent's work on `task` at `epoch` is an assistant's: it
   * announced an approach on the task and does not hold the epoch's claim.
   */
  assistedAt(task: string, epoch: number): boolean {
    return assistsAt(this.init.board.board, this.approaches(), this.init.me, task, epoch)
  }

  /** My latest approach on `task` if it is not ended (done or not). */
  private mineOn(task: string): ApproachView | undefined {
    const a = this.approaches().current(this.init.me, () => false)
    return a?.task === task ? a : undefined
  }

  private input(): AssistInput {
    const b = this.init.board
    const now = b.now()
    const isLive = (peer: string): boolean => peer === this.init.me || b.protocol.leases.isLive(peer, now)
    return {
      board: b.board,
      book: this.approaches(),
      me: this.init.me,
      now,
      wallNow: this.init.wallClock(),
      isLive,
      policy: this.init.policy,
      freeAgents: this.freeAgents(isLive)
    }
  }

  /**
   * The live agents (this one too) that hold nothing but tasks on their way and assist nothing; undefined without spare places or a view of
   * the peers.
   */
  private freeAgents(isLive: (peer: string) => boolean): number | undefined {
    if (!((this.init.policy.spare ?? 0) > 0) || this.init.livePeers === undefined) return undefined
    const board = this.init.board.board
    const live = new Set([this.init.me, ...this.init.livePeers().filter(isLive)])
    return freeAgentCount(
      live,
      agentsAtWork(board),
      this.approaches().assistingAgents(id => board.doneRecord(id) !== undefined)
    )
  }

  /** The assist this agent is on, if any. */
  current(): ApproachView | undefined {
    const board = this.init.board.board
    return this.approaches().current(this.init.me, id => board.doneRecord(id) !== undefined)
  }

  /** The assists in progress on `task` whose assistant is live here (hand-off by speed hands a task to one first). */
  activeOn(task: string, isLive: (peer: string) => boolean): ApproachView[] {
    return this.approaches()
      .active(task)
      .filter(a => isLive(a.author))
  }

  /** Whether `agent` assists a task that is not done. */
  assisting(agent: string): boolean {
    const board = this.init.board.board
    return this.approaches().current(agent, id => board.doneRecord(id) !== undefined) !== undefined
  }

  /** The branch task of this agent's assist of `task` if it is on it (not ended): `<task>-assist-<n>`. */
  assistBranchTask(task: string): string | undefined {
    const a = this.mineOn(task)
    return a === undefined ? undefined : AssistService.branchTask(task, this.approaches().countBy(this.init.me, task))
  }

  /**
   * This agent took over `task`, which it assisted, as its holder (a hand-off
   * by speed): its assist ends with a note (not a failure: the approach goes
   * on, as the holder's). Does nothing when it does not assist `task`.
   */
  async endAsHolder(task: string, from: string): Promise<void> {
    const a = this.mineOn(task)
    if (a === undefined) return
    const e = await this.init.log.append('finding', {
      kind: 'note',
      text: `assist of ${task} ended (approach: ${a.text}): ${from} handed ${task} to me by speed; I hold it now and carry this approach on as its holder`,
      paths: [],
      tags: [APPROACH_TAG, taskTag(task), ASSIST_END_TAG],
      refs: [a.entryId],
      supersedes: ''
    })
    this.approaches().add(
      { id: e.id, author: this.init.me, seq: e.entry.seq, lamport: e.entry.lamport, time: e.entry.time },
      decodeBody('finding', e.entry.body)
    )
  }

  /** The branch of this agent's n-th assist of `task`: agency/<me>/<task>-assist-<n>. */
  static branchTask(task: string, n: number): string {
    return `${task}-assist-${n}`
  }

  /**
   * Look (no approach): the task this agent may assist, named or picked, with
   * the approaches to avoid. Nothing is written. Bad input throws.
   */
  look(task: string): AssistReply {
    const input = this.input()
    if (task !== '') return this.reply('OFFER', checkAssistTask(input, task), assistOffer(task))
    const c = chooseAssist(input)
    if (c === undefined) return this.none(input)
    return this.reply('OFFER', c, assistOffer(c.task))
  }

  /**
   * What claim --next adds to its NONE_READY answer: the offer, or why there
   * is none; undefined when this agent may not assist (it holds a task or
   * assists one already).
   */
  offer(): AssistReply | undefined {
    try {
      return this.look('')
    } catch (err) {
      if (err instanceof FailedPreconditionError) return undefined
      throw err
    }
  }

  /**
   * Announces the approach on the task (named, or the one chosen): a finding
   * every peer folds. Returns the candidate and the announcement's id; the
   * caller switches the workspace. Bad input throws and writes nothing.
   */
  async announce(
    task: string,
    approach: string
  ): Promise<{ candidate: AssistCandidate; entryId: string; branchTask: string } | AssistReply> {
    const input = this.input()
    let c: AssistCandidate | undefined
    if (task !== '') c = checkAssistTask(input, task)
    else {
      c = chooseAssist(input)
      if (c === undefined) {
        if (approach.trim() === '') throw new InvalidArgumentError('name your approach with --approach "<text>"')
        return this.none(input)
      }
    }
    const text = checkApproach(c, approach)
    const e = await this.init.log.append('finding', {
      kind: APPROACH_FINDING_KIND,
      text,
      paths: [],
      tags: [APPROACH_TAG, taskTag(c.task), 'assist'],
      refs: [],
      supersedes: ''
    })
    // Folded at once, whether or not the accepted-entry listener ran yet.
    this.approaches().add(
      { id: e.id, author: this.init.me, seq: e.entry.seq, lamport: e.entry.lamport, time: e.entry.time },
      decodeBody('finding', e.entry.body)
    )
    const n = this.approaches().countBy(this.init.me, c.task)
    return { candidate: c, entryId: e.id, branchTask: AssistService.branchTask(c.task, n) }
  }

  /** Ends this agent's assist, recording what it learned: a failure when the task is not done, else a note. */
  async end(learned: string): Promise<AssistReply> {
    const text = learned.trim()
    const a = this.approaches().current(this.init.me, () => false)
    if (a === undefined) throw new FailedPreconditionError(ASSIST_NOTHING_TO_STOP)
    if (text === '') throw new InvalidArgumentError(ASSIST_SAY_WHAT_LEARNED)
    if (text.length > MAX_LEARNED_CHARS) throw new InvalidArgumentError(`what you learned is longer than ${MAX_LEARNED_CHARS} characters`)
    const done = this.init.board.board.doneRecord(a.task) !== undefined
    const e = await this.init.log.append('finding', {
      kind: done ? 'note' : 'failure',
      text: `assist of ${a.task} ended (approach: ${a.text}): ${text}`,
      paths: [],
      tags: [APPROACH_TAG, taskTag(a.task), ASSIST_END_TAG],
      refs: [a.entryId],
      supersedes: ''
    })
    this.approaches().add(
      { id: e.id, author: this.init.me, seq: e.entry.seq, lamport: e.entry.lamport, time: e.entry.time },
      decodeBody('finding', e.entry.body)
    )
    const t = this.init.board.board.task(a.task, this.init.board.now())
    return {
      ...emptyReply(),
      outcome: 'STOPPED',
      task: a.task,
      holder: t?.holder ?? '',
      epoch: t?.epoch ?? 0,
      budget: this.init.policy.budget,
      entryId: e.id,
      text: assistEnded(a.task)
    }
  }

  /**
   * How to integrate `task` (or, with '', the task this agent assists) as its
   * assistant; undefined when this agent does not assist it. Throws when the
   * task is no longer held (then it should be claimed).
   */
  integrateTarget(task: string): AssistTarget | undefined {
    const a = this.current()
    if (a === undefined) {
      // An assist not ended whose task got done: say so, rather than "you hold no task".
      const last = this.approaches().current(this.init.me, () => false)
      const done = last === undefined || (task !== '' && task !== last.task) ? undefined : this.init.board.board.doneRecord(last.task)
      if (last !== undefined && done !== undefined) throw new FailedPreconditionError(doneFirst(last.task, done.by, this.init.me))
      return undefined
    }
    if (task !== '' && task !== a.task) return undefined
    const h = this.init.board.board.holder(a.task)
    if (h === undefined) throw new FailedPreconditionError(assistedTaskUnheld(a.task))
    return { task: a.task, epoch: h.epoch, branch: AssistService.branchTask(a.task, this.approaches().countBy(this.init.me, a.task)) }
  }

  /** The reply for a candidate, with the approaches and the failures recorded on its task. */
  reply(outcome: string, c: AssistCandidate, text: string): AssistReply {
    return {
      ...emptyReply(),
      outcome,
      task: c.task,
      holder: c.holder,
      epoch: c.epoch,
      heldMs: c.heldMs,
      chain: c.chain,
      assistants: c.assistants.length,
      budget: c.budget,
      approaches: [...c.approaches.map(approachMessage), ...this.failures(c.task)],
      text
    }
  }

  /** Failure findings on the task other than assists' ends (those are in the approaches). */
  private failures(task: string): AssistApproach[] {
    const hits = this.init.log.findings.search({ tag: taskTag(task), kind: 'failure', limit: 20 })
    return hits
      .filter(h => !h.finding.tags.includes(ASSIST_END_TAG))
      .map(h => ({ author: h.entry.entry.author, text: h.finding.text, entryId: h.id, ended: true, learned: '', kind: 'failure' }))
  }

  private none(input: AssistInput): AssistReply {
    const c = assistCandidates(input)
    const why =
      c.length === 0
        ? 'no task is held by a live peer'
        : c
            .slice(0, 3)
            .map(x => x.refusal)
            .join('; ')
    return { ...emptyReply(), outcome: 'NONE', budget: this.init.policy.budget, text: nothingToAssist(why) }
  }
}

/** Checks the exclusive fields of an assist request. */
export function checkAssistRequest(r: { task: string; approach: string; stop: string }): void {
  if (r.stop.trim() !== '' && (r.task !== '' || r.approach !== ''))
    throw new InvalidArgumentError('stop ends your assist: give it alone, without task or approach')
}

function approachMessage(a: ApproachView): AssistApproach {
  return { author: a.author, text: a.text, entryId: a.entryId, ended: a.ended, learned: a.learned, kind: 'approach' }
}

function emptyReply(): AssistReply {
  return {
    outcome: '',
    task: '',
    holder: '',
    epoch: 0,
    heldMs: 0,
    chain: 0,
    assistants: 0,
    budget: 0,
    approaches: [],
    taskBranch: '',
    workspace: '',
    entryId: '',
    text: ''
  }
}

function header(e: StoredEntry): { id: string; author: string; seq: number; lamport: number; time: number } {
  return { id: e.id, author: e.entry.author, seq: e.entry.seq, lamport: e.entry.lamport, time: e.entry.time }
}
