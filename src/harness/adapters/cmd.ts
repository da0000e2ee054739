// Any program, given as a shell command: `--harness cmd:"./my-agent --fast"`.
// It runs under /bin/sh -c in the workspace; the prompt is at $AGENCY_PROMPT_FILE
// and the daemon at $AGENCY_ADDR. No MCP configuration is written: the program
// can start `agency mcp` itself if it speaks MCP.
import { baseLaunch } from './common.js'
import { InvalidArgumentError } from '../../core/errors.js'
import type { HarnessAdapter } from '../types.js'

export function cmdLaunch(shellCommand: string): HarnessAdapter {
  if (shellCommand.trim() === '') throw new InvalidArgumentError('cmd: harness needs a command, e.g. cmd:"./my-agent"')
  return ctx => baseLaunch(ctx, '/bin/sh', ['-c', shellCommand])
}
