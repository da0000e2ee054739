// agentd's ACP client against a fake agent process (fake-acp-agent.mjs), under
// the real supervisor: turns and what they carry, a notice that cancels the
// running turn, the permission policy's answers, a restart after a crash with
// the summary, a clean stop, and an agent that breaks the protocol.
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { AcpSession, newCarry, type SessionReport, type SessionSwarm } from '../../../src/harness/acp/acp-session.js'
import { parsePermissionPolicy, type PermissionDecision } from '../../../src/harness/acp/permission-policy.js'
import type { PermissionAsker } from '../../../src/harness/acp/acp-session.js'
import type { InboxNote } from '../../../src/harness/acp/turn-composer.js'
import { HarnessSupervisor, harnessLogPath, type HarnessExit } from '../../../src/harness/supervisor.js'
import type { AgentProtocolError } from '../../../src/core/errors.js'
import { waitFor as waitForOutcome, type WaitForOptions } from '../../helpers/wait-for.js'

// Every wait is for an outcome, with a deadline only a broken session reaches.
const waitFor = async <T>(check: () => T | Promise<T>, o: WaitForOptions = {}): ReturnType<typeof waitForOutcome<T>> =>
  await waitForOutcome(check, { timeoutMs: 60_000, intervalMs: 50, ...o })
const TEST_MS = 120_000

const FAKE_AGENT = fileURLToPath(new URL('./fake-acp-agent.mjs', import.meta.url))

/** The daemon's side, in memory: an inbox with a read cursor, the goal, held tasks. */
class FakeSwarm implements SessionSwarm {
  notes: InboxNote[] = []
  readCursor = 0
  goal = false
  heldTasks = [{ task: 'greet', epoch: 1, title: 'a greet function' }]
  private listeners = new Set<() => void>()

  add(kind: string, text: string, task = ''): void {
    this.notes.push({
      cursor: this.notes.length + 1,
      kind,
      from: kind === 'message' ? 'peer-b' : 'me',
      fromName: kind === 'message' ? 'b' : 'agentd',
      task,
      text,
      time: Date.now()
    })
    for (const l of [...this.listeners]) l()
  }

  async unread(limit: number): Promise<InboxNote[]> {
    return this.notes.filter(n => n.cursor > this.readCursor).slice(0, limit)
  }
  unreadCount(): number {
    return this.notes.filter(n => n.cursor > this.readCursor).length
  }
  async markRead(cursor: number): Promise<void> {
    this.readCursor = Math.max(this.readCursor, cursor)
  }
  onInbox(listener: () => void): () => void {
    this.listeners.add(listener)
    return () => {
      this.listeners.delete(listener)
    }
  }
  pausedNow = false
  paused(): boolean {
    return this.pausedNow
  }
  goalMet(): boolean {
    return this.goal
  }
  held(): Array<{ task: string; epoch: number; title?: string }> {
    return this.heldTasks
  }
  meetGoal(): void {
    this.goal = true
    for (const l of [...this.listeners]) l()
  }

  async waitForWork(timeoutMs: number, signal: AbortSignal): Promise<{ reason: string; text: string }> {
    const now = (): { reason: string; text: string } | undefined =>
      this.goal
        ? { reason: 'goal_met', text: 'stop' }
        : this.unreadCount() > 0
          ? { reason: 'message', text: `${this.unreadCount()} unread` }
          : undefined
    return (
      now() ??
      (await new Promise(resolve => {
        const done = (a: { reason: string; text: string }): void => {
          off()
          clearTimeout(timer)
          resolve(a)
        }
        const off = this.onInbox(() => {
          const a = now()
          if (a != null) done(a)
        })
        const timer = setTimeout(() => {
          done({ reason: 'timeout', text: '' })
        }, timeoutMs)
        signal.addEventListener(
          'abort',
          () => {
            done({ reason: 'timeout', text: '' })
          },
          { once: true }
        )
      }))
    )
  }
}

/** A clock the test moves forward: the idle watchdog reads it. */
class TestClock {
  private offset = 0
  now = (): number => Date.now() + this.offset
  advance(ms: number): void {
    this.offset += ms
  }
}

interface Rig {
  dir: string
  clock: TestClock
  swarm: FakeSwarm
  supervisor: HarnessSupervisor
  exits: HarnessExit[]
  permissions: PermissionDecision[]
  faults: AgentProtocolError[]
  turns: Array<{ turn: number; stopReason: string; toolCalls: number }>
  /** What the fake agent recorded: prompts, permission answers, cancels. */
  agentLog: () => Promise<Array<Record<string, any>>>
  harnessLog: () => Promise<string>
}

const rigs: Rig[] = []
afterEach(async () => {
  for (const r of rigs.splice(0)) {
    await r.supervisor.stop()
    await rm(r.dir, { recursive: true, force: true })
  }
})

async function rig(
  mode: string,
  o: {
    policy?: string
    approvals?: PermissionAsker
    idleTimeoutMs?: number
    limits?: { floodBurst?: number; floodRatePerSec?: number }
    forgetsCancelledTurns?: boolean
    stopGraceMs?: number
  } = {}
): Promise<Rig> {
  const dir = await mkdtemp(join(tmpdir(), 'agency-acp-session-'))
  const swarm = new FakeSwarm()
  const exits: HarnessExit[] = []
  const permissions: PermissionDecision[] = []
  const faults: AgentProtocolError[] = []
  const turns: Rig['turns'] = []
  const carry = newCarry()
  const clock = new TestClock()
  const report: SessionReport = {
    turnStarted: () => {},
    turnEnded: t => {
      turns.push(t)
    },
    activity: () => {},
    permission: d => {
      permissions.push(d)
    },
    delivered: () => {},
    fault: err => {
      faults.push(err)
    }
  }
  const agentLogFile = join(dir, 'agent.log')
  const supervisor = new HarnessSupervisor({
    launch: { command: process.execPath, args: [FAKE_AGENT, mode], env: { FAKE_AGENT_LOG: agentLogFile }, cwd: dir, files: [] },
    dataDir: dir,
    minBackoffMs: 50,
    maxBackoffMs: 200,
    // Generous: an agent asked to end (stdin closed, a turn cancelled) is given the time it takes.
    stopGraceMs: o.stopGraceMs ?? 60_000,
    onExit: e => {
      exits.push(e)
    },
    session: run => {
      const s = new AcpSession({
        run,
        name: 'acp:fake',
        mcpServers: [{ name: 'agency', command: '/usr/bin/agency', args: ['mcp'], env: [{ name: 'AGENCY_TOKEN', value: 'secret-token' }] }],
        workspace: dir,
        workspaces: [dir],
        prompt: '# You are agent-1\nDo the work.',
        swarm,
        report,
        policy: parsePermissionPolicy(o.policy),
        approvals: o.approvals,
        carry,
        idleTimeoutMs: o.idleTimeoutMs ?? 0,
        now: clock.now,
        clientVersion: 'test',
        limits: o.limits,
        forgetsCancelledTurns: o.forgetsCancelledTurns
      })
      s.start()
      return s
    }
  })
  const r: Rig = {
    dir,
    clock,
    swarm,
    supervisor,
    exits,
    permissions,
    faults,
    turns,
    agentLog: async () =>
      (await readFile(agentLogFile, 'utf8').catch(() => ''))
        .split('\n')
        .filter(l => l !== '')
        .map(l => JSON.parse(l)),
    harnessLog: async () => await readFile(harnessLogPath(dir), 'utf8').catch(() => '')
  }
  rigs.push(r)
  await supervisor.start()
  return r
}

const prompts = async (r: Rig): Promise<string[]> => (await r.agentLog()).filter(e => e.event === 'prompt').map(e => e.text)

describe('an ACP session with a (fake) agent process', () => {
  it(
    'opens the session in the workspace with the MCP server, sends the prompt first, then each inbox item once in the next turn',
    async () => {
      const r = await rig('ok')
      await waitFor(async () => (await prompts(r)).length === 1, { what: 'the first turn' })
      const first = (await prompts(r))[0]
      expect(first).toMatch(/^# You are agent-1\nDo the work\./)
      expect(first).toContain('## This session')
      const opened = (await r.agentLog()).find(e => e.event === 'session/new')
      expect(opened?.cwd).toBe(r.dir)
      expect(opened?.mcpServers).toEqual([
        { name: 'agency', command: '/usr/bin/agency', args: ['mcp'], env: [{ name: 'AGENCY_TOKEN', value: 'secret-token' }] }
      ])

      // Idle between turns: a message starts the next turn, and is marked read.
      await waitFor(() => r.turns.length === 1, { what: 'the first turn to end' })
      r.swarm.add('message', 'can you look at src/a.js?')
      await waitFor(async () => (await prompts(r)).length === 2, { what: 'the second turn' })
      const second = (await prompts(r))[1]
      expect(second).toContain('[agentd] New in your inbox (1, now marked read):\n- message from b (peer-b): can you look at src/a.js?')
      expect(second).not.toContain('## This session')
      expect(r.swarm.readCursor).toBe(1)
      r.swarm.add('overlap', 'your task greet overlaps lint held by c', 'greet')
      await waitFor(async () => (await prompts(r)).length === 3, { what: 'the third turn' })
      const third = (await prompts(r))[2]
      expect(third).toContain('- notice overlap (task greet): your task greet overlaps lint held by c')
      expect(third).not.toContain('can you look at src/a.js?')

      // The raw stream is in the harness log, the MCP server's token masked.
      const log = await r.harnessLog()
      expect(log).toMatch(/> \{"jsonrpc":"2.0","id":\d+,"method":"initialize"/)
      expect(log).toMatch(/< \{"jsonrpc":"2.0","method":"session\/update"/)
      expect(log).toContain('"name":"AGENCY_TOKEN","value":"***"')
      expect(log).not.toContain('secret-token')

      // The goal met: the session is ended cleanly, not as a failure.
      r.swarm.meetGoal()
      await waitFor(() => r.exits.length === 1, { what: 'the agent to exit' })
      expect(r.exits[0].failure).toBeUndefined()
      expect(r.exits[0].endedBy).toBe('the goal is met')
      expect((await r.agentLog()).some(e => e.event === 'stdin closed')).toBe(true)
    },
    TEST_MS
  )

  it(
    'answers permission requests by the policy: a write outside the workspace is denied, the shell allowed, by option kind',
    async () => {
      const r = await rig('ok')
      await waitFor(async () => (await r.agentLog()).some(e => e.event === 'permissions'), { what: 'the permission answers' })
      const answers = (await r.agentLog()).find(e => e.event === 'permissions')
      expect(answers?.write).toEqual({ outcome: 'selected', optionId: 'no' })
      expect(answers?.shell).toEqual({ outcome: 'selected', optionId: 'yes' })
      expect(r.permissions.map(p => [p.allow, p.category])).toEqual([
        [false, 'file'],
        [true, 'shell']
      ])
      const log = await r.harnessLog()
      expect(log).toContain('agentd: permission denied: edit /outside/x.txt (outside the workspace: /outside/x.txt)')
      expect(log).toContain('agentd: permission allowed: shell: npm test (the shell is allowed)')
    },
    TEST_MS
  )

  it(
    'with ask, a request beyond the grants waits for the operator: an approval lets the same turn go on, --always grants it for the session',
    async () => {
      const asked: Array<{ what: string; grant?: string; answer: (a: { allow: boolean; always: boolean; reason: string }) => void }> = []
      const approvals: PermissionAsker = {
        ask: async q =>
          await new Promise(resolve => {
            asked.push({ ...q, answer: resolve })
          })
      }
      const r = await rig('ok', { policy: 'workspace,agency,shell,ask', approvals })
      await waitFor(() => asked.length === 1, { what: 'the operator to be asked' })
      expect(asked[0]).toMatchObject({ what: 'edit /outside/x.txt', grant: 'anywhere' })
      // the turn waits: the agent has no answer yet
      expect((await r.agentLog()).some(e => e.event === 'permissions')).toBe(false)
      asked[0].answer({ allow: true, always: true, reason: 'approved by the operator' })
      await waitFor(async () => (await r.agentLog()).some(e => e.event === 'permissions'), { what: 'the permission answers' })
      const answers = (await r.agentLog()).find(e => e.event === 'permissions')
      expect(answers?.write).toEqual({ outcome: 'selected', optionId: 'yes' })
      expect(answers?.shell).toEqual({ outcome: 'selected', optionId: 'yes' })
      expect(r.permissions.map(p => [p.allow, p.reason])).toEqual([
        [true, 'approved by the operator'],
        [true, 'the shell is allowed']
      ])
      // the next turn writes outside again: granted for the session, the operator is not asked again
      r.swarm.add('message', 'next')
      await waitFor(async () => (await r.agentLog()).filter(e => e.event === 'permissions').length === 2, {
        what: "the second turn's permissions"
      })
      expect(asked).toHaveLength(1)
    },
    TEST_MS
  )

  it(
    'starts no turn while the operator has the swarm paused, and goes on when it resumes',
    async () => {
      const r = await rig('ok')
      await waitFor(() => r.turns.length === 1, { what: 'the first turn to end' })
      r.swarm.pausedNow = true
      r.swarm.add('message', 'work while paused?')
      await waitFor(async () => (await r.harnessLog()).includes('the operator paused the swarm: no new turn until it resumes'), {
        what: 'the session to hold its next turn'
      })
      expect(r.turns).toHaveLength(1)
      r.swarm.pausedNow = false
      r.swarm.add('resumed', 'the operator resumed the swarm')
      await waitFor(() => r.turns.length === 2, { what: 'the turn after the resume' })
      expect(await r.harnessLog()).toContain('the operator resumed the swarm')
    },
    TEST_MS
  )

  it(
    'with ask, a denied or unanswered request is denied with the reason',
    async () => {
      const approvals: PermissionAsker = { ask: async () => ({ allow: false, always: false, reason: 'nobody answered within 60 s' }) }
      const r = await rig('ok', { policy: 'workspace,agency,shell,ask', approvals })
      await waitFor(async () => (await r.agentLog()).some(e => e.event === 'permissions'), { what: 'the permission answers' })
      expect((await r.agentLog()).find(e => e.event === 'permissions')?.write).toEqual({ outcome: 'selected', optionId: 'no' })
      expect(await r.harnessLog()).toContain('agentd: permission denied: edit /outside/x.txt (nobody answered within 60 s)')
    },
    TEST_MS
  )

  it(
    'cancels the running turn when a claim is lost, says why in the next turn, and does not cancel for a message',
    async () => {
      const r = await rig('ok')
      await waitFor(() => r.turns.length === 1, { what: 'the first turn to end' })
      r.swarm.add('message', 'HOLD-TURN please')
      await waitFor(async () => (await r.agentLog()).some(e => e.event === 'holding'), { what: 'the second turn to run' })
      r.swarm.add('message', 'a second message, which waits')
      // A message does not stop the turn: the session says so once it has looked at it.
      await waitFor(async () => (await r.harnessLog()).includes('agentd: turn 2 goes on: 1 unread item(s) wait for its end'), {
        what: 'the session to let the turn go on'
      })
      expect(await r.harnessLog()).not.toContain('cancelling turn')
      r.swarm.add('claim_lost', 'your claim on greet@1 is lost (outbid): peer-b holds it now', 'greet')
      await waitFor(async () => (await prompts(r)).length === 3, { what: 'the turn after the cancel' })
      expect(r.turns[1].stopReason).toBe('cancelled')
      const next = (await prompts(r))[2]
      expect(next).toContain("[agentd] I stopped your previous turn: your daemon's claim_lost notice for greet (below)")
      expect(next).toContain('- message from b (peer-b): a second message, which waits')
      expect(next).toContain('- notice claim_lost (task greet): your claim on greet@1 is lost (outbid): peer-b holds it now')
      expect(next).not.toContain('HOLD-TURN please')
      expect((await r.agentLog()).filter(e => e.event === 'cancel')).toHaveLength(1)
    },
    TEST_MS
  )

  it(
    'says a stopped turn again to an agent that drops stopped turns from its history',
    async () => {
      const r = await rig('ok', { forgetsCancelledTurns: true })
      await waitFor(() => r.turns.length === 1, { what: 'the first turn to end' })
      r.swarm.add('message', 'HOLD-TURN and a question')
      await waitFor(async () => (await r.agentLog()).some(e => e.event === 'holding'), { what: 'the second turn to run' })
      r.swarm.add('claim_lost', 'your claim on greet@1 is lost (outbid)', 'greet')
      await waitFor(async () => (await prompts(r)).length === 3, { what: 'the turn after the cancel' })
      const next = (await prompts(r))[2]
      expect(next).toContain(
        '[agentd] That turn had told you (repeated: you do not keep a stopped turn):\n- message from b (peer-b): HOLD-TURN and a question'
      )
      expect(next).not.toMatch(/^# You are agent-1/) // the stopped turn was not the first: no prompt again
    },
    TEST_MS
  )

  it(
    'restarts a crashed agent with a new session that says where it was',
    async () => {
      const r = await rig('crash-once')
      await waitFor(() => r.exits.length === 1, { what: 'the crash' })
      expect(r.exits[0].code).toBe(3)
      await waitFor(async () => (await prompts(r)).length === 2, { what: "the new session's first turn" })
      const resumed = (await prompts(r))[1]
      expect(resumed).toMatch(/^# You are agent-1/)
      expect(resumed).toContain('[agentd] This is a new session: the previous one ended')
      expect(resumed).toContain('- you hold greet@1 (a greet function)')
      expect((await r.agentLog()).filter(e => e.event === 'session/new')).toHaveLength(2)
    },
    TEST_MS
  )

  it(
    'stop() cancels the running turn and the agent exits',
    async () => {
      const r = await rig('ok')
      await waitFor(() => r.turns.length === 1, { what: 'the first turn to end' })
      r.swarm.add('message', 'HOLD-TURN')
      await waitFor(async () => (await r.agentLog()).some(e => e.event === 'holding'), { what: 'a running turn' })
      await r.supervisor.stop()
      expect(r.supervisor.state).toBe('stopped')
      const log = await r.agentLog()
      expect(log.some(e => e.event === 'cancel')).toBe(true)
      expect(log.some(e => e.event === 'stdin closed')).toBe(true)
      expect(r.turns[1]?.stopReason).toBe('cancelled')
    },
    TEST_MS
  )
})

describe('a session that stops answering', () => {
  it(
    'is cancelled, then restarted after the run timeout (silence while agentd waits on it)',
    async () => {
      const r = await rig('ok', { idleTimeoutMs: 20 * 60_000 })
      await waitFor(() => r.turns.length === 1, { what: 'the first turn to end' })
      r.swarm.add('message', 'SILENT-TURN')
      // The agent has the turn and will never answer it: the watchdog's clock is moved past the timeout.
      await waitFor(async () => (await prompts(r)).some(p => p.includes('SILENT-TURN')), { what: 'the silent turn to reach the agent' })
      expect(r.exits).toHaveLength(0)
      r.clock.advance(20 * 60_000)
      await waitFor(() => r.exits.length === 1, { what: 'the hung session to be ended' })
      expect(r.exits[0].timedOut).toBe(true)
      expect(r.exits[0].failure).toBe('the agent sent nothing for 1200 s while agentd waited on it (--harness-run-timeout)')
      expect((await r.agentLog()).some(e => e.event === 'cancel')).toBe(true)
      // Restarted: a new session, which is told the last turn again since it never finished.
      await waitFor(async () => (await prompts(r)).length === 3, { what: "the new session's first turn" })
      expect((await prompts(r))[2]).toContain(
        'the last turn of that session had told you (repeated here because it did not finish):\n  - message from b (peer-b): SILENT-TURN'
      )
    },
    TEST_MS
  )
})

describe('an agent that breaks the protocol: a clear failure, and the supervisor restarts it with backoff', () => {
  it(
    'refuses an agent that answers initialize with another protocol version',
    async () => {
      const r = await rig('bad-version')
      await waitFor(() => r.exits.length >= 2, { what: 'two failed runs' })
      expect(r.exits[0].failure).toBe(
        'the agent answered initialize with ACP protocol version 2; agentd speaks version 1: use an agent (or an adapter version) that speaks ACP v1'
      )
      expect(r.supervisor.restarts).toBeGreaterThanOrEqual(1)
      expect((await r.agentLog()).some(e => e.event === 'session/new')).toBe(false)
    },
    TEST_MS
  )

  it(
    'ends a session whose agent prints malformed JSON-RPC on stdout',
    async () => {
      const r = await rig('malformed')
      await waitFor(() => r.exits.length >= 1, { what: 'the failed run' })
      expect(r.exits[0].failure).toMatch(/^the agent sent 20 malformed JSON-RPC lines on stdout/)
      expect(r.faults.map(f => f.fault)).toContain('malformed')
      const log = await r.harnessLog()
      expect(log).toContain('malformed JSON-RPC from the agent (1 of at most 20), dropped: not JSON: Starting the fake agent...')
      expect(log).toContain('dropped: no "jsonrpc": "2.0": {"not":"json-rpc"}')
      expect(log).toContain('dropped: not a JSON object: [1,2,3]')
    },
    TEST_MS
  )

  it(
    'ends a session whose agent floods it with updates',
    async () => {
      // A short stop grace: the agent is killed at the end, mid-flood (it cannot answer a cancel then).
      const r = await rig('flood', { limits: { floodBurst: 2_000, floodRatePerSec: 100 }, stopGraceMs: 2_000 })
      await waitFor(() => r.exits.length >= 1, { what: 'the failed run' })
      expect(r.exits[0].failure).toBe('the agent sent more than 2000 messages faster than 100 a second: stopping it')
      expect(r.faults.map(f => f.fault)).toContain('flood')
    },
    TEST_MS
  )

  it(
    'says a login is needed when session/new answers auth required',
    async () => {
      const r = await rig('auth')
      await waitFor(() => r.exits.length >= 1, { what: 'the failed run' })
      expect(r.exits[0].failure).toMatch(/^the agent needs a login before it opens a session \(Authentication required\)/)
    },
    TEST_MS
  )
})
