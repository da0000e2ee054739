// OpenAI Codex CLI (npm @openai/codex).
// Sources: "Non-interactive mode", https://developers.openai.com/codex/noninteractive
//   (codex exec <prompt>); "Codex CLI reference", https://developers.openai.com/codex/cli/reference
//   (-c/--config key=value overrides ~/.codex/config.toml for one invocation;
//   --dangerously-bypass-approvals-and-sandbox); "Environment variables",
//   https://developers.openai.com/codex/environment-variables (CODEX_HOME holds config AND auth);
//   MCP servers as [mcp_servers.<name>] command/args/env tables, https://developers.openai.com/codex/mcp
//   and openai/codex codex-rs/common/src/config_override.rs (dotted keys create the tables,
//   values are parsed as TOML).
//
// The MCP server is given as -c overrides of mcp_servers.agency.*, which Codex
// applies over its config.toml, rather than a config.toml under a CODEX_HOME in
// the data dir: CODEX_HOME also holds the user's login (auth.json), so moving it
// would log the agent out. Nothing in ~/.codex is written either way.
// The sandbox is bypassed because the agent must reach its daemon over loopback
// and commit in .git, both of which workspace-write forbids; run it where the
// machine itself is the boundary.
import { baseLaunch, MCP_SERVER_NAME, mcpServerSpec } from './common.js'
import type { HarnessContext, HarnessLaunch } from '../types.js'

export function codexLaunch (ctx: HarnessContext): HarnessLaunch {
  const server = mcpServerSpec(ctx)
  const key = `mcp_servers.${MCP_SERVER_NAME}`
  const overrides = [
    `${key}.command=${tomlString(server.command)}`,
    `${key}.args=[${server.args.map(tomlString).join(', ')}]`,
    ...Object.entries(server.env).map(([name, value]) => `${key}.env.${name}=${tomlString(value)}`)
  ]
  return baseLaunch(ctx, 'codex', [
    'exec',
    '--dangerously-bypass-approvals-and-sandbox',
    ...overrides.flatMap(o => ['-c', o]),
    ctx.prompt
  ])
}

// A JSON string is a valid TOML basic string (same escapes, \uXXXX included).
function tomlString (value: string): string {
  return JSON.stringify(value)
}
