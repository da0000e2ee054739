// The scripted agent behind the scripted model endpoints. It STANDS IN FOR THE
// MODEL ONLY: the CLI that calls it, the CLI's own tools (file writes, shell),
// the agency MCP server, the daemons and git are all real.
//
// It plays an agent that follows prompts/agent.md through the whole loop: look
// at the board and the inbox, see what is ready, let the daemon pick and claim
// a task (claim --next: the MCP claim with no task), search the record
// (`agency find` in the shell) for it (or, holding `plan`, add the tasks as one
// plan), check the workspace is on the task's branch, write the files, run the
// goal's tests (red: record the failure, try again), commit, integrate, mark it
// done, and go round again until the goal is met; with nothing ready it waits.
// What to write for each task is the playbook, the one thing a real model
// would bring itself. Every real-CLI test uses it: one agent with one task goes
// round once more, sees the goal met and answers; a swarm plans and waits.
//
// Nothing here knows a wire format. An endpoint (anthropic-messages.ts, or an
// OpenAI or Gemini one) turns a request into a Conversation and the Move back
// into its own reply. The endpoint keeps no state either: each request carries
// the whole conversation, and nextMove() replays it through the steps below,
// reading each decision (HELD or LOST, tests green or red, merged or not) from
// the tool results, then says what to do next. A restarted CLI starts a new
// conversation, and so starts again at `status`, as the prompt says.
//
// What differs between CLIs is only how tools are named and shaped: a
// ToolDialect per CLI (the agency MCP tools under the CLI's names, or none,
// and then every coordination step is an `agency` command in the shell, as in
// agency-cli.ts; a tool search first where the CLI defers its MCP tools).
import { isDeepStrictEqual } from 'node:util'
import { isAbsolute, join } from 'node:path'
import { shellQuote } from '../../../src/harness/command-line.js'
import { agencyCommandLine } from './agency-cli.js'

/** A tool's name, in a namespace where the CLI groups tools (Codex: the MCP server's tools under `mcp__agency`). */
export interface ToolRef {
  name: string
  namespace?: string
}

/** A tool call as the CLI sees it: one of the tools its request offered. */
export interface ToolCall extends ToolRef {
  input: Record<string, unknown>
}

/** How a Conversation lists a tool: its name, or `<namespace>/<name>`. */
export function toolKey(t: ToolRef): string {
  return t.namespace != null ? `${t.namespace}/${t.name}` : t.name
}

/** What a tool call gave back. */
export interface ToolOutcome {
  text: string
  isError: boolean
}

/** One conversation, as an endpoint received it. */
export interface Conversation {
  /** The prompt the CLI was started with (prompts/agent.md, rendered). */
  prompt: string
  /** The tools the request offers (toolKey: name, or namespace/name). */
  tools: string[]
  /** The directory the CLI works in, where it says (for tools that want absolute paths). */
  cwd?: string
  /** Every tool call so far with its result, oldest first. */
  history: Array<{ call: ToolCall; outcome: ToolOutcome }>
}

/** The agent's next move: one tool call (with a sentence saying why), or the final answer. */
export type Move = { kind: 'call'; call: ToolCall; say: string } | { kind: 'answer'; text: string }

/** What the agent means to do, before a CLI's tool names are put on it. */
export type Intent =
  | { kind: 'agency'; tool: AgencyTool; args: Record<string, unknown> }
  | { kind: 'write'; path: string; content: string }
  | { kind: 'edit'; path: string; find: string; replace: string }
  | { kind: 'shell'; command: string }
  | { kind: 'loadTools' }

/** The coordination tools the script uses (the agency MCP server's names). */
export type AgencyTool =
  | 'status'
  | 'read_inbox'
  | 'ready'
  | 'search_findings'
  | 'claim'
  | 'add_tasks'
  | 'done'
  | 'integrate'
  | 'wait'
  | 'record_finding'
  | 'release'

/** How one CLI names and shapes its tools. Paths given to it are relative to the workspace. */
export interface ToolDialect {
  /** The name this CLI gives the agency MCP server's tool `tool`; none: the CLI has no MCP (the shell's `agency` it is). */
  mcp?: (tool: AgencyTool) => ToolRef
  /** A call that loads the deferred MCP tools, made first when the request offers it and not yet the tools (Codex's tool_search). */
  toolSearch?: ToolCall
  write: (path: string, content: string, cwd: string | undefined) => ToolCall
  edit: (path: string, find: string, replace: string, cwd: string | undefined) => ToolCall
  shell: (command: string) => ToolCall
}

/** A change to one file: its whole content, or one replacement in it. */
export type FileChange = { path: string; content: string } | { path: string; find: string; replace: string }

/** A task the agent adds while it holds `plan`. */
export interface PlannedTask {
  id: string
  title: string
  description: string
  deps?: string[]
  scope?: string[]
}

/** What the agent knows how to do: the part a real model would bring. */
export interface Playbook {
  /** The tasks to add when this agent wins `plan`, in order (deps first). */
  plan?: PlannedTask[]
  /** For each task, the attempts in order; the next one is tried after the tests failed. */
  work: Record<string, FileChange[][]>
  /** With nothing ready, end the turn (an ACP session starts the next one) instead of `agency wait`. */
  endTurnWhenIdle?: boolean
}

/** The script could not go on: the conversation is not one it produced, or it would loop. */
export class ScriptError extends Error {
  override name = 'ScriptError'
}

/** Conversations longer than this end with an answer saying so, and the CLI exits (the supervisor may restart it). */
export const MAX_TURNS = 300

/** The id of the task that exists while a goal has no tasks yet (the contract of the goal-only start). */
export const PLAN_TASK = 'plan'

// ---- the steps ----------------------------------------------------------

export type StepName =
  | 'loadTools'
  | 'look'
  | 'inbox'
  | 'ready'
  | 'search'
  | 'claim'
  | 'recheck'
  | 'addPlan'
  | 'closePlan'
  | 'branch'
  | 'change'
  | 'test'
  | 'noteFailure'
  | 'commit'
  | 'integrate'
  | 'done'
  | 'release'
  | 'wait'

interface TaskInfo {
  id: string
  title: string
  scope: string[]
}

/** What the agent has learnt in this conversation so far. */
interface Memory {
  me: string
  goalMet: boolean
  testCommand: string
  /** A task the board says this agent holds (after a restart). */
  heldOnBoard?: { id: string; title: string }
  /** The tasks of the last `ready` (to know the title and scope of the one claimed). */
  ready: TaskInfo[]
  /** claim --next calls since the last `ready` that did not end HELD. */
  claimTries: number
  /** The task being worked on, once HELD. */
  task?: { id: string; title: string; scope: string[] }
  attempt: number
  /** Changes of the current attempt still to make. */
  changes: FileChange[]
  /** The output of the last failing test run, for the failure finding. */
  failure: string
  integrateTries: number
}

interface Step {
  /** What the agent does in this step (pure: memory is changed only by next). */
  act: (m: Memory, book: Playbook) => Intent
  /** Why, in one sentence (sent as the model's text beside the call). */
  say: (m: Memory) => string
  /** Reads the outcome into memory and names the next step; undefined: the goal is met, answer. */
  next: (m: Memory, out: ToolOutcome, book: Playbook) => StepName | undefined
}

const agency = (tool: AgencyTool, args: Record<string, unknown> = {}): Intent => ({ kind: 'agency', tool, args })

function held(m: Memory): { id: string; title: string; scope: string[] } {
  if (m.task == null) throw new ScriptError('no task is held at this step')
  return m.task
}

const STEPS: Record<StepName, Step> = {
  loadTools: {
    act: () => ({ kind: 'loadTools' }),
    say: () => 'Loading the agency tools first.',
    next: () => 'look'
  },
  look: {
    act: () => agency('status'),
    say: () => 'Looking at the board first.',
    next: (m, out) => {
      readStatus(m, out)
      return 'inbox'
    }
  },
  inbox: {
    act: () => agency('read_inbox'),
    say: () => 'Reading my inbox.',
    next: (m, _out, book) => {
      if (m.goalMet) return undefined
      if (m.task == null && m.heldOnBoard != null) {
        // Restarted while holding a task: carry on with it.
        m.task = { ...m.heldOnBoard, scope: [] }
        return startTask(m, book)
      }
      return 'ready'
    }
  },
  ready: {
    act: () => agency('ready'),
    say: () => 'Which tasks can be taken now?',
    next: (m, out) => {
      m.ready = listOf(parseJson(out.text), 'tasks')
        .map(taskInfo)
        .filter(t => t.id !== '')
      m.claimTries = 0
      return m.ready.length > 0 ? 'claim' : 'wait'
    }
  },
  claim: {
    // As the prompt says: the daemon picks (claim --next, the MCP claim with no task).
    act: () => agency('claim', {}),
    say: () => 'Claiming the next ready task.',
    next: (m, out) => {
      const r = out.isError ? undefined : asObject(parseJson(out.text))
      if (r?.outcome === 'NONE_READY') return 'wait'
      if (r?.outcome !== 'HELD') {
        // LOST (peers won what the daemon tried) or refused: claim --next again, then wait.
        return ++m.claimTries < 3 ? 'claim' : 'wait'
      }
      const id = str(r.task)
      if (id === '') throw new ScriptError(`HELD names no task: ${firstLines(out.text, 2)}`)
      m.task = m.ready.find(t => t.id === id) ?? { id, title: '', scope: [] }
      return 'search'
    }
  },
  search: {
    // In the shell, as the prompt shows it: this also proves the agency command is on the shell's PATH.
    act: m => ({
      kind: 'shell',
      command: agencyCommandLine('search_findings', { query: held(m).title !== '' ? held(m).title : held(m).id })
    }),
    say: m => `${held(m).id} is mine; searching the record before I start.`,
    next: (m, out, book) => {
      if (/command not found|agency: not found/.test(out.text))
        throw new ScriptError(`the agency command is not on the shell's PATH: ${firstLines(out.text, 2)}`)
      return m.testCommand === '' && held(m).id !== PLAN_TASK ? 'recheck' : startTask(m, book)
    }
  },
  recheck: {
    act: () => agency('status'),
    say: () => "Reading the goal's test command.",
    next: (m, out, book) => {
      readStatus(m, out)
      if (m.testCommand === '') throw new ScriptError('the board shows no test command for the goal')
      return startTask(m, book)
    }
  },
  addPlan: {
    act: (_m, book) =>
      agency('add_tasks', {
        tasks: (book.plan ?? []).map(t => ({
          id: t.id,
          title: t.title,
          description: t.description,
          deps: t.deps ?? [],
          scope: t.scope ?? []
        }))
      }),
    say: _m => 'I hold plan: adding the tasks, dependencies and scopes as one plan.',
    next: (_m, out) => {
      if (out.isError) throw new ScriptError(`the plan was refused: ${firstLines(out.text, 3)}`)
      return 'closePlan'
    }
  },
  closePlan: {
    act: () => agency('done', { task: PLAN_TASK }),
    say: () => 'The plan is on the board.',
    next: m => {
      m.task = undefined
      return 'look'
    }
  },
  branch: {
    act: () => ({ kind: 'shell', command: BRANCH_COMMAND }),
    say: m => `${held(m).id} is mine; is the workspace on its branch?`,
    next: (m, out) => {
      if (!out.text.includes(`/${held(m).id}`))
        throw new ScriptError(`HELD ${held(m).id}, but the workspace is not on its task branch: ${firstLines(out.text, 2)}`)
      return 'change'
    }
  },
  change: {
    act: m => {
      const c = m.changes[0]
      return 'content' in c
        ? { kind: 'write', path: c.path, content: c.content }
        : { kind: 'edit', path: c.path, find: c.find, replace: c.replace }
    },
    say: m => `Writing ${m.changes[0].path}.`,
    next: m => {
      m.changes.shift()
      return m.changes.length > 0 ? 'change' : 'test'
    }
  },
  test: {
    act: m => ({ kind: 'shell', command: m.testCommand }),
    say: () => "Running the goal's tests.",
    next: (m, out) => {
      if (!out.isError) return 'commit'
      m.failure = out.text
      return 'noteFailure'
    }
  },
  noteFailure: {
    act: (m, book) =>
      agency('record_finding', {
        kind: 'failure',
        text: `${held(m).id}, attempt ${m.attempt + 1}: the tests failed: ${firstLines(m.failure, 6)}`,
        paths: [...new Set((book.work[held(m).id]?.[m.attempt] ?? []).map(c => c.path))]
      }),
    say: () => 'The tests failed; recording that before I try again.',
    next: (m, _out, book) => {
      m.attempt++
      const attempts = book.work[held(m).id] ?? []
      if (m.attempt >= attempts.length) return 'release'
      m.changes = [...attempts[m.attempt]]
      return 'change'
    }
  },
  commit: {
    act: m => ({ kind: 'shell', command: `git add -A && git commit -q -m ${shellQuote(`${held(m).id}: ${held(m).title}`)}` }),
    say: () => 'The tests pass; committing.',
    next: m => {
      m.integrateTries = 0
      return 'integrate'
    }
  },
  integrate: {
    act: m => agency('integrate', { task: held(m).id }),
    say: () => 'Integrating: merge, test, push.',
    next: (m, out) => {
      const r = out.isError ? undefined : asObject(parseJson(out.text))
      if (r?.result === 'merged') return 'done'
      if (r?.result === 'contended' && ++m.integrateTries < 3) return 'integrate'
      m.failure = out.text
      return 'release'
    }
  },
  done: {
    act: m => agency('done', { task: held(m).id }),
    say: m => `${held(m).id} is on the shared branch; marking it done.`,
    next: m => {
      m.task = undefined
      return 'look'
    }
  },
  release: {
    act: m => agency('release', { task: held(m).id, note: `gave up after ${m.attempt} attempts: ${firstLines(m.failure, 3)}` }),
    say: m => `I cannot finish ${held(m).id}; handing it back.`,
    next: m => {
      m.task = undefined
      return 'look'
    }
  },
  wait: {
    act: () => agency('wait'),
    say: () => 'Nothing is ready; waiting for the board to change.',
    next: () => 'look'
  }
}

/** After HELD: plan the work, or make the first attempt's changes. */
function startTask(m: Memory, book: Playbook): StepName {
  const task = held(m)
  if (task.id === PLAN_TASK) {
    if ((book.plan ?? []).length === 0) throw new ScriptError('won the plan task but the playbook has no plan')
    return 'addPlan'
  }
  const attempts = book.work[task.id]
  if (attempts == null || attempts.length === 0) throw new ScriptError(`the playbook has no work for task ${task.id}`)
  m.attempt = 0
  m.changes = [...attempts[0]]
  return 'branch'
}

/** What the agent runs to see which branch its workspace is on. */
export const BRANCH_COMMAND = 'git rev-parse --abbrev-ref HEAD'

/**
 * Reads what `status` says into memory: the goal and its test command,
 * whether it is met, what I hold. The compact form (the default: `goal` is a
 * line ending "(tests: <command>)", `you.held` lists my tasks) and the full
 * one (--full: `goal.testCommand`, `held`) are both read.
 */
function readStatus(m: Memory, out: ToolOutcome): void {
  const s = asObject(parseJson(out.text))
  if (s == null) return
  const goal = s.goal
  m.testCommand = typeof goal === 'string' ? (/\(tests: (.+)\)$/.exec(goal)?.[1] ?? '') : str(asObject(goal)?.testCommand)
  m.goalMet = s.goalMet === true
  const held = asArray(asObject(s.you)?.held ?? s.held).map(t => asObject(t) ?? {})
  m.heldOnBoard = held.length > 0 ? { id: str(held[0].id), title: str(held[0].title) } : undefined
}

// ---- replay -------------------------------------------------------------

/** The final answer once the goal is met. */
export const GOAL_MET_ANSWER = "The goal is met: every task is done and the goal's tests pass on the shared branch. Stopping."

/** The answer that ends a turn with nothing to do (Playbook.endTurnWhenIdle). */
export const IDLE_ANSWER = 'Nothing is ready for me; ending my turn until there is something new.'

/** A step of the conversation as the script read it: which step, what it meant, the call and its result. */
export interface TakenStep {
  step: StepName
  intent: Intent
  call: ToolCall
  outcome: ToolOutcome
}

function freshMemory(prompt: string): Memory {
  const me = /agent id is `([^`]+)`/.exec(prompt)?.[1] ?? ''
  return { me, goalMet: false, testCommand: '', ready: [], claimTries: 0, attempt: 0, changes: [], failure: '', integrateTries: 0 }
}

/**
 * The agent's next move in this conversation. Throws ScriptError when the
 * history is not what this script would have done (another script's
 * conversation, or a CLI that changed a call).
 */
export function nextMove(conv: Conversation, book: Playbook, dialect: ToolDialect): Move {
  return replay(conv, book, dialect).move
}

/** nextMove, with the conversation's calls as the steps the script read them as. */
export function replay(conv: Conversation, book: Playbook, dialect: ToolDialect): { taken: TakenStep[]; move: Move } {
  const m = freshMemory(conv.prompt)
  if (m.me === '') throw new ScriptError('the prompt does not name the agent id: is this the agency prompt?')
  const taken: TakenStep[] = []
  let step: StepName | undefined = startsWithToolSearch(conv, dialect) ? 'loadTools' : 'look'
  for (const [i, past] of conv.history.entries()) {
    if (step === undefined) throw new ScriptError(`turn ${i + 1}: a call after the final answer`)
    const intent = STEPS[step].act(m, book)
    if (!renderings(intent, conv, dialect).some(c => sameCall(c, past.call))) {
      throw new ScriptError(
        `turn ${i + 1}: the conversation has ${toolKey(past.call)} ${JSON.stringify(past.call.input)} where the script's step "${step}" makes ${JSON.stringify(render(intent, conv, dialect))}`
      )
    }
    taken.push({ step, intent, ...past })
    step = STEPS[step].next(m, past.outcome, book)
  }
  if (step === undefined) return { taken, move: { kind: 'answer', text: GOAL_MET_ANSWER } }
  // In a session that starts turns for it (ACP), an agent with nothing to do ends its turn instead of waiting.
  if (step === 'wait' && book.endTurnWhenIdle === true) return { taken, move: { kind: 'answer', text: IDLE_ANSWER } }
  if (conv.history.length >= MAX_TURNS)
    return { taken, move: { kind: 'answer', text: `Stopping after ${MAX_TURNS} tool calls without meeting the goal.` } }
  return { taken, move: { kind: 'call', call: render(STEPS[step].act(m, book), conv, dialect), say: STEPS[step].say(m) } }
}

/** The conversation began, or is to begin, with the tool search: it did, or it offers the search and not yet the tools. */
function startsWithToolSearch(conv: Conversation, dialect: ToolDialect): boolean {
  const search = dialect.toolSearch
  if (search == null) return false
  if (conv.history.length > 0) return sameCall(search, conv.history[0].call)
  return conv.tools.includes(toolKey(search)) && (dialect.mcp == null || !conv.tools.includes(toolKey(dialect.mcp('status'))))
}

/** One agent turn as an endpoint answered it: the steps read from the conversation, the move, or why the script could not go on. */
export interface ScriptedTurn {
  taken: TakenStep[]
  move: Move
  error?: string
}

/**
 * The turn for the conversation `read` returns; when it cannot be read or the
 * script cannot go on, the move is an answer saying why (the CLI ends its run).
 */
export function scriptedTurn(read: () => Conversation, book: Playbook, dialect: ToolDialect): ScriptedTurn {
  try {
    return replay(read(), book, dialect)
  } catch (err) {
    const error = (err as Error).message
    return { taken: [], move: { kind: 'answer', text: `The scripted model cannot go on: ${error}` }, error }
  }
}

/** The tool call for an intent: the agency MCP tool when offered, else the `agency` command in the shell. */
export function render(intent: Intent, conv: Pick<Conversation, 'tools' | 'cwd'>, dialect: ToolDialect): ToolCall {
  return renderings(intent, conv, dialect)[0]
}

function renderings(intent: Intent, conv: Pick<Conversation, 'tools' | 'cwd'>, dialect: ToolDialect): ToolCall[] {
  switch (intent.kind) {
    case 'agency': {
      const viaShell = dialect.shell(agencyCommandLine(intent.tool, intent.args))
      if (dialect.mcp == null) return [viaShell]
      const viaMcp = { ...dialect.mcp(intent.tool), input: intent.args }
      // A CLI may offer the MCP tools on some turns only; either form is the same step.
      return conv.tools.includes(toolKey(viaMcp)) ? [viaMcp, viaShell] : [viaShell, viaMcp]
    }
    case 'loadTools':
      if (dialect.toolSearch == null) throw new ScriptError('this CLI has no tool search')
      return [dialect.toolSearch]
    case 'write':
      return [dialect.write(intent.path, intent.content, conv.cwd)]
    case 'edit':
      return [dialect.edit(intent.path, intent.find, intent.replace, conv.cwd)]
    case 'shell':
      return [dialect.shell(intent.command)]
  }
}

/**
 * The call the script would make is the one in the conversation; a CLI may add its own defaults to the input (Claude Code's Edit adds
 * replace_all).
 */
function sameCall(expected: ToolCall, actual: ToolCall): boolean {
  if (expected.name !== actual.name || expected.namespace !== actual.namespace) return false
  const want = JSON.parse(JSON.stringify(expected.input)) as Record<string, unknown>
  return Object.entries(want).every(([k, v]) => isDeepStrictEqual(v, actual.input[k]))
}

// ---- dialects -----------------------------------------------------------

function absolute(path: string, cwd: string | undefined): string {
  if (isAbsolute(path)) return path
  if (cwd == null) throw new ScriptError(`the CLI did not say its working directory, and ${path} must be absolute for it`)
  return join(cwd, path)
}

/** Claude Code: `mcp__<server>__<tool>`, Write and Edit with absolute paths, Bash. */
export const CLAUDE_CODE_TOOLS: ToolDialect = {
  mcp: tool => ({ name: `mcp__agency__${tool}` }),
  write: (path, content, cwd) => ({ name: 'Write', input: { file_path: absolute(path, cwd), content } }),
  edit: (path, find, replace, cwd) => ({ name: 'Edit', input: { file_path: absolute(path, cwd), old_string: find, new_string: replace } }),
  shell: command => ({ name: 'Bash', input: { command, description: `Run ${command.split(' ').slice(0, 3).join(' ')}` } })
}

// ---- reading tool results -----------------------------------------------

/** The JSON in a tool's answer; CLIs may wrap it in text, so the outermost {...} or [...] is tried too. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    const start = text.search(/[[{]/)
    const end = Math.max(text.lastIndexOf('}'), text.lastIndexOf(']'))
    if (start < 0 || end <= start) return undefined
    try {
      return JSON.parse(text.slice(start, end + 1))
    } catch {
      return undefined
    }
  }
}

/** A shell tool's text that reports a non-zero exit ("exited with code 1", "exit code 1", "Exit Code: 1"): the command failed. */
export function reportsFailedExit(text: string): boolean {
  return /exit(?:ed)?(?: with)?(?: exit)? code:? [1-9]\d*/i.test(text)
}

function asObject(v: unknown): Record<string, any> | undefined {
  return v != null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, any>) : undefined
}

function asArray(v: unknown): unknown[] {
  return Array.isArray(v) ? v : []
}

/** A list, as a tool may give it: bare (the CLI's --json), or in an object under `key` (MCP answers are objects). */
function listOf(v: unknown, key: string): unknown[] {
  return Array.isArray(v) ? v : asArray(asObject(v)?.[key] ?? asObject(v)?.result)
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : v == null ? '' : JSON.stringify(v)
}

function taskInfo(v: unknown): TaskInfo {
  const t = asObject(v) ?? {}
  return { id: str(t.id), title: str(t.title), scope: asArray(t.scope).map(str) }
}

function firstLines(text: string, n: number): string {
  return text
    .split('\n')
    .filter(l => l.trim() !== '')
    .slice(0, n)
    .join(' | ')
    .slice(0, 600)
}
