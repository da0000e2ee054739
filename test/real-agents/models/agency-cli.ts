// Part of the model stand-ins (STAND-IN FOR THE MODEL ONLY): how a scripted
// agent's call of an `agency` MCP tool is said as an `agency` command in a
// shell, for CLIs without MCP (Pi) or without the agency server, as the prompt
// allows ("Use the agency command in your shell, or the tools of the agency MCP
// server"), and back: a conversation's shell command read as the tool call it
// stands for, so the scripted agent recognises its own earlier steps.
import { shellQuote, splitCommandLine } from '../../../src/harness/command-line.js'
import type { AgentStep } from './scripted-agent.js'

/** MCP tool name -> `agency` subcommand, where the two differ in more than spelling. */
const SUBCOMMAND: Record<string, string> = { read_inbox: 'inbox', search_findings: 'find', send_message: 'send', record_finding: 'note', add_task: 'task add' }

/** `agency <subcommand> ... --json` for a call of agency MCP tool `tool`. */
export function agencyCommand (tool: string, args: Record<string, unknown>): string {
  const words = ['agency', ...(SUBCOMMAND[tool] ?? tool).split(' ')]
  const task = typeof args.task === 'string' ? args.task : undefined
  if (tool === 'integrate') {
    if (task != null) words.push('--task', task)
  } else if (task != null) {
    words.push(task)
  }
  if (typeof args.query === 'string') words.push(args.query)
  for (const glob of Array.isArray(args.scope) ? args.scope : []) words.push('--scope', String(glob))
  words.push('--json')
  return words.map(w => shellQuote(w)).join(' ')
}

/** The step a shell command stands for: an agency tool call if agencyCommand could have written it, else the command. */
export function stepOfCommand (command: string): AgentStep {
  let words: string[]
  try {
    words = splitCommandLine(command)
  } catch {
    return { kind: 'shell', command }
  }
  if (words[0] !== 'agency' || words.at(-1) !== '--json') return { kind: 'shell', command }
  const rest = words.slice(1, -1)
  for (const [tool, sub] of [...Object.entries(SUBCOMMAND), ...['status', 'ready', 'claim', 'integrate', 'done', 'release'].map(t => [t, t])]) {
    const subWords = sub.split(' ')
    if (subWords.some((w, i) => rest[i] !== w)) continue
    const args: Record<string, unknown> = {}
    const tail = rest.slice(subWords.length)
    const scope: string[] = []
    for (let i = 0; i < tail.length; i++) {
      if (tail[i] === '--scope') scope.push(tail[++i])
      else if (tail[i] === '--task') args.task = tail[++i]
      else if (tool === 'search_findings') args.query = tail[i]
      else args.task = tail[i]
    }
    if (scope.length > 0) args.scope = scope
    return { kind: 'agency', tool, args }
  }
  return { kind: 'shell', command }
}
