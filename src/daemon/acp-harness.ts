// ACP mode inside agentd: each run of the harness supervisor is one ACP
// session (src/harness/acp/acp-session.ts) fed from this daemon: its inbox
// (read cursor included), `agency wait`'s answer, the goal, the held tasks.
// What the session does goes to the agent's status line (throttled: each
// change is a presence heartbeat), to `agency events` (type "session") and to
// the agentd_harness_* metrics.
import { realpathSync } from 'node:fs'
import { AcpSession, newCarry, type PermissionAsker, type SessionReport, type SessionSwarm } from '../harness/acp/acp-session.js'
import type { AcpAgentLaunch } from '../harness/acp/acp-agents.js'
import type { PermissionPolicy } from '../harness/acp/permission-policy.js'
import type { HeldTask, InboxNote } from '../harness/acp/turn-composer.js'
import type { TokenUsage } from '../harness/acp/session-activity.js'
import { checkLaunchCommand } from '../harness/command-check.js'
import type { HarnessRun, HarnessRunSession } from '../harness/types.js'
import { VERSION } from '../version.js'
import type { Metrics } from '../metrics/metrics.js'
import type { AgentInbox, InboxItem } from './agent-inbox.js'
import type { EventBus } from './event-bus.js'
import type { WaitAnswer } from './work-wait.js'

/** What an ACP session needs of the daemon beside it; the composition root (daemon.ts) builds it. */
export interface AcpHost {
  /** --acp-permissions as given (default workspace,agency,shell) */
  permissions?: string
  /** the agent's inbox: what the next turn carries, and its read cursor */
  inbox: Pick<AgentInbox, 'read' | 'unread' | 'markRead'>
  /** called whenever an inbox item is stored; returns the unsubscribe function */
  onInbox: (listener: () => void) => () => void
  /** agency wait: blocks until there is something to do, and says what */
  waitForWork: (timeoutMs: number, signal?: AbortSignal) => Promise<WaitAnswer>
  goalMet: () => boolean
  /** the tasks the daemon holds, with their titles */
  held: () => HeldTask[]
  metrics: Pick<
    Metrics,
    | 'harnessTurns'
    | 'harnessTokens'
    | 'harnessContextTokens'
    | 'harnessToolCalls'
    | 'harnessPermissions'
    | 'harnessPushed'
    | 'harnessProtocolErrors'
  >
  events: Pick<EventBus, 'emit'>
  /** the agent's status line (peers see it in heartbeats) */
  setStatusLine: (text: string) => Promise<void>
  /** an operator paused the swarm: no new turn starts */
  paused?: () => boolean
  /** the operator, for requests beyond the grants when the policy says ask */
  approvals?: PermissionAsker
  /** a turn's usage, to be written as a usage entry of this agent's (its dollars estimated) */
  recordTurn?: (usage: TokenUsage | undefined, ms: number) => void
}

export interface AcpHarnessOptions {
  name: string
  agent: AcpAgentLaunch
  workspace: string
  prompt: string
  policy: PermissionPolicy
  /** --harness-run-timeout: a session silent this long while agentd waits on it is restarted. */
  idleTimeoutMs: number
}

/** Status lines go out with presence heartbeats: at most one change this often. */
const STATUS_LINE_EVERY_MS = 3_000

/** The supervisor hooks that make its runs ACP sessions. */
export function acpHarness(d: AcpHost, o: AcpHarnessOptions): { beforeSpawn: () => void; session: (run: HarnessRun) => HarnessRunSession } {
  const carry = newCarry()
  const swarm = sessionSwarm(d)
  const report = sessionReport(d, o.name)
  const workspaces = [o.workspace]
  try {
    workspaces.push(realpathSync(o.workspace))
  } catch {
    /* not there yet */
  }
  return {
    // Not installed: a clear failed start (the daemon keeps serving; the failure policy backs off).
    beforeSpawn: () => {
      checkLaunchCommand(o.agent.launch)
    },
    session: run => {
      const s = new AcpSession({
        run,
        name: o.name,
        mcpServers: o.agent.mcpServers,
        workspace: o.workspace,
        workspaces,
        prompt: o.prompt,
        swarm,
        report,
        policy: o.policy,
        approvals: d.approvals,
        carry,
        idleTimeoutMs: o.idleTimeoutMs,
        clientVersion: VERSION,
        forgetsCancelledTurns: o.agent.forgetsCancelledTurns
      })
      s.start()
      return s
    }
  }
}

function sessionSwarm(d: AcpHost): SessionSwarm {
  return {
    unread: async limit => (await d.inbox.read({ peek: true, limit })).map(note),
    unreadCount: () => d.inbox.unread(),
    markRead: async cursor => {
      await d.inbox.markRead(cursor)
    },
    onInbox: listener => d.onInbox(listener),
    waitForWork: async (timeoutMs, signal) => await d.waitForWork(timeoutMs, signal),
    goalMet: () => d.goalMet(),
    held: () => d.held(),
    paused: () => d.paused?.() ?? false
  }
}

function note(item: InboxItem): InboxNote {
  const m = item.record.message
  return { cursor: item.record.cursor, kind: item.kind, from: m.from, fromName: m.fromName, task: item.task, text: m.text, time: m.time }
}

function sessionReport(d: AcpHost, name: string): SessionReport {
  const m = d.metrics
  const event = (text: string, detail: Record<string, unknown>, task = ''): void => {
    d.events.emit({ type: 'session', text, task, detail: { harness: name, ...detail } })
  }
  const status = throttledStatusLine(d, name)
  return {
    turnStarted: (turn, why) => {
      event(`turn ${turn} started (${why})`, { event: 'turn_started', turn, why })
      status(`turn ${turn}: ${why}`)
    },
    turnEnded: t => {
      m.harnessTurns.inc({ stop_reason: KNOWN_STOP.has(t.stopReason) ? t.stopReason : 'unknown' })
      if (t.usage != null) {
        m.harnessTokens.inc({ type: 'input' }, t.usage.input)
        m.harnessTokens.inc({ type: 'output' }, t.usage.output)
        m.harnessTokens.inc({ type: 'thought' }, t.usage.thought)
        m.harnessTokens.inc({ type: 'cached_read' }, t.usage.cachedRead)
        m.harnessTokens.inc({ type: 'cached_write' }, t.usage.cachedWrite)
      }
      if (t.contextTokens != null) m.harnessContextTokens.set(t.contextTokens)
      d.recordTurn?.(t.usage, t.ms)
      event(`turn ${t.turn} ended: ${t.stopReason}, ${t.toolCalls} tool calls${t.text !== '' ? `: ${oneLine(t.text, 200)}` : ''}`, {
        event: 'turn_ended',
        turn: t.turn,
        stopReason: t.stopReason,
        toolCalls: t.toolCalls,
        usage: t.usage ?? null,
        ms: Math.round(t.ms)
      })
      status(`turn ${t.turn} ${t.stopReason}`)
    },
    activity: (turn, e, doing) => {
      if (e.kind === 'tool_call') {
        m.harnessToolCalls.inc({ kind: e.toolKind })
        event(`tool call: ${oneLine(e.title, 200)} (${e.toolKind})`, {
          event: 'tool_call',
          turn,
          id: e.id,
          title: e.title,
          kind: e.toolKind
        })
      } else if (e.kind === 'tool_call_done') {
        event(`tool call ${e.status}: ${oneLine(e.title, 200)}`, {
          event: 'tool_call_done',
          turn,
          id: e.id,
          title: e.title,
          kind: e.toolKind,
          status: e.status
        })
      } else {
        event(
          `plan: ${e.entries
            .map(x => `[${x.status}] ${oneLine(x.content, 80)}`)
            .join('; ')
            .slice(0, 400)}`,
          { event: 'plan', turn, entries: e.entries }
        )
      }
      if (doing !== '') status(`turn ${turn}: ${doing}`)
    },
    permission: p => {
      m.harnessPermissions.inc({ decision: p.allow ? 'allowed' : 'denied' })
      event(`permission ${p.allow ? 'allowed' : 'denied'}: ${oneLine(p.what, 200)} (${p.reason})`, {
        event: 'permission',
        allow: p.allow,
        category: p.category,
        what: p.what,
        reason: p.reason
      })
    },
    delivered: notes => {
      m.harnessPushed.inc(notes.length)
      event(`delivered ${notes.length} inbox item(s) into the session: ${notes.map(n => n.kind).join(', ')}`, {
        event: 'delivered',
        cursors: notes.map(n => n.cursor),
        kinds: notes.map(n => n.kind)
      })
    },
    fault: err => {
      m.harnessProtocolErrors.inc({ fault: err.fault })
      event(`session fault (${err.fault}): ${err.message}`, { event: 'fault', fault: err.fault })
    }
  }
}

const KNOWN_STOP = new Set(['end_turn', 'max_tokens', 'max_turn_requests', 'refusal', 'cancelled'])

/** Sets the status line at most every few seconds, keeping the latest text for the next slot. */
function throttledStatusLine(d: AcpHost, name: string): (text: string) => void {
  let last = 0
  let pending: string | undefined
  let timer: NodeJS.Timeout | undefined
  const send = (text: string): void => {
    last = Date.now()
    d.setStatusLine(`${name} ${oneLine(text, 200)}`.slice(0, 1000)).catch(() => {})
  }
  return text => {
    const wait = last + STATUS_LINE_EVERY_MS - Date.now()
    if (wait <= 0 && timer == null) {
      send(text)
      return
    }
    pending = text
    timer ??= setTimeout(
      () => {
        timer = undefined
        if (pending != null) {
          const t = pending
          pending = undefined
          send(t)
        }
      },
      Math.max(0, wait)
    ).unref()
  }
}

function oneLine(text: string, max: number): string {
  const t = text.replace(/\s+/g, ' ').trim()
  return t.length > max ? `${t.slice(0, max - 3)}...` : t
}
