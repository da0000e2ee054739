// A STAND-IN FOR THE MODEL ONLY. This is the "mind" behind a real agent CLI in
// the real-agents tests: given what the CLI sent back so far (the calls this
// agent made and what they answered), it decides the next step, following the
// shared prompt (prompts/agent.md) the way a model would. It knows nothing of
// any wire format; each model endpoint (openai-responses.ts, ...) turns its
// steps into that API's tool calls and the CLI's answers back into steps.
//
// The loop it plays: status, inbox, ready; search the record from the shell
// (`agency find`, which also proves the shim is on the shell's PATH); claim;
// check the daemon put the workspace on the task branch; write the task's files with the CLI's own file tool; run the goal's test
// command; git add and commit; integrate; done; a final message. It reads the
// test command and the task from the daemon's answers, stops early when the
// goal is already met or nothing is ready, and stops with a message naming
// the step that went wrong when an answer is not what the loop needs.

/** One thing the agent does. */
export type AgentStep =
  /** A tool of the `agency` MCP server, by its MCP name (status, claim, ...). */
  | { kind: 'agency', tool: string, args: Record<string, unknown> }
  /** A command in the CLI's own shell tool, run in the workspace. */
  | { kind: 'shell', command: string }
  /** A new file written with the CLI's own file tool (path relative to the workspace). */
  | { kind: 'write', path: string, content: string }
  /** The final message: the run is over. */
  | { kind: 'finish', text: string }

/** A step the agent took, and the text the CLI gave back for it. */
export interface TakenStep {
  step: AgentStep
  output: string
}

/** A task as the agent reads it from the board. */
export interface TaskRef { id: string, title: string, description: string }

/** What the agent "knows how to write": the files that do a task. */
export interface AgentSkills {
  /** The files (path relative to the repository root -> content) that do the task. */
  filesFor: (task: TaskRef) => Record<string, string>
}

const BRANCH_COMMAND = 'git rev-parse --abbrev-ref HEAD'
const GOAL_COMMAND = 'agency goal --json'

/** The final message of a run that did its task. */
export const DONE_MESSAGE = 'Task integrated and done; the goal\'s tests pass on the shared branch.'

export function nextStep (taken: TakenStep[], skills: AgentSkills): AgentStep {
  const status = lastOf(taken, s => isAgency(s, 'status'))
  if (status == null) return agency('status', {})
  const board = parseJson(status.output)
  if (goalMet(board)) return finish('The goal is met: every task is done and the tests pass. Nothing to do.')
  if (lastOf(taken, s => isAgency(s, 'read_inbox')) == null) return agency('read_inbox', {})

  // A task this agent already holds (it was restarted mid-task): carry on with it.
  let task = heldTask(board)
  const files = task != null ? skills.filesFor(task) : {}
  if (task == null) {
    const ready = lastOf(taken, s => isAgency(s, 'ready'))
    if (ready == null) return agency('ready', {})
    task = firstTask(parseJson(ready.output))
    if (task == null) return finish(`Nothing is ready to claim (ready answered: ${brief(ready.output)}).`)

    const find = lastOf(taken, s => s.step.kind === 'shell' && s.step.command.startsWith('agency find'))
    if (find == null) return shell(`agency find ${shellWord(task.title !== '' ? task.title : task.id)}`)
    if (/command not found|not found: agency/.test(find.output)) return finish(`The agency command is not on my shell's PATH: ${brief(find.output)}`)

    Object.assign(files, skills.filesFor(task))
    const claim = lastOf(taken, s => isAgency(s, 'claim'))
    if (claim == null) return agency('claim', { task: task.id, scope: Object.keys(files) })
    if (!/"outcome":\s*"HELD"/.test(claim.output)) return finish(`Claim of ${task.id} not held: ${brief(claim.output)}`)
  }

  // The daemon switched the workspace to the task branch (agency/<agent>/<task>) on HELD: check before editing.
  const branch = lastOf(taken, s => s.step.kind === 'shell' && s.step.command === BRANCH_COMMAND)
  if (branch == null) return shell(BRANCH_COMMAND)
  if (!branch.output.includes(`/${task.id}`)) return finish(`My workspace is not on the branch of ${task.id}: ${brief(branch.output)}`)

  for (const [path, content] of Object.entries(files)) {
    if (lastOf(taken, s => s.step.kind === 'write' && s.step.path === path) == null) return { kind: 'write', path, content }
  }

  // The goal's test command, from the board; `agency goal --json` says it when status does not.
  let testCommand = testCommandOf(board)
  if (testCommand == null) {
    const goal = lastOf(taken, s => s.step.kind === 'shell' && s.step.command === GOAL_COMMAND)
    if (goal == null) return shell(GOAL_COMMAND)
    const answer: any = parseJson(goal.output)
    testCommand = testCommandOf({ goal: answer?.goal ?? answer })
    if (testCommand == null) return finish(`Neither status nor agency goal names the goal's test command: ${brief(goal.output)}`)
  }
  if (lastOf(taken, s => s.step.kind === 'shell' && s.step.command === testCommand) == null) return shell(testCommand)

  const commit = `git add -A && git commit -m ${shellWord(`${task.id}: ${task.title !== '' ? task.title : 'done'}`)}`
  if (lastOf(taken, s => s.step.kind === 'shell' && s.step.command === commit) == null) return shell(commit)

  const integrate = lastOf(taken, s => isAgency(s, 'integrate'))
  if (integrate == null) return agency('integrate', { task: task.id })
  if (!/"result":\s*"merged"/.test(integrate.output)) return finish(`Integration of ${task.id} did not merge: ${brief(integrate.output)}`)

  const done = lastOf(taken, s => isAgency(s, 'done'))
  if (done == null) return agency('done', { task: task.id })
  if (!/"state":\s*"done"/.test(done.output)) return finish(`done ${task.id} was refused: ${brief(done.output)}`)
  return finish(DONE_MESSAGE)
}

function agency (tool: string, args: Record<string, unknown>): AgentStep {
  return { kind: 'agency', tool, args }
}

function shell (command: string): AgentStep {
  return { kind: 'shell', command }
}

function finish (text: string): AgentStep {
  return { kind: 'finish', text }
}

function isAgency (s: TakenStep, tool: string): boolean {
  return s.step.kind === 'agency' && s.step.tool === tool
}

function lastOf (taken: TakenStep[], match: (s: TakenStep) => boolean): TakenStep | undefined {
  for (let i = taken.length - 1; i >= 0; i--) if (match(taken[i])) return taken[i]
  return undefined
}

/** The JSON in a tool's answer; CLIs may wrap it in text, so the outermost {...} or [...] is tried too. */
export function parseJson (text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    const start = text.search(/[[{]/)
    const end = Math.max(text.lastIndexOf('}'), text.lastIndexOf(']'))
    if (start < 0 || end <= start) return undefined
    try { return JSON.parse(text.slice(start, end + 1)) } catch { return undefined }
  }
}

// `status` answers with a compact digest (goalMet, you.held, goal "<text> (tests: <command>)");
// with full=true, or from an older daemon, with the whole StatusReply (tasks, tests, goal.testCommand).

function goalMet (board: any): boolean {
  if (typeof board?.goalMet === 'boolean') return board.goalMet
  const tasks: any[] = Array.isArray(board?.tasks) ? board.tasks : []
  const tests = board?.tests
  return tasks.length > 0 && tasks.every(t => t?.state === 'done') && tests != null && tests.total > 0 && tests.failed === 0
}

function testCommandOf (board: any): string | undefined {
  const digest = typeof board?.goal === 'string' ? /\(tests: (.+)\)$/.exec(board.goal)?.[1] : undefined
  const command = digest ?? board?.goal?.testCommand ?? board?.goal?.test_command
  return typeof command === 'string' && command.trim() !== '' ? command : undefined
}

function heldTask (board: any): TaskRef | undefined {
  const mine = Array.isArray(board?.you?.held) ? board.you.held.find((t: any) => typeof t?.id === 'string') : undefined
  if (mine != null) return taskRef(mine)
  const me = board?.self?.peerId
  const tasks: any[] = Array.isArray(board?.tasks) ? board.tasks : []
  const t = tasks.find(x => x?.state === 'claimed' && me != null && x?.holder === me)
  return t == null ? undefined : taskRef(t)
}

function firstTask (ready: any): TaskRef | undefined {
  const list: any[] = Array.isArray(ready) ? ready : Array.isArray(ready?.tasks) ? ready.tasks : []
  const t = list.find(x => typeof x?.id === 'string')
  return t == null ? undefined : taskRef(t)
}

function taskRef (t: any): TaskRef {
  return { id: String(t.id), title: String(t.title ?? ''), description: String(t.description ?? '') }
}

function shellWord (text: string): string {
  return `'${text.replaceAll('\'', '\'\\\'\'')}'`
}

function brief (text: string): string {
  const one = text.replace(/\s+/g, ' ').trim()
  return one.length > 300 ? `${one.slice(0, 297)}...` : one
}
