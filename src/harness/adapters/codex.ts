// OpenAI Codex CLI (npm @openai/codex).
// Sources: "Non-interactive mode", https://developers.openai.com/codex/noninteractive
//   (codex exec <prompt>); "Codex CLI reference", https://developers.openai.com/codex/cli/reference
//   (-c/--config key=value overrides ~/.codex/config.toml for one invocation;
//   --dangerously-bypass-approvals-and-sandbox); "Environment variables",
//   https://developers.openai.com/codex/environment-variables (CODEX_HOME holds config AND auth);
//   "Configuration reference", https://developers.openai.com/codex/config-reference
//   (allow_login_shell); "Model Context Protocol", https://developers.openai.com/codex/mcp
//   ([mcp_servers.<name>] command, args, env, env_vars, required, startup_timeout_sec
//   (default 10), tool_timeout_sec (default 60)); openai/codex
//   codex-rs/common/src/config_override.rs (dotted keys create the tables, values are
//   parsed as TOML). Checked against codex-cli 0.171.0: `codex exec --strict-config`
//   accepts every key below and refuses an unknown one.
//
// The MCP server is given as -c overrides of mcp_servers.agency.*, which Codex
// applies over its config.toml, rather than a config.toml under a CODEX_HOME in
// the data dir: CODEX_HOME also holds the user's login (auth.json), so moving it
// would log the agent out. Nothing in ~/.codex is written either way.
// - inside agency's sandbox, Codex's own approvals and sandbox are bypassed:
//   the box is the boundary, and the agent's shell must reach its daemon over
//   loopback and commit in .git, which Codex's workspace-write forbids. Without
//   agency's sandbox Codex runs in its own: --sandbox workspace-write (writes
//   in the workspace and /tmp, no network for shell commands; the agency MCP
//   server runs outside it, its tools approved in advance with
//   default_tools_approval_mode), and `codex exec` never asks, so a command
//   the sandbox refuses fails and the model sees why. Codex's Linux sandbox
//   needs its helper, codex-linux-sandbox, which it installs under CODEX_HOME
//   and refuses to install under /tmp.
// - allow_login_shell=false: Codex runs shell commands in the user's shell as a
//   login shell by default, and a login profile may reset PATH (Debian's
//   /etc/profile does for root), which drops the `agency` shim: "agency: command
//   not found". Without a login shell the inherited PATH stays.
// - required: Codex waits for the agency server before the first turn and fails
//   the run if it cannot start, instead of starting without the swarm's tools
//   (the supervisor restarts a failed run); startup gets 60 s, not 10, for a busy machine.
// - tool_timeout_sec: integrate runs the goal's tests and claim waits out the
//   settle window; the tool calls get the 30 minutes the integrate API call has.
// - env_vars forwards AGENCY_TOKEN when the daemon requires one: Codex starts MCP
//   servers with a cleared environment plus `env`, so a token set only on the
//   harness would not reach `agency mcp`. The value is never on the command line.
import { baseLaunch, MCP_SERVER_NAME, mcpServerSpec } from './common.js'
import type { HarnessContext, HarnessLaunch } from '../types.js'

/** How long one agency tool call may take, in seconds: as long as the integrate API call. */
const TOOL_TIMEOUT_SEC = 1800

export function codexLaunch(ctx: HarnessContext): HarnessLaunch {
  const server = mcpServerSpec(ctx)
  const key = `mcp_servers.${MCP_SERVER_NAME}`
  const overrides = [
    'allow_login_shell=false',
    `${key}.command=${tomlString(server.command)}`,
    `${key}.args=[${server.args.map(tomlString).join(', ')}]`,
    ...Object.entries(server.env).map(([name, value]) => `${key}.env.${name}=${tomlString(value)}`),
    `${key}.env_vars=[${tomlString('AGENCY_TOKEN')}]`,
    `${key}.required=true`,
    `${key}.startup_timeout_sec=60`,
    `${key}.tool_timeout_sec=${TOOL_TIMEOUT_SEC}`,
    // Without the bypass, Codex asks before each MCP tool call, and `codex exec` never asks: the agency tools are approved.
    ...(ctx.confined === true ? [] : [`${key}.default_tools_approval_mode="approve"`])
  ]
  return baseLaunch(ctx, 'codex', [
    'exec',
    ...(ctx.confined === true ? ['--dangerously-bypass-approvals-and-sandbox'] : ['--sandbox', 'workspace-write']),
    ...overrides.flatMap(o => ['-c', o]),
    ctx.prompt
  ])
}

// A JSON string is a valid TOML basic string (same escapes, \uXXXX included).
function tomlString(value: string): string {
  return JSON.stringify(value)
}
