// Part of the model stand-ins (STAND-IN FOR THE MODEL ONLY): how the scripted
// agent (agent-script.ts) says a call of an `agency` MCP tool as an `agency`
// command in a shell, printing JSON, for CLIs without MCP (Pi) or whose
// request does not offer the agency tools, as the prompt allows ("Use the
// agency command in your shell, or the tools of the agency MCP server").
import { shellQuote } from '../../../src/harness/command-line.js'
import type { AgencyTool } from './agent-script.js'

const str = (v: unknown): string => (typeof v === 'string' ? v : v == null ? '' : JSON.stringify(v))

/** The `agency` command line that does what MCP tool `tool` does, printing JSON. */
export function agencyCommandLine(tool: AgencyTool, args: Record<string, unknown>): string {
  const list = (v: unknown): string[] => (Array.isArray(v) ? v.map(String) : [])
  const words = ((): string[] => {
    switch (tool) {
      case 'status':
        return ['status']
      case 'read_inbox':
        return ['inbox']
      case 'ready':
        return ['ready']
      case 'wait':
        return ['wait']
      case 'search_findings':
        return ['find', str(args.query)]
      case 'claim':
        return ['claim', ...(str(args.task) === '' ? ['--next'] : [str(args.task)]), ...list(args.scope).flatMap(s => ['--scope', s])]
      case 'done':
        return ['done', str(args.task)]
      case 'integrate':
        return ['integrate', '--task', str(args.task)]
      case 'release':
        return ['release', str(args.task), '--note', str(args.note)]
      case 'record_finding':
        return ['note', '--kind', str(args.kind), ...list(args.paths).flatMap(p => ['--path', p]), str(args.text)]
      case 'add_tasks':
        return ['task', 'add-plan', '-']
    }
  })()
  const line = ['agency', ...words, '--json'].map(shellQuote).join(' ')
  // The plan goes in on stdin: JSON is YAML too.
  return tool === 'add_tasks' ? `printf '%s\\n' ${shellQuote(JSON.stringify(args.tasks))} | ${line}` : line
}
