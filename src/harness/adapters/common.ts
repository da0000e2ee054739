// What every harness gets, whatever it is: the agent's identity and daemon
// address in its environment, the prompt as a file, an `agency` command on its
// PATH, and the MCP server definition that each adapter writes in its own format.
import { join } from 'node:path'
import { shellQuote, splitCommandLine } from '../command-line.js'
import type { HarnessContext, HarnessFile, HarnessLaunch } from '../types.js'
import { InvalidArgumentError } from '../../core/errors.js'

/** The name the coordination tools are registered under in every harness. */
export const MCP_SERVER_NAME = 'agency'

/** A stdio MCP server: how the harness starts `agency mcp`. */
export interface McpServerSpec {
  command: string
  args: string[]
  env: Record<string, string>
}

/**
 * The shell commands a CLI runs without asking when agency's sandbox is not
 * around it: the prompt's loop (the agency CLI, git, the goal's tests through
 * node or npm) and looking around; anything else is refused by the CLI itself.
 */
export const UNCONFINED_SHELL_COMMANDS = ['agency', 'git', 'node', 'npm', 'ls', 'cat']

/** Where an agent's harness files live: `<dataDir>/harness`. */
export function harnessDir(ctx: HarnessContext): string {
  return join(ctx.dataDir, 'harness')
}

export function promptFilePath(ctx: HarnessContext): string {
  return join(harnessDir(ctx), 'prompt.md')
}

export function binDir(ctx: HarnessContext): string {
  return join(harnessDir(ctx), 'bin')
}

/** The environment every harness, and the MCP server it starts, must carry. */
export function agencyEnv(ctx: HarnessContext): Record<string, string> {
  return {
    AGENCY_ADDR: ctx.agencyAddr,
    AGENCY_AGENT_ID: ctx.agentId,
    AGENCY_AGENT_NAME: ctx.agentName
  }
}

/** `agency mcp` over stdio, with the daemon address in its environment. */
export function mcpServerSpec(ctx: HarnessContext): McpServerSpec {
  const [command, ...args] = agencyCommand(ctx)
  return { command, args: [...args, 'mcp'], env: agencyEnv(ctx) }
}

/**
 * The launch every adapter starts from: cwd is the workspace, the environment
 * names the agent and its daemon, the prompt is on disk and `agency` is on PATH.
 */
export function baseLaunch(ctx: HarnessContext, command: string, args: string[]): HarnessLaunch {
  return {
    command,
    args,
    env: { ...agencyEnv(ctx), AGENCY_PROMPT_FILE: promptFilePath(ctx) },
    cwd: ctx.workspace,
    files: [{ path: promptFilePath(ctx), content: ctx.prompt }, agencyShim(ctx)],
    pathPrepend: [binDir(ctx)]
  }
}

/** Pretty JSON with a final newline, as config files are written. */
export function jsonFile(path: string, value: unknown): HarnessFile {
  return { path, content: JSON.stringify(value, null, 2) + '\n' }
}

function agencyCommand(ctx: HarnessContext): string[] {
  const words = splitCommandLine(ctx.agencyBin)
  if (words.length === 0) throw new InvalidArgumentError('agencyBin is empty: give the command that runs the agency CLI')
  return words
}

// The prompt tells the agent to run `agency ...` in its shell; this makes that
// work even when the CLI is not installed on PATH, and defaults the address.
function agencyShim(ctx: HarnessContext): HarnessFile {
  const content = [
    '#!/bin/sh',
    "# Written by agentd: the agency CLI for this agent's daemon.",
    `: "\${AGENCY_ADDR:=${ctx.agencyAddr}}"`,
    'export AGENCY_ADDR',
    `exec ${agencyCommand(ctx).map(shellQuote).join(' ')} "$@"`,
    ''
  ].join('\n')
  return { path: join(binDir(ctx), 'agency'), content, mode: 0o755 }
}
