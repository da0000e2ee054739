// Before a harness starts: is its program there? A missing binary is one clear
// error naming how to install it, instead of a supervisor restarting
// "command not found" forever.
import { accessSync, constants, statSync } from 'node:fs'
import { delimiter, isAbsolute, join } from 'node:path'
import { FailedPreconditionError } from '../core/errors.js'
import type { HarnessLaunch } from './types.js'

const INSTALL: Record<string, string> = {
  claude: 'npm install -g @anthropic-ai/claude-code',
  codex: 'npm install -g @openai/codex',
  copilot: 'npm install -g @github/copilot',
  gemini: 'npm install -g @google/gemini-cli',
  pi: 'npm install -g @mariozechner/pi-coding-agent',
  aider: 'python3 -m pip install aider-chat',
  'claude-agent-acp': 'npm install -g @agentclientprotocol/claude-agent-acp',
  'codex-acp': 'npm install -g @zed-industries/codex-acp',
  'pi-acp': 'npm install -g pi-acp@0.0.24'
}

// Programs that start another one from PATH: that one must be there too.
const NEEDS: Record<string, string[]> = {
  'pi-acp': ['pi']
}

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK)
    return statSync(file).isFile()
  } catch {
    return false
  }
}

/** Throws FailedPreconditionError when the launch's program is neither an executable path nor on PATH. */
export function checkLaunchCommand(launch: HarnessLaunch, basePath = process.env.PATH ?? ''): void {
  const { command } = launch
  if (isAbsolute(command) || command.includes('/')) {
    if (executable(command)) return
    throw new FailedPreconditionError(`the harness program ${command} does not exist or is not executable`)
  }
  const dirs = [...(launch.pathPrepend ?? []), ...(launch.env.PATH ?? basePath).split(delimiter)].filter(d => d !== '')
  const onPath = (program: string): boolean => dirs.some(d => executable(join(d, program)))
  const missing = [command, ...(NEEDS[command] ?? [])].find(program => !onPath(program))
  if (missing == null) return
  const hint = INSTALL[missing]
  const what = missing === command ? `the harness program "${command}"` : `"${missing}", which the harness program "${command}" starts,`
  throw new FailedPreconditionError(
    `${what} is not installed (not on PATH)${hint != null ? `: install it with ${hint}` : ''}, or choose another --harness`
  )
}
