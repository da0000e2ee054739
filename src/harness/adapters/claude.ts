// Claude Code (npm @anthropic-ai/claude-code).
// Sources: "CLI reference", https://docs.anthropic.com/en/docs/claude-code/cli-reference
//   (-p/--print, --mcp-config <file>, --permission-mode, --allowedTools, --output-format,
//   --verbose); "Identity and Access Management", https://docs.anthropic.com/en/docs/claude-code/iam
//   (a rule that is a bare tool name, "Bash", allows every use of it; "mcp__<server>" allows
//   every tool of that server; permission modes default|acceptEdits|plan|bypassPermissions);
//   "MCP" in the SDK docs, https://docs.anthropic.com/en/docs/claude-code/sdk/sdk-mcp
//   (the {"mcpServers": {name: {command, args, env}}} file format).
//
// Print mode runs one prompt and exits; the supervisor restarts it. Permissions
// are granted by rule rather than --dangerously-skip-permissions, which Claude
// Code refuses to run as root: edits accepted and the agency tools allowed,
// and inside agency's sandbox all of Bash; without it, Bash only for the
// commands of the prompt's loop (UNCONFINED_SHELL_COMMANDS), so any other
// command is refused (print mode asks nobody).
// The MCP config is a file in the data dir passed with --mcp-config, so the
// user's own ~/.claude.json is neither read for it nor written.
//
// In print mode Claude Code connects --mcp-config servers without waiting, and
// the tools of a server that was not up for the first request never reach the
// model in that run (seen with 2.1.197: a server that takes more than ~100 ms
// to start is missing). "alwaysLoad" makes the first turn wait for the agency
// server, up to MCP_CONNECT_TIMEOUT_MS (default 5 s, raised here for a busy
// machine); it also keeps the tools from being deferred behind tool search.
import { join } from 'node:path'
import { baseLaunch, harnessDir, jsonFile, MCP_SERVER_NAME, mcpServerSpec, UNCONFINED_SHELL_COMMANDS } from './common.js'
import type { HarnessContext, HarnessLaunch } from '../types.js'

/** How long the first turn waits for the agency MCP server to connect. */
const MCP_CONNECT_TIMEOUT_MS = 30_000

export function claudeLaunch(ctx: HarnessContext): HarnessLaunch {
  const mcpConfig = join(harnessDir(ctx), 'claude-mcp.json')
  const launch = baseLaunch(ctx, 'claude', [
    // -p is a switch; the prompt is the positional argument right after it.
    '-p',
    ctx.prompt,
    '--mcp-config',
    mcpConfig,
    '--permission-mode',
    'acceptEdits',
    // One comma-separated value: the flag is variadic and would swallow a following word.
    '--allowedTools',
    [...bashRules(ctx.confined === true), `mcp__${MCP_SERVER_NAME}`].join(','),
    // stream-json (which needs --verbose in print mode) puts every step in the log, not just the last answer.
    '--output-format',
    'stream-json',
    '--verbose'
  ])
  launch.env.MCP_CONNECT_TIMEOUT_MS = String(MCP_CONNECT_TIMEOUT_MS)
  const server = mcpServerSpec(ctx)
  launch.files.push(
    jsonFile(mcpConfig, {
      mcpServers: { [MCP_SERVER_NAME]: { type: 'stdio', command: server.command, args: server.args, env: server.env, alwaysLoad: true } }
    })
  )
  return launch
}

/** All of Bash in agency's box; else one rule per command of the loop. */
function bashRules(confined: boolean): string[] {
  return confined ? ['Bash'] : UNCONFINED_SHELL_COMMANDS.map(c => `Bash(${c}:*)`)
}
