// One ACP session with a running agent process: agentd is the client. It
// initializes (ACP v1 only), opens a session in the agent's workspace with the
// agency MCP server attached, sends the shared prompt as the first turn, and
// then keeps the session going turn by turn: when a turn ends and the board
// says there is work (an unread message or notice, a held task, a ready one),
// the next turn carries what arrived; a notice that cannot wait (the claim
// being worked on was lost) cancels the running turn and the next one says
// why. Permission requests are answered by the policy, and beyond it, when
// the policy says ask, by the operator: the request waits for the answer
// (the idle watchdog waits with it). When the goal is met
// the session is ended cleanly.
//
// A session is one run of the supervisor: it ends by asking the supervisor to
// end the process (`run.end`), with a failure when it broke. What it leaves
// for the next session (the last turn's items, if that turn never finished) is
// in the SessionCarry the caller keeps across runs.
import * as acp from '@agentclientprotocol/sdk'
import { AgentProtocolError } from '../../core/errors.js'
import { restartDelayMs } from '../restart-backoff.js'
import type { HarnessRun } from '../types.js'
import { agentWire, type AgentWire, type AgentWireLimits } from './agent-wire.js'
import {
  answer,
  decidePermission,
  type PermissionCategory,
  type PermissionDecision,
  type PermissionGrant,
  type PermissionPolicy,
  type PermissionRequest
} from './permission-policy.js'
import { TurnActivity, usageOf, type ActivityEvent, type TokenUsage } from './session-activity.js'
import { composeTurn, isUrgent, MAX_NOTES_PER_TURN, OPERATOR_NOTICE, type HeldTask, type InboxNote } from './turn-composer.js'

/** The daemon as the session sees it. */
export interface SessionSwarm {
  /** Unread inbox items, oldest first, without marking them read. */
  unread: (limit: number) => Promise<InboxNote[]>
  unreadCount: () => number
  /** Marks everything up to `cursor` read. */
  markRead: (cursor: number) => Promise<void>
  /** Called whenever an inbox item is stored; returns the unsubscribe function. */
  onInbox: (listener: () => void) => () => void
  /** Blocks until there is something to do (agency wait), and says what. */
  waitForWork: (timeoutMs: number, signal: AbortSignal) => Promise<{ reason: string; text: string }>
  goalMet: () => boolean
  held: () => HeldTask[]
  /** an operator paused the swarm: no new turn starts (the running one ends as it will); a resume comes with an inbox item */
  paused?: () => boolean
}

/** While paused, how often the session looks again if no inbox item wakes it first. */
const PAUSE_CHECK_MS = 30_000

/** The operator, for a request beyond the grants when the policy says ask (the daemon's approval queue). */
export interface PermissionAsker {
  /** The operator's answer, or a denial with its reason (timed out; `signal`: the session or turn went away). */
  ask: (
    q: { what: string; category: PermissionCategory; grant?: PermissionGrant; reason: string },
    signal: AbortSignal
  ) => Promise<{ allow: boolean; always: boolean; reason: string }>
}

/** Where the session's activity goes: the status line, agency events, metrics. */
export interface SessionReport {
  turnStarted: (turn: number, why: string) => void
  turnEnded: (turn: {
    turn: number
    stopReason: string
    toolCalls: number
    usage?: TokenUsage
    contextTokens?: number
    text: string
    ms: number
  }) => void
  activity: (turn: number, e: ActivityEvent, doing: string) => void
  permission: (d: PermissionDecision) => void
  delivered: (notes: InboxNote[]) => void
  fault: (err: AgentProtocolError) => void
}

/** What one session leaves for the next. */
export interface SessionCarry {
  /** Sessions opened so far (a restart is a new one). */
  sessions: number
  /** The items the last turn delivered, and whether it ended. */
  lastTurn: { notes: InboxNote[]; finished: boolean }
  /** Why the previous session ended, for the resume summary. */
  endedBecause: string
}

export function newCarry(): SessionCarry {
  return { sessions: 0, lastTurn: { notes: [], finished: true }, endedBecause: '' }
}

export interface AcpSessionOptions {
  /** the run of the agent process this session drives (given by the supervisor) */
  run: HarnessRun
  /** The --harness name, for logs. */
  name: string
  mcpServers: acp.McpServer[]
  workspace: string
  /** The workspace's paths as given and resolved: file access inside counts as in the workspace. */
  workspaces: string[]
  prompt: string
  swarm: SessionSwarm
  report: SessionReport
  policy: PermissionPolicy
  /** who answers what the policy does not grant, when it says ask; none: denied on the spot */
  approvals?: PermissionAsker
  carry: SessionCarry
  /** A session that sends nothing this long while agentd waits on it is cancelled and restarted; 0: never. */
  idleTimeoutMs: number
  /**
   * How long a cancelled turn may take to end before the session is failed and
   * restarted. Default 5 min: ending a turn can take an agent a while on a busy
   * machine (it stops its tools and model stream first), and a silent agent is
   * caught sooner by the idle watchdog anyway.
   */
  cancelGraceMs?: number
  /** Backoff for turns that did nothing, before the next unprompted one. Defaults 5 s to 5 min. */
  quietBackoffMs?: { min: number; max: number }
  clientVersion: string
  limits?: Partial<AgentWireLimits>
  /** The agent drops a cancelled turn from its history (Gemini CLI): the next turn says it again. */
  forgetsCancelledTurns?: boolean
  /** The clock the idle watchdog reads (ms); default Date.now. */
  now?: () => number
}

/** The ACP protocol version agentd speaks. */
export const ACP_PROTOCOL_VERSION = acp.PROTOCOL_VERSION

/** How long one `agency wait` inside the session loop blocks before looking again. */
const WAIT_SLICE_MS = 10 * 60_000

/** AcpSessionOptions.cancelGraceMs's default. */
const CANCEL_GRACE_MS = 5 * 60_000

export class AcpSession {
  private readonly o: AcpSessionOptions
  private wire?: AgentWire
  private conn?: acp.ClientConnection
  private sessionId = ''
  private ending = false
  private turn = 0
  private turnRunning = false
  private turnActivity = new TurnActivity()
  private cancelReason: string | undefined
  private cancelTimer?: NodeJS.Timeout
  private idleTimer?: NodeJS.Timeout
  private readonly now: () => number
  private lastInbound: number
  private awaiting = 0
  private waitAbort?: AbortController
  /** permission requests waiting for the operator: a cancelled turn or an ended session stops their wait */
  private readonly asks = new Set<AbortController>()
  /** grants the operator gave with --always, for the rest of this session */
  private readonly alwaysGranted = new Set<PermissionGrant>()
  private wake?: () => void
  private offInbox?: () => void
  private turnDone?: Promise<unknown>
  /** Turns in a row started for the same unchanged work (the board said the same thing): backed off. */
  private quietTurns = 0
  /** What the last turn started for the board's work was told, if nothing else started it. */
  private lastWork: string | undefined

  constructor(o: AcpSessionOptions) {
    this.o = o
    this.now = o.now ?? (() => Date.now())
    this.lastInbound = this.now()
  }

  /** Runs the session until it ends; never rejects (a failure ends the run). */
  start(): void {
    this.main().catch(err => {
      this.fail(err)
    })
  }

  /**
   * agency stop or shutdown: cancels a running turn, waits for it to end (at
   * most the cancel grace; the supervisor's stop grace bounds it too), closes
   * the agent's stdin.
   */
  async stop(graceMs = this.o.cancelGraceMs ?? CANCEL_GRACE_MS): Promise<void> {
    if (this.ending) return
    this.ending = true
    this.waitAbort?.abort()
    this.wake?.()
    if (this.turnRunning && this.conn != null) {
      this.o.run.note('stopping: cancelling the running turn')
      this.notifyCancel()
      await Promise.race([this.turnDone, new Promise(resolve => setTimeout(resolve, graceMs).unref())])
    }
    this.cleanup()
    if (!this.o.run.stdin.writableEnded) this.o.run.stdin.end()
  }

  private async main(): Promise<void> {
    const { run } = this.o
    this.wire = agentWire({
      input: run.stdout,
      output: run.stdin,
      log: (d, text) => {
        run.raw(`${d} ${text}`)
      },
      onFatal: err => {
        this.o.report.fault(err)
        this.fail(err)
      },
      onInbound: () => {
        this.lastInbound = this.now()
      },
      limits: this.o.limits
    })
    this.conn = acp
      .client({ name: 'agentd' })
      .onRequest('session/request_permission', ctx => this.permission(ctx.params as unknown as PermissionRequest))
      .onNotification('*', ctx => {
        this.notification(ctx.method, ctx.params)
      })
      .connect(this.wire.stream)
    void this.conn.closed.then(
      () => {
        this.onClosed()
      },
      () => {
        this.onClosed()
      }
    )
    this.watchIdle()
    this.offInbox = this.o.swarm.onInbox(() => {
      this.onInboxItem()
    })

    const init = await this.request('initialize', () =>
      this.agent().request('initialize', {
        protocolVersion: ACP_PROTOCOL_VERSION,
        clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
        clientInfo: { name: 'agentd', version: this.o.clientVersion }
      })
    )
    if (init.protocolVersion !== ACP_PROTOCOL_VERSION) {
      throw new AgentProtocolError(
        'unsupported_version',
        `the agent answered initialize with ACP protocol version ${JSON.stringify(init.protocolVersion)}; agentd speaks version ${ACP_PROTOCOL_VERSION}: use an agent (or an adapter version) that speaks ACP v${ACP_PROTOCOL_VERSION}`
      )
    }
    const info = init.agentInfo
    run.note(`ACP agent ${info?.name ?? '(unnamed)'} ${info?.version ?? ''} speaks protocol v${init.protocolVersion}`)
    const session = await this.request('session/new', () =>
      this.agent().request('session/new', { cwd: this.o.workspace, mcpServers: this.o.mcpServers })
    )
    if (typeof session?.sessionId !== 'string' || session.sessionId === '')
      throw new AgentProtocolError('refused', 'the agent answered session/new without a session id')
    this.sessionId = session.sessionId
    const carry = this.o.carry
    const resumed = carry.sessions > 0
    carry.sessions++
    run.note(
      `session ${this.sessionId} open in ${this.o.workspace}${resumed ? ` (session ${carry.sessions}, after: ${carry.endedBecause})` : ''}`
    )

    let first = true
    let next: string | undefined
    /** What the last turn carried, and whether it was cancelled (for an agent that forgets such turns). */
    let last = { prompt: false, notes: [] as InboxNote[], cancelled: false }
    while (!this.ending) {
      await this.whilePaused()
      if (this.ending) break
      const stopped = this.cancelReason
      this.cancelReason = undefined
      const repeated = first && resumed && !carry.lastTurn.finished ? carry.lastTurn.notes : []
      const forgotten = this.o.forgetsCancelledTurns === true && last.cancelled
      const notes = await this.o.swarm.unread(MAX_NOTES_PER_TURN)
      if (this.ending) break
      const withPrompt = first || (forgotten && last.prompt)
      const text = composeTurn({
        prompt: withPrompt ? this.o.prompt : undefined,
        resume: first && resumed ? { why: carry.endedBecause, held: this.o.swarm.held(), repeated } : undefined,
        stopped,
        repeated: forgotten ? last.notes : undefined,
        notes,
        moreUnread: Math.max(0, this.o.swarm.unreadCount() - notes.length),
        next
      })
      // Marked read as it is sent: nothing is delivered twice.
      if (notes.length > 0) {
        await this.o.swarm.markRead(notes[notes.length - 1].cursor)
        this.o.report.delivered(notes)
      }
      carry.lastTurn = { notes: [...repeated, ...notes], finished: false }
      const why = first ? (resumed ? 'resume' : 'start') : stopped != null ? 'stopped' : notes.length > 0 ? 'inbox' : 'work'
      const stopReason = await this.runTurn(text, why)
      carry.lastTurn.finished = true
      last = { prompt: withPrompt, notes: forgotten ? [...last.notes, ...notes] : notes, cancelled: stopReason === 'cancelled' }
      first = false
      if (this.ending) break
      // A turn that was told something new resets the backoff; one started only for the same work does not.
      if (notes.length > 0 || stopped != null || stopReason === 'cancelled') {
        this.quietTurns = 0
        this.lastWork = undefined
      }
      if (this.o.swarm.goalMet()) {
        this.finish('the goal is met')
        return
      }
      if (this.cancelReason != null) continue // stopped by agentd: say why at once
      const work = await this.nextWork()
      if (work === undefined) return
      next = work
    }
  }

  private async runTurn(text: string, why: string): Promise<string> {
    this.turn++
    const turn = this.turn
    this.turnActivity = new TurnActivity()
    this.turnRunning = true
    const started = Date.now()
    this.o.report.turnStarted(turn, why)
    this.o.run.note(`turn ${turn} (${why}): ${text.length} characters`)
    const prompt = this.request('session/prompt', () =>
      this.agent().request('session/prompt', { sessionId: this.sessionId, prompt: [{ type: 'text', text }] })
    )
    this.turnDone = prompt.catch(() => {})
    // A cancel asked for before the prompt went out still applies; and an urgent notice stored
    // after this turn's items were read (before the turn was running) cancels it now.
    if (this.cancelReason != null) this.notifyCancel()
    else this.cancelIfUrgent()
    let response: Record<string, unknown>
    try {
      response = await prompt
    } finally {
      this.turnRunning = false
      clearTimeout(this.cancelTimer)
    }
    const stopReason = typeof response?.stopReason === 'string' ? response.stopReason : 'unknown'
    const a = this.turnActivity
    const ms = Date.now() - started
    this.o.report.turnEnded({
      turn,
      stopReason,
      toolCalls: a.toolCalls,
      usage: usageOf(response),
      contextTokens: a.contextTokens,
      text: a.text,
      ms
    })
    this.o.run.note(`turn ${turn} ended: ${stopReason} after ${Math.round(ms / 100) / 10} s, ${a.toolCalls} tool calls`)
    return stopReason
  }

  /** Waits for work between turns; the text of what to do, or undefined when the session should end. */
  private async nextWork(): Promise<string | undefined> {
    while (!this.ending) {
      this.waitAbort = new AbortController()
      const answer = await this.o.swarm.waitForWork(WAIT_SLICE_MS, this.waitAbort.signal)
      if (this.ending) return undefined
      switch (answer.reason) {
        case 'goal_met':
          this.finish('the goal is met')
          return undefined
        case 'message':
          this.lastWork = undefined
          this.quietTurns = 0
          return answer.text
        case 'timeout':
          continue
        default: {
          // Held or ready and the board says what it said before the last turn: that turn changed
          // nothing, so wait a while (longer each time) before asking again, unless something arrives.
          if (answer.text === this.lastWork) {
            this.quietTurns++
            const b = this.o.quietBackoffMs ?? { min: 5_000, max: 300_000 }
            const delay = restartDelayMs(this.quietTurns, b.min, b.max)
            this.o.run.note(
              `the board says the same after ${this.quietTurns} turn(s) (${answer.text}); next turn in ${Math.round(delay / 1000)} s unless something arrives`
            )
            if (await this.sleepOrInbox(delay)) {
              this.lastWork = undefined
              continue
            }
          } else {
            this.quietTurns = 0
          }
          this.lastWork = answer.text
          return answer.text
        }
      }
    }
    return undefined
  }

  /** Holds the next turn while the operator has the swarm paused. */
  private async whilePaused(): Promise<void> {
    let told = false
    while (!this.ending && this.o.swarm.paused?.() === true) {
      if (!told) {
        this.o.run.note('the operator paused the swarm: no new turn until it resumes')
        told = true
      }
      await this.sleepOrInbox(PAUSE_CHECK_MS)
    }
    if (told && !this.ending) this.o.run.note('the operator resumed the swarm')
  }

  /** Sleeps for `ms`, or less if an inbox item arrives (true) or the session ends. */
  private async sleepOrInbox(ms: number): Promise<boolean> {
    return await new Promise<boolean>(resolve => {
      const timer = setTimeout(() => {
        this.wake = undefined
        resolve(false)
      }, ms)
      this.wake = () => {
        clearTimeout(timer)
        this.wake = undefined
        resolve(true)
      }
    })
  }

  private onInboxItem(): void {
    this.wake?.()
    this.cancelIfUrgent()
  }

  /**
   * Cancels the running turn if an urgent notice is unread; else the unread
   * items wait for the turn's end (the next turn carries them), said in the log.
   */
  private cancelIfUrgent(): void {
    if (!this.turnRunning || this.cancelReason != null || this.ending) return
    const turn = this.turn
    // Delivered items are marked read, so what is unread came during this turn.
    this.o.swarm
      .unread(MAX_NOTES_PER_TURN)
      .then(notes => {
        if (!this.turnRunning || this.turn !== turn || this.cancelReason != null || this.ending) return
        const urgent = notes.find(isUrgent)
        if (urgent == null) {
          if (notes.length > 0) this.o.run.note(`turn ${turn} goes on: ${notes.length} unread item(s) wait for its end`)
          return
        }
        this.cancelTurn(
          urgent.kind === OPERATOR_NOTICE
            ? 'the operator wrote to you (below): read it before you go on'
            : `your daemon's ${urgent.kind} notice${urgent.task !== '' ? ` for ${urgent.task}` : ''} (below): the work of that turn is no longer yours to do`
        )
      })
      .catch(() => {})
  }

  private cancelTurn(reason: string): void {
    this.cancelReason = reason
    this.o.run.note(`cancelling turn ${this.turn}: ${reason}`)
    this.notifyCancel()
  }

  private notifyCancel(): void {
    if (this.sessionId === '' || this.conn == null) return
    this.agent()
      .notify('session/cancel', { sessionId: this.sessionId })
      .catch(() => {})
    for (const a of this.asks) a.abort()
    clearTimeout(this.cancelTimer)
    const grace = this.o.cancelGraceMs ?? CANCEL_GRACE_MS
    this.cancelTimer = setTimeout(() => {
      if (this.turnRunning)
        this.fail(
          new AgentProtocolError('unresponsive', `the agent did not end its turn within ${Math.round(grace / 1000)} s of session/cancel`)
        )
    }, grace)
  }

  private async permission(req: PermissionRequest): Promise<{ outcome: PermissionDecision['outcome'] }> {
    const policy =
      this.alwaysGranted.size === 0
        ? this.o.policy
        : { ...this.o.policy, grants: new Set([...this.o.policy.grants, ...this.alwaysGranted]) }
    let d = decidePermission(policy, req, this.o.workspaces, this.turnActivity.titleOf(req.toolCall?.toolCallId))
    if (!d.allow && this.o.policy.ask === true && this.o.approvals != null && this.cancelReason == null) d = await this.askOperator(d, req)
    this.o.report.permission(d)
    this.o.run.note(`permission ${d.allow ? 'allowed' : 'denied'}: ${d.what} (${d.reason})`)
    // Once a turn is being cancelled, ACP wants pending permission requests answered "cancelled".
    if (this.cancelReason != null && this.turnRunning) return { outcome: { outcome: 'cancelled' } }
    return { outcome: d.outcome }
  }

  private async askOperator(d: PermissionDecision, req: PermissionRequest): Promise<PermissionDecision> {
    const asker = this.o.approvals as PermissionAsker
    this.o.run.note(`permission asked of the operator: ${d.what} (${d.reason})`)
    const waiting = new AbortController()
    this.asks.add(waiting)
    try {
      const a = await asker.ask({ what: d.what, category: d.category, grant: d.grant, reason: d.reason }, waiting.signal)
      if (a.allow && a.always && d.grant !== undefined) this.alwaysGranted.add(d.grant)
      return { ...d, allow: a.allow, reason: a.reason, outcome: answer(req.options, a.allow) }
    } catch (err) {
      return { ...d, reason: `${d.reason}; the operator could not be asked: ${(err as Error).message}` }
    } finally {
      this.asks.delete(waiting)
      this.lastInbound = this.now()
    }
  }

  private notification(method: string, params: unknown): void {
    if (method !== 'session/update') return
    const p = params as Record<string, unknown> | undefined
    const update = p?.update as Record<string, unknown> | undefined
    if (update == null || typeof update !== 'object' || (this.sessionId !== '' && p?.sessionId !== this.sessionId)) return
    for (const e of this.turnActivity.update(update)) this.o.report.activity(this.turn, e, this.turnActivity.doing)
  }

  /** Sends a request and counts it as awaited, so the idle watchdog knows the agent owes an answer. */
  private async request<T>(what: string, send: () => Promise<T>): Promise<T> {
    this.awaiting++
    this.lastInbound = this.now()
    try {
      return await send()
    } catch (err) {
      if (err instanceof AgentProtocolError) throw err
      const e = err as { code?: unknown; message?: string; data?: unknown }
      const details =
        typeof (e.data as { details?: unknown } | undefined)?.details === 'string' ? `: ${(e.data as { details: string }).details}` : ''
      if (what === 'session/new' && e.code === -32000)
        throw new AgentProtocolError(
          'auth_required',
          `the agent needs a login before it opens a session (${e.message ?? 'auth required'}): log in with the agent's own CLI first, or give it an API key in agentd's environment`
        )
      if (!this.o.run.alive()) throw new AgentProtocolError('closed', `the agent process ended during ${what}`)
      throw new AgentProtocolError(
        'refused',
        `the agent answered ${what} with an error: ${e.message ?? String(err)}${details}${typeof e.code === 'number' ? ` (code ${e.code})` : ''}`,
        { cause: err }
      )
    } finally {
      this.awaiting--
    }
  }

  private watchIdle(): void {
    const limit = this.o.idleTimeoutMs
    if (limit <= 0) return
    this.idleTimer = setInterval(
      () => {
        // a permission request waiting for the operator is the agentd's silence, not the agent's
        if (this.ending || this.awaiting === 0 || this.asks.size > 0 || this.now() - this.lastInbound < limit) return
        const what = `the agent sent nothing for ${Math.round(limit / 1000)} s while agentd waited on it (--harness-run-timeout)`
        this.o.run.note(`${what}: cancelling and restarting the session`)
        // Cancel first (the agent may still tidy up its turn), then end the process a moment later.
        const cancelled = this.turnRunning
        if (cancelled) this.notifyCancel()
        this.fail(
          new AgentProtocolError('unresponsive', what),
          true,
          cancelled ? Math.min(5_000, this.o.cancelGraceMs ?? CANCEL_GRACE_MS) : 0
        )
      },
      Math.max(50, Math.min(1_000, limit / 4))
    )
    this.idleTimer.unref()
  }

  private onClosed(): void {
    if (this.ending) return
    // The process usually ended; if it still runs with its stdout closed, end it.
    setTimeout(() => {
      if (!this.ending && this.o.run.alive())
        this.fail(new AgentProtocolError('closed', 'the agent closed its ACP connection (stdout) but kept running'))
    }, 1_000).unref()
  }

  private finish(why: string): void {
    if (this.ending) return
    this.ending = true
    this.o.carry.endedBecause = why
    this.cleanup()
    this.o.run.note(`${why}: ending the session`)
    this.o.run.end({ reason: why })
  }

  private fail(err: unknown, timedOut = false, afterMs = 0): void {
    if (this.ending) return
    this.ending = true
    const message = err instanceof Error ? err.message : String(err)
    this.o.carry.endedBecause = message
    this.cleanup()
    this.o.run.note(`the session failed: ${message}`)
    const end = (): void => {
      this.o.run.end({ failure: message, timedOut })
    }
    if (afterMs > 0) setTimeout(end, afterMs).unref()
    else end()
  }

  private cleanup(): void {
    clearInterval(this.idleTimer)
    clearTimeout(this.cancelTimer)
    this.offInbox?.()
    this.offInbox = undefined
    this.waitAbort?.abort()
    for (const a of this.asks) a.abort()
    this.wake?.()
  }

  private agent(): acp.ClientContext {
    if (this.conn == null) throw new AgentProtocolError('closed', 'no ACP connection')
    return this.conn.agent
  }
}
