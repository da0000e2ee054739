// `--harness <name>`: which agent program runs beside the daemon, and how.
import { isAbsolute } from 'node:path'
import { aiderLaunch } from './adapters/aider.js'
import { claudeLaunch } from './adapters/claude.js'
import { cmdLaunch } from './adapters/cmd.js'
import { codexLaunch } from './adapters/codex.js'
import { copilotLaunch } from './adapters/copilot.js'
import { geminiLaunch } from './adapters/gemini.js'
import { piLaunch } from './adapters/pi.js'
import { scriptedAgentLaunch } from './adapters/scripted.js'
import { splitCommandLine } from './command-line.js'
import { InvalidArgumentError } from '../core/errors.js'
import { ACP_HARNESS_NAMES } from './acp/acp-agents.js'
import type { HarnessAdapter, HarnessContext, HarnessLaunch } from './types.js'

export type { HarnessAdapter, HarnessContext, HarnessFile, HarnessLaunch } from './types.js'
export {
  HarnessSupervisor,
  harnessLogPath,
  type HarnessSupervisorOptions,
  type HarnessExit,
  type HarnessRestart,
  type HarnessSupervisorState
} from './supervisor.js'
export { renderPrompt, promptTemplatePath, type PromptVars } from './prompt.js'

const NAMED: Record<string, HarnessAdapter> = {
  claude: claudeLaunch,
  codex: codexLaunch,
  copilot: copilotLaunch,
  gemini: geminiLaunch,
  pi: piLaunch,
  aider: aiderLaunch,
  scripted: scriptedAgentLaunch,
  sim: scriptedAgentLaunch
}

/** The names `--harness` accepts; `cmd:<shell command>` is the escape hatch. */
export const HARNESS_NAMES: readonly string[] = [...Object.keys(NAMED), 'cmd:<shell command>', ...ACP_HARNESS_NAMES]

/** The adapter for a `--harness` value. */
export function harnessAdapter(name: string): HarnessAdapter {
  if (name.startsWith('cmd:')) return cmdLaunch(unquote(name.slice('cmd:'.length).trim()))
  const adapter = Object.hasOwn(NAMED, name) ? NAMED[name] : undefined
  if (adapter == null) throw new InvalidArgumentError(`unknown harness "${name}": use one of ${HARNESS_NAMES.join(', ')}`)
  return adapter
}

/** How to launch harness `name` for this agent. Throws InvalidArgumentError on a bad name or context. */
export function harnessLaunch(name: string, ctx: HarnessContext): HarnessLaunch {
  const adapter = harnessAdapter(name)
  checkContext(ctx)
  return adapter(ctx)
}

function checkContext(ctx: HarnessContext): void {
  for (const key of ['agentId', 'agentName', 'agencyAddr', 'agencyBin'] as const) {
    if (typeof ctx[key] !== 'string' || ctx[key].trim() === '') throw new InvalidArgumentError(`harness context: ${key} is empty`)
  }
  for (const key of ['workspace', 'dataDir'] as const) {
    if (typeof ctx[key] !== 'string' || !isAbsolute(ctx[key]))
      throw new InvalidArgumentError(`harness context: ${key} must be an absolute path, got "${String(ctx[key])}"`)
  }
  // The address is written into a shell script and config files: keep it a plain host:port.
  if (!/^[\w.:[\]/@%+=,-]+$/.test(ctx.agencyAddr))
    throw new InvalidArgumentError(`harness context: agencyAddr "${ctx.agencyAddr}" is not an address`)
  if (typeof ctx.prompt !== 'string' || ctx.prompt.trim() === '') throw new InvalidArgumentError('harness context: prompt is empty')
}

// `--harness 'cmd:"./agent --x"'` arrives with its quotes. When the whole text
// is one quoted shell word, that word is the command; anything else ("./a" "b")
// is already a shell command line and is left as it is.
function unquote(text: string): string {
  if (!/^(["']).*\1$/s.test(text)) return text
  const words = splitCommandLine(text)
  return words.length === 1 ? words[0] : text
}
