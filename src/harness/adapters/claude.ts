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
// are granted by rule (edits accepted, Bash and the agency tools allowed) rather
// than --dangerously-skip-permissions, which Claude Code refuses to run as root.
// The MCP config is a file in the data dir passed with --mcp-config, so the
// user's own ~/.claude.json is neither read for it nor written.
import { join } from 'node:path'
import { baseLaunch, harnessDir, jsonFile, MCP_SERVER_NAME, mcpServerSpec } from './common.js'
import type { HarnessContext, HarnessLaunch } from '../types.js'

export function claudeLaunch (ctx: HarnessContext): HarnessLaunch {
  const mcpConfig = join(harnessDir(ctx), 'claude-mcp.json')
  const launch = baseLaunch(ctx, 'claude', [
    // -p is a switch; the prompt is the positional argument right after it.
    '-p', ctx.prompt,
    '--mcp-config', mcpConfig,
    '--permission-mode', 'acceptEdits',
    // One comma-separated value: the flag is variadic and would swallow a following word.
    '--allowedTools', `Bash,mcp__${MCP_SERVER_NAME}`,
    // stream-json (which needs --verbose in print mode) puts every step in the log, not just the last answer.
    '--output-format', 'stream-json',
    '--verbose'
  ])
  const server = mcpServerSpec(ctx)
  launch.files.push(jsonFile(mcpConfig, {
    mcpServers: { [MCP_SERVER_NAME]: { type: 'stdio', command: server.command, args: server.args, env: server.env } }
  }))
  return launch
}
