// The swarm around an ACP session, for the real ACP agent tests: the greeter
// project with its goal and one task, the agent's daemon (A) running
// `--harness acp:<agent>`, and a real peer daemon (B) that takes the task from
// A mid-turn and then writes to A. Only the model behind the agent is scripted.
//
// How B takes the claim without any trick: B learns the board from A, A goes
// offline, and B claims `greet` while it cannot see A; A comes back with its
// agent, appends one more entry before the agent's first step (so its claim's
// lamport is higher), and its agent claims greet too. When B comes online the
// two claims meet: B's smaller (lamport, author) wins, and A's daemon tells A
// its claim is lost (outbid), as after a healed partition. B then sends A a
// direct message and releases the task, so A can take it again at the next
// epoch and finish it. (B claims in the process it learned the board in: a
// daemon restarted with no peer waits 10 s before its first entry.)
import { mkdir } from 'node:fs/promises'
import { delimiter, join } from 'node:path'
import { afterEach, expect } from 'vitest'
import { connectAgency, type Agency } from '../../src/client/agency.js'
import type { AgencyClient, Event, StatusReply } from '../../src/gen/agency/v1/api.js'
import type { LocalDaemon } from '../../src/swarm/local-daemon.js'
import { Scratch } from '../helpers/agent-loop.js'
import { waitFor } from '../helpers/wait-for.js'
import { CLI_BIN_DIR, count, git, harnessLog, seedSharedRepo } from './agent-daemon.js'
import { GOAL_MET_ANSWER, IDLE_ANSWER, type Move, type Playbook, type TakenStep } from './models/agent-script.js'
import { GREETER, TEST_COMMAND } from './projects.js'

/**
 * The whole scenario's budget (the test's timeout): each wait in it waits for
 * its outcome until this runs out, never for a step's own time. A run takes
 * 30-50 s; the budget is for a crowded machine.
 */
export const ACP_SCENARIO_MS = 480_000

/** What the scripted model knows: the greeter's work, and to end its turn when nothing is ready. */
export const ACP_PLAYBOOK: Playbook = { ...GREETER.playbook, endTurnWhenIdle: true }

export interface AcpScenario {
  repo: string
  home: string
  /** The agent's daemon, running the ACP harness. */
  a: LocalDaemon
  /** B's data dir; B is offline (stopped) until peerOnline(). */
  peerOnline: () => Promise<LocalDaemon>
  /** Everything A's WatchEvents stream said since it started. */
  events: Event[]
  api: (d: LocalDaemon) => Agency
  /** The text of A's /metrics. */
  metrics: () => Promise<string>
  /** Closes the API clients (the daemons are the Scratch's). */
  close: () => void
  /** What is left of the scenario's budget (ms), less the time the clean-up needs. */
  left: () => number
}

/** A message from B that the test looks for in what reaches the model. */
export const PEER_MESSAGE = 'I took greet while we could not see each other; I am releasing it now, it is yours again. -- B'

export async function startAcpScenario(
  scratch: Scratch,
  o: { name: string; harness: string; model: ScenarioModel; setup: (home: string) => Promise<Record<string, string>> }
): Promise<AcpScenario> {
  const deadline = Date.now() + ACP_SCENARIO_MS - 45_000
  const left = (): number => Math.max(0, deadline - Date.now())
  const dir = await scratch.dir(`agency-${o.name}-`)
  const repo = await seedSharedRepo(dir, GREETER.files)
  const home = join(dir, 'home')
  await mkdir(home, { recursive: true })
  const env = {
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_CACHE_HOME: join(home, '.cache'),
    XDG_DATA_HOME: join(home, '.local', 'share'),
    XDG_STATE_HOME: join(home, '.local', 'state'),
    PATH: [CLI_BIN_DIR, process.env.PATH].filter(p => p != null && p !== '').join(delimiter),
    ...(await o.setup(home))
  }
  const dataA = join(dir, 'a')
  const dataB = join(dir, 'b')
  // A lease that a starved daemon cannot lose: whether B still holds greet must not depend on its
  // heartbeats arriving in time (the scenario is about the session, not about expiry).
  const peerArgs = ['--settle-ms', '300', '--live-timeout-ms', '300000']
  const common = ['--repo', repo, '--mirror-dir', join(dir, 'mirrors'), ...peerArgs]
  const clients: Agency[] = []
  const api = (d: LocalDaemon): Agency => {
    const c = connectAgency(d.grpc)
    clients.push(c)
    return c
  }
  const call = async <T>(d: LocalDaemon, f: (c: AgencyClient) => (req: any, ...rest: any[]) => unknown, req: unknown): Promise<T> => {
    const c = connectAgency(d.grpc)
    try {
      return await c.call(f as any, req as any)
    } finally {
      c.close()
    }
  }

  // ---- the board, on A; B learns it, then A stops ----
  const seedA = await scratch.daemon(`${o.name}-a-seed`, { dataDir: dataA, logFile: join(dir, 'a-seed.log'), env, extraArgs: common })
  await call(seedA, c => c.setGoal, { text: GREETER.goal, files: [], testCommand: TEST_COMMAND })
  const t = GREETER.task
  await call(seedA, c => c.addTask, { id: t.id, title: t.title, description: t.description, deps: [], scope: t.scope, priority: 0 })
  const seedB = await scratch.daemon(`${o.name}-b-seed`, {
    dataDir: dataB,
    logFile: join(dir, 'b-seed.log'),
    peers: seedA.addrs,
    extraArgs: peerArgs
  })
  await waitFor(async () => (await call<{ task?: { id: string } }>(seedB, c => c.getTask, { id: t.id })).task?.id === t.id, {
    timeoutMs: left(),
    what: 'B to learn the board from A'
  })
  if ((await seedA.stop('SIGTERM')) !== 0) throw new Error('A did not stop cleanly')

  // ---- B, alone, claims greet, and stops ----
  const claimed = await call<{ outcome: number }>(seedB, c => c.claim, { task: t.id, scope: t.scope, noWait: false })
  if (claimed.outcome !== 1) throw new Error(`B's claim while A was away was not HELD: ${JSON.stringify(claimed)}`)
  if ((await seedB.stop('SIGTERM')) !== 0) throw new Error('B did not stop cleanly')

  // ---- A with the ACP harness; one more entry before its agent's first step ----
  const a = await scratch.daemon(o.name, {
    dataDir: dataA,
    logFile: join(dir, 'a.log'),
    env,
    extraArgs: [...common, '--metrics', '127.0.0.1:0', '--harness', o.harness]
  })
  // B never sees it before its claim: A's claim comes after it, so B's earlier claim wins.
  await call(a, c => c.recordFinding, {
    kind: 'note',
    text: "the greeter's test is test/greet.test.js",
    paths: [],
    tags: [],
    refs: [],
    supersedes: ''
  })
  o.model.mayStart.open()
  const events: Event[] = []
  const watcher = api(a)
  void (async () => {
    try {
      for await (const e of watcher.stream((c: AgencyClient, m) => c.watchEvents({}, m))) events.push(e)
    } catch {
      /* closed at the end */
    }
  })()

  return {
    repo,
    home,
    a,
    events,
    api,
    peerOnline: async () =>
      await scratch.daemon(`${o.name}-b`, { dataDir: dataB, logFile: join(dir, 'b.log'), peers: a.addrs, extraArgs: peerArgs }),
    metrics: async () => await (await fetch(`http://${a.metrics ?? ''}/metrics`)).text(),
    close: () => {
      for (const c of clients.splice(0)) c.close()
    },
    left
  }
}

/** Options of startAcpScenario. */
export type AcpScenarioOptions = Parameters<typeof startAcpScenario>[1]

/**
 * One ACP test file's lifecycle: `model(m)` keeps the scripted endpoint and
 * `start(o)` a fresh Scratch and the scenario on it; after each test the API
 * clients, the daemons and their dirs, and the endpoint are closed, in that
 * order. Call it at the top level of the test file (it registers afterEach).
 */
export function acpLifecycle(): {
  model: <M extends { close: () => Promise<unknown> }>(m: M) => M
  start: (o: AcpScenarioOptions) => Promise<AcpScenario>
} {
  let scratch: Scratch | undefined
  let model: { close: () => Promise<unknown> } | undefined
  let scenario: AcpScenario | undefined
  afterEach(async () => {
    scenario?.close()
    await scratch?.cleanup()
    await model?.close()
    scratch = undefined
    model = undefined
    scenario = undefined
  })
  return {
    model: m => {
      model = m
      return m
    },
    start: async o => {
      scratch = new Scratch()
      scenario = await startAcpScenario(scratch, o)
      return scenario
    }
  }
}

/** A promise with its resolve, for holding the scripted model at a step. */
export interface Gate<T = void> {
  promise: Promise<T>
  open: (v: T) => void
  opened: () => boolean
}

export function gate<T = void>(): Gate<T> {
  let open!: (v: T) => void
  let done = false
  const promise = new Promise<T>(resolve => {
    open = v => {
      done = true
      resolve(v)
    }
  })
  return { promise, open, opened: () => done }
}

/** A metric's value in a /metrics text, by its name and labels as written (e.g. 'agentd_harness_turns_total{stop_reason="cancelled"}'). */
export function metric(text: string, series: string): number {
  const line = text.split('\n').find(l => l.startsWith(`${series} `))
  return line == null ? Number.NaN : Number(line.slice(series.length + 1))
}

/** One request of the scripted model, as the scenario reads it, whatever the wire. */
export interface ModelStep {
  /** agentd's prompts in the conversation so far (the first turn's, then one per later turn). */
  prompts: string[]
  /** What the model answered (absent for requests that were not the agent's turn). */
  move?: Move
  /** The conversation's calls as the script read them. */
  taken: TakenStep[]
  /** The agent closed the request before it was answered. */
  aborted: () => boolean
  /** The whole request body, for "delivered once". */
  raw: () => string
}

/**
 * Which turn of the session each step is in: agentd's latest prompt in the
 * conversation, numbered in the order the prompts first appeared. (Counting
 * prompts in one conversation is not enough: an agent may drop a cancelled
 * turn from its history, as Gemini CLI does.)
 */
export class TurnNumbers {
  private readonly seen: string[] = []
  of(s: ModelStep): number {
    const last = s.prompts.at(-1)
    if (last == null) return 0
    if (!this.seen.includes(last)) this.seen.push(last)
    return this.seen.indexOf(last) + 1
  }
}

/** Whether a user message's text is one of agentd's prompts. */
export function isAgentdPrompt(text: string): boolean {
  // Anywhere in the text: an agent may wrap the prompt (Gemini CLI adds context before it).
  return text.includes('## This session') || text.includes('[agentd] ')
}

export interface ScenarioModel {
  /** Give it to the model endpoint: holds the model at the scenario's points. */
  beforeAnswer: (s: ModelStep) => Promise<void>
  /** The first step of turn 1 waits for it (startAcpScenario opens it once A's board is ready). */
  mayStart: Gate
  heldAtWrite: Promise<ModelStep>
  atSecondReady: Promise<void>
  messageArrived: Gate
  released: Gate
}

/**
 * Where the scenario holds the model: turn 1 before its first step (until A's
 * board is set up), and at its write (until the claim is
 * lost: the agent should cancel that request), turn 2 at `ready`, after it has
 * read its inbox (a message arrives then), turn 3 at `ready` until B has given
 * the task back.
 */
export function scenarioModel(): ScenarioModel {
  const mayStart = gate()
  const heldAtWrite = gate<ModelStep>()
  const atSecondReady = gate()
  const messageArrived = gate()
  const released = gate()
  const turns = new TurnNumbers()
  return {
    mayStart,
    heldAtWrite: heldAtWrite.promise,
    atSecondReady: atSecondReady.promise,
    messageArrived,
    released,
    beforeAnswer: async s => {
      const turn = turns.of(s)
      // The step just done; the move answered now is the one after it (branch -> the write, inbox -> ready).
      const done = s.taken.at(-1)?.step
      if (turn === 1 && done === undefined) await mayStart.promise
      if (turn === 1 && done === 'branch' && !heldAtWrite.opened()) {
        heldAtWrite.open(s)
        await new Promise(() => {})
      }
      if (turn === 2 && done === 'inbox' && !atSecondReady.opened()) {
        atSecondReady.open()
        await messageArrived.promise
      }
      if (turn === 3 && done === 'inbox') await released.promise
    }
  }
}

export interface PlayOptions {
  /** The agent's command as the supervisor logs it (agentd: starting <command> ...). */
  command: string
  /** How the agent titles an agency MCP tool call in its session updates, e.g. /^Tool: agency\/claim/. */
  claimCallTitle: RegExp
  /** The model's steps so far. */
  steps: () => ModelStep[]
  /**
   * The agent has no approvals and asks agentd for none (Pi): instead of the
   * policy's answers, what is asserted is that it was never asked.
   */
  asksNoPermissions?: boolean
  /** The ACP kind the agent gives its shell's tool calls: execute (the default), or other (pi-acp). */
  shellKind?: string
}

/**
 * Plays the scenario against a started A and asserts what issue 19 asks of an
 * ACP session: the first turn claims (through MCP, or the agency CLI in the
 * shell for an agent without MCP); the lost claim cancels the
 * running turn and the next turn tells the model why; a message that arrives
 * during a turn waits for its end and reaches the model in the first request of
 * the next turn, once; the policy answered every permission request; the task
 * is done at epoch 2 with its commit on the shared branch; all of it is in
 * agency events and the metrics; one session from start to end.
 */
export async function playAcpScenario(s: AcpScenario, m: ScenarioModel, o: PlayOptions): Promise<void> {
  try {
    await play(s, m, o)
  } catch (err) {
    const numbers = new TurnNumbers()
    const steps = o
      .steps()
      .filter(r => r.move != null)
      .map(r => `turn ${numbers.of(r)}: ${JSON.stringify(r.move).slice(0, 200)}`)
    throw new Error(
      `${(err as Error).message}\n--- the model's steps ---\n${steps.join('\n')}\n--- harness.log ---\n${(await harnessLog(s.a)).slice(-12_000)}`,
      { cause: err }
    )
  }
}

async function play(s: AcpScenario, m: ScenarioModel, o: PlayOptions): Promise<void> {
  const { a } = s
  const explain = async (): Promise<string> => `harness.log:\n${(await harnessLog(a)).slice(-6000)}`
  // A failed session, a crash or a failed start ends the scenario at once; an exit after agentd
  // ended the session (the goal met: stdin closed, then SIGTERM if the agent is slow to go) is none.
  const broken =
    /agentd: (the session failed|harness could not start|harness exited \(code ([1-9]|null, signal SIG)(?!.*\(ended by agentd: ))/m
  let over = false
  const failed = (async (): Promise<never> => {
    while (!over) {
      if (broken.test(await harnessLog(a))) throw new Error(await explain())
      await new Promise(resolve => setTimeout(resolve, 500))
    }
    return await new Promise<never>(() => {})
  })()
  failed.catch(() => {})
  try {
    await steps(s, m, o, failed)
  } finally {
    over = true
  }
}

async function steps(s: AcpScenario, m: ScenarioModel, o: PlayOptions, failed: Promise<never>): Promise<void> {
  const { a } = s
  const explain = async (): Promise<string> => `harness.log:\n${(await harnessLog(a)).slice(-6000)}`

  // ---- turn 1: the agent claims greet (through MCP, or the agency CLI in its shell) and is held at its write ----
  const held = await Promise.race([m.heldAtWrite, failed])
  expect(held.taken.find(t => t.step === 'claim')?.outcome.text).toMatch(/"outcome":\s*"HELD"/)

  // ---- the peer comes online: its earlier claim wins, A's turn is cancelled ----
  const b = await s.peerOnline()
  await waitFor(() => held.aborted(), { timeoutMs: s.left(), what: 'the agent to abort the held model request after session/cancel' })
  await waitFor(async () => (await harnessLog(a)).includes('turn 1 ended: cancelled'), {
    timeoutMs: s.left(),
    what: 'turn 1 to end cancelled'
  })

  // ---- turn 2 tells the model why; a message arrives during it, and waits for its end ----
  await Promise.race([m.atSecondReady, failed])
  const peer = s.api(b)
  await waitFor(
    async () => {
      await peer.call((c: AgencyClient) => c.sendMessage, { to: a.peerId, text: PEER_MESSAGE, thread: '', replyTo: '' })
      return true
    },
    { timeoutMs: s.left(), what: 'B to send its message' }
  )
  await waitFor(async () => (await status(a)).unread > 0, { timeoutMs: s.left(), what: "the message to reach A's inbox" })
  m.messageArrived.open()
  await waitFor(async () => (await harnessLog(a)).includes('turn 2 ended: end_turn'), { timeoutMs: s.left(), what: 'turn 2 to end' })
  // B gives the task back once A's turn 2 is over.
  await peer.call((c: AgencyClient) => c.release, { task: GREETER.task.id, note: 'yours again', branch: '' })
  await waitFor(async () => (await s.api(a).call((c: AgencyClient) => c.getTask, { id: GREETER.task.id })).task?.state === 'open', {
    timeoutMs: s.left(),
    what: 'A to see greet open again'
  })
  m.released.open()

  // ---- the task is done in a later turn, and the session is ended ----
  await Promise.race([
    waitFor(async () => (await harnessLog(a)).includes('the goal is met: ending the session'), {
      timeoutMs: s.left(),
      intervalMs: 500,
      what: 'the goal to be met'
    }),
    failed
  ])
  await waitFor(async () => (await harnessLog(a)).includes('agentd: work is done; not restarting the harness'), {
    timeoutMs: s.left(),
    what: 'the supervisor to finish'
  })
  const log = await harnessLog(a)
  expect(log, await explain()).not.toMatch(/session failed/)

  const all = o.steps().filter(r => r.move != null)
  const numbers = new TurnNumbers()
  const steps = all.map(r => ({ ...r, turn: numbers.of(r) }))
  // The cancelled turn: turn 2 opens with the reason and the claim_lost notice.
  const told = steps.find(r => r.turn === 2)?.prompts.at(-1) ?? ''
  expect(told).toContain('[agentd] I stopped your previous turn')
  expect(told).toMatch(/notice claim_lost \(task greet\): your claim on greet@1 is lost \(outbid\)/)
  // The message came during turn 2 and did not stop it: turn 2 went on to its end without it...
  const turn2 = steps.filter(r => r.turn === 2)
  expect(turn2.at(-1)?.move).toEqual({ kind: 'answer', text: IDLE_ANSWER })
  for (const r of turn2) expect(r.raw()).not.toContain(PEER_MESSAGE)
  // ...and reached the model in the first request of turn 3, as its prompt; once.
  const third = steps.find(r => r.turn === 3)
  expect(third?.prompts.at(-1)).toContain(`message from ${b.name} (${b.peerId}): ${PEER_MESSAGE}`)
  expect(count(steps.at(-1)?.raw() ?? '', new RegExp(PEER_MESSAGE.slice(0, 30)))).toBe(1)
  expect((await status(a)).unread).toBe(0)
  // One session the whole time.
  expect(count(log, new RegExp(`agentd: starting ${o.command} `))).toBe(1)
  expect(count(log, /agentd: session \S+ open in /)).toBe(1)

  // ---- the task: done by A at epoch 2, its commit on the shared branch ----
  const task = (await status(a)).tasks.find(t => t.id === GREETER.task.id)
  expect(task?.state).toBe('done')
  expect(task?.holder).toBe(a.peerId)
  expect(task?.epoch).toBe(2)
  expect(steps.at(-1)?.move).toEqual({ kind: 'answer', text: GOAL_MET_ANSWER })
  const history = await sharedHistory(s.repo)
  expect(history[0].message).toContain(`Agency-Task: ${GREETER.task.id}@2`)
  expect(await sharedFile(s.repo, 'src/greet.js')).toContain('Hello, ${name}!')

  // ---- permissions: asked of agentd and answered by its policy, none denied (or, for an agent without approvals, never asked) ----
  const allowed = log.match(/agentd: permission allowed: .*/g) ?? []
  if (o.asksNoPermissions === true) {
    expect(log).not.toMatch(/agentd: permission /)
  } else {
    expect(
      allowed.some(l => /MCP agency\/claim \(the agency tools are allowed\)/.test(l)),
      log.slice(-3000)
    ).toBe(true)
    expect(allowed.some(l => /shell: node --test.* \(the shell is allowed\)/.test(l))).toBe(true)
    expect(allowed.some(l => /edit .*src\/greet\.js \(inside the workspace\)/.test(l))).toBe(true)
  }
  expect(log).not.toMatch(/permission denied/)

  // ---- what the agent did is visible: agency events and metrics ----
  const session = s.events.filter(e => e.type === 'session')
  expect(session.some(e => e.text.startsWith('tool call: ') && o.claimCallTitle.test(e.text.slice('tool call: '.length)))).toBe(true)
  expect(session.some(e => e.text.startsWith('turn 1 ended: cancelled'))).toBe(true)
  expect(session.some(e => e.text.startsWith('delivered 1 inbox item(s) into the session: message'))).toBe(true)
  expect(session.some(e => e.text.startsWith('permission allowed: MCP agency/claim'))).toBe(o.asksNoPermissions !== true)
  const text = await s.metrics()
  expect(metric(text, 'agentd_harness_turns_total{stop_reason="cancelled"}')).toBe(1)
  expect(metric(text, 'agentd_harness_turns_total{stop_reason="end_turn"}')).toBeGreaterThanOrEqual(2)
  expect(metric(text, `agentd_harness_tool_calls_total{kind="${o.shellKind ?? 'execute'}"}`)).toBeGreaterThan(0)
  expect(metric(text, 'agentd_harness_permission_requests_total{decision="allowed"}')).toBe(allowed.length)
  expect(metric(text, 'agentd_harness_permission_requests_total{decision="denied"}')).toBe(0)
  expect(metric(text, 'agentd_harness_inbox_items_pushed_total')).toBeGreaterThanOrEqual(2)
}

async function sharedHistory(repo: string): Promise<Array<{ sha: string; message: string }>> {
  const out = await git(['--git-dir', repo, 'log', '--format=%H%x00%B%x01', 'main'])
  return out
    .split('\x01')
    .map(x => x.trim())
    .filter(x => x !== '')
    .map(x => {
      const [sha, message] = x.split('\x00')
      return { sha, message: message.trim() }
    })
}

async function sharedFile(repo: string, path: string): Promise<string> {
  return await git(['--git-dir', repo, 'show', `main:${path}`])
}

async function status(d: LocalDaemon): Promise<StatusReply> {
  const c = connectAgency(d.grpc)
  try {
    return await c.call((x: AgencyClient) => x.getStatus, {})
  } finally {
    c.close()
  }
}
