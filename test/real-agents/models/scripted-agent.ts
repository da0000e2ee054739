// STAND-IN FOR THE MODEL ONLY. What "the agent" decides next when a real agent
// CLI (Gemini CLI, Pi) runs against a scripted model endpoint: the CLI, its
// tools, its MCP client and its shell are real; only the model's choice of the
// next function call is scripted here, wire-independently. Each model server
// (gemini-api.ts, openai-chat.ts) turns the conversation it was sent into a
// list of past calls with their results and asks `nextStep` for what follows.
//
// The script follows prompts/agent.md for one task: look (status, inbox), pick
// a ready task, search the record, claim it, write the solution the test gave
// for it, run the goal's test command, commit, integrate, mark it done, answer.
// It is stateless: the past calls are replayed through the plan, so the same
// conversation always gets the same next step, and a restarted CLI (a fresh
// conversation) starts from the top, as a real agent would.

/** One function call the model made earlier in this conversation, and what came back. */
export interface PastCall {
  name: string
  args: Record<string, unknown>
  /** The tool's result as text (JSON for the agency tools and `--json` commands). */
  output: string
}

export type NextStep =
  | { kind: 'call', name: string, args: Record<string, unknown> }
  | { kind: 'answer', text: string }

/** How this CLI names its tools, so the script can speak to it. */
export interface ToolDialect {
  /**
   * The model-facing name of agency MCP tool `tool` ('claim', 'ready'...) if the
   * CLI offers it; undefined sends the script to the `agency` CLI in the shell.
   */
  mcpTool: (tool: string) => string | undefined
  shell: (command: string) => { name: string, args: Record<string, unknown> }
  writeFile: (path: string, content: string) => { name: string, args: Record<string, unknown> }
}

/** What the test hands the stand-in: the work it "knows how to do", per task id. */
export interface TaskSolution {
  /** Files to write, path (relative to the workspace) to content. */
  files: Record<string, string>
  /** The commit message of the work. */
  message: string
}

export type Solutions = Record<string, TaskSolution>

/** A call the plan wants made, with the name of the agency operation it is, if any. */
interface Want { name: string, args: Record<string, unknown> }

type Plan = Generator<Want, string, string>

/** The next step of the conversation whose calls so far are `history`. */
export function nextStep (history: PastCall[], dialect: ToolDialect, solutions: Solutions): NextStep {
  const plan = agentPlan(dialect, solutions)
  let step = plan.next('')
  for (const past of history) {
    if (step.done === true) return { kind: 'answer', text: step.value }
    if (past.name !== step.value.name) {
      return { kind: 'answer', text: `I lost track: I expected to call ${step.value.name}, the conversation shows ${past.name}. Stopping.` }
    }
    step = plan.next(past.output)
  }
  return step.done === true ? { kind: 'answer', text: step.value } : { kind: 'call', name: step.value.name, args: step.value.args }
}

function * agentPlan (d: ToolDialect, solutions: Solutions): Plan {
  const agency = (tool: string, args: Record<string, unknown>, cli: string): Want => {
    const name = d.mcpTool(tool)
    return name != null ? { name, args } : d.shell(`agency ${cli} --json`)
  }

  // 1. Look: the goal (and its test command), then the inbox.
  const status = yield agency('status', {}, 'status')
  const testCommand = findString(parseJson(status), /^test_?command$/i)
  if (testCommand == null || testCommand.trim() === '') return 'The goal has no test command yet; nothing to verify work against. Stopping.'
  yield agency('read_inbox', {}, 'inbox')

  // 2. Pick and claim: a ready task this agent has work for, after searching the record.
  const ready = yield agency('ready', {}, 'ready')
  const task = readyTasks(parseJson(ready)).find(t => Object.hasOwn(solutions, t.id))
  if (task == null) return `No ready task that I can do (ready said: ${brief(ready)}). Stopping.`
  const solution = solutions[task.id]
  const words = task.title !== '' ? task.title : task.id
  yield agency('search_findings', { query: words }, `find ${shellQuote(words)}`)
  const scope = Object.keys(solution.files)
  const claim = yield agency('claim', { task: task.id, scope }, `claim ${shellQuote(task.id)} ${scope.map(s => `--scope ${shellQuote(s)}`).join(' ')}`)
  if (!/\bHELD\b/.test(claim)) return `I did not get ${task.id}: ${brief(claim)}. Stopping.`

  // The claim puts the workspace on the task branch; check before editing.
  const branch = yield d.shell('git rev-parse --abbrev-ref HEAD')
  if (!branch.includes(`/${task.id}`)) yield d.shell(`agency workspace ${shellQuote(task.id)} --json`)

  // 3. Code and test, then commit on the task branch.
  for (const [path, content] of Object.entries(solution.files)) yield d.writeFile(path, content)
  yield d.shell(testCommand)
  yield d.shell(`git add -A && git commit -q -m ${shellQuote(solution.message)} && git log -1 --format=%H`)

  // 4. Integrate, then done.
  const integrated = yield agency('integrate', { task: task.id }, `integrate --task ${shellQuote(task.id)}`)
  if (!/"result"\s*:\s*"merged"/.test(integrated)) return `Integration of ${task.id} did not land: ${brief(integrated)}. Stopping.`
  const done = yield agency('done', { task: task.id }, `done ${shellQuote(task.id)}`)
  if (/error|refused/i.test(done) && !/"state"\s*:\s*"done"/.test(done)) return `Marking ${task.id} done failed: ${brief(done)}. Stopping.`
  return `Task ${task.id} is integrated on the shared branch and done.`
}

interface ReadyTask { id: string, title: string }

/** Task ids and titles from a `ready` answer: an array of tasks, or an object holding one. */
function readyTasks (value: unknown): ReadyTask[] {
  const list = Array.isArray(value) ? value : findArray(value)
  return (list ?? [])
    .filter((t): t is Record<string, unknown> => t != null && typeof t === 'object' && typeof (t as Record<string, unknown>).id === 'string')
    .map(t => ({ id: t.id as string, title: typeof t.title === 'string' ? t.title : '' }))
}

function findArray (value: unknown): unknown[] | undefined {
  if (value == null || typeof value !== 'object') return undefined
  for (const v of Object.values(value)) {
    if (Array.isArray(v)) return v
    const inner = findArray(v)
    if (inner != null) return inner
  }
  return undefined
}

/** The first string under a key matching `key`, anywhere in a JSON value. */
function findString (value: unknown, key: RegExp): string | undefined {
  if (value == null || typeof value !== 'object') return undefined
  for (const [k, v] of Object.entries(value)) {
    if (key.test(k) && typeof v === 'string') return v
    const inner = findString(v, key)
    if (inner != null) return inner
  }
  return undefined
}

/**
 * JSON out of a tool's text: CLIs wrap results (Gemini puts MCP output in
 * <untrusted_context> tags, a shell tool adds exit codes), so the outermost
 * {...} or [...] is parsed when the whole text is not JSON.
 */
export function parseJson (text: string): unknown {
  try {
    return JSON.parse(text)
  } catch { /* look inside */ }
  // Whichever bracket opens first is the outer value: [{...}] is an array, not its first object.
  const brackets = [['{', '}'], ['[', ']']].map(([open, close]) => ({ start: text.indexOf(open), end: text.lastIndexOf(close) }))
    .filter(b => b.start >= 0 && b.end > b.start)
    .sort((x, y) => x.start - y.start)
  for (const { start, end } of brackets) {
    try {
      return JSON.parse(text.slice(start, end + 1))
    } catch { /* try the other bracket */ }
  }
  return undefined
}

function brief (text: string): string {
  const oneLine = text.replace(/\s+/g, ' ').trim()
  return oneLine.length > 300 ? `${oneLine.slice(0, 300)}...` : oneLine
}

function shellQuote (word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, "'\\''")}'`
}
