// `--harness acp:<agent>`: the agents agentd can drive as persistent ACP
// sessions, how each is started, and the MCP servers its session gets. The
// launch context, the `agency` shim and the MCP server spec are print mode's
// (adapters/common.ts); what differs per agent is its ACP command and how it
// is told about the agency server and about approvals.
//
// - acp:claude  claude-agent-acp (npm @agentclientprotocol/claude-agent-acp). Its
//   Claude Code honours ANTHROPIC_BASE_URL / ANTHROPIC_API_KEY like the CLI.
//   MCP_CONNECTION_NONBLOCKING=0: the first turn waits for the agency server
//   (otherwise it may start before the server is up and miss its tools), up to
//   MCP_CONNECT_TIMEOUT_MS (2 min: a crowded machine starts it slowly). Its permission mode stays "default", so every
//   tool use that is not read-only is asked of agentd's policy (IS_SANDBOX is
//   cleared: see below).
// - acp:codex   codex-acp (npm @zed-industries/codex-acp), with print mode's -c
//   overrides for the agency server: a server given in session/new gets
//   Codex's default 60 s tool timeout (integrate runs the tests) and is not
//   required, so the server is configured with -c instead and session/new
//   carries none. approval_policy="untrusted" makes Codex ask agentd before any
//   command that is not read-only and before each MCP tool call; inside
//   agency's sandbox Codex's own is off (the shell must reach the daemon over
//   loopback and commit in .git), without it Codex's workspace-write sandbox
//   stays on. Its npm wrapper leaves the native process
//   running on SIGTERM: the supervisor signals the whole process group.
// - acp:gemini  `gemini --acp`, the folder trusted by GEMINI_CLI_TRUST_WORKSPACE
//   (Gemini CLI starts no MCP server in an untrusted folder). The agency server
//   goes in session/new, the API token in its own env (agents drop
//   secret-looking variables from what they pass on to MCP servers).
// - acp:pi  pi-acp (npm pi-acp 0.0.24, for Pi 0.73: 0.0.34 needs Pi 0.81), which
//   starts `pi --mode rpc` from PATH. Pi has no MCP client and no approvals:
//   as in print mode, the agent coordinates through the `agency` shim in its
//   bash tool (the API token is in the environment), session/new carries no
//   server, and agentd's permission policy is never asked.
// - acp:copilot  `copilot --acp`, the agency server in --additional-mcp-config
//   as in print mode (Copilot 1.0 offers no tool of a session/new server).
// - acp:"<command>"  any other ACP agent on stdio; the agency server goes in session/new.
import type { McpServer } from '@agentclientprotocol/sdk'
import { join } from 'node:path'
import { baseLaunch, harnessDir, jsonFile, MCP_SERVER_NAME, mcpServerSpec } from '../adapters/common.js'
import { splitCommandLine } from '../command-line.js'
import type { HarnessContext, HarnessLaunch } from '../types.js'
import { InvalidArgumentError } from '../../core/errors.js'

export const ACP_PREFIX = 'acp:'

export interface AcpAgentLaunch {
  /** The process, as print mode starts its CLI. */
  launch: HarnessLaunch
  /** Given in session/new. */
  mcpServers: McpServer[]
  /** The agent drops a cancelled turn from its history: agentd says it again in the next turn. */
  forgetsCancelledTurns?: boolean
}

/** Whether a --harness value asks for ACP mode. */
export function isAcpHarness(name: string): boolean {
  return name.startsWith(ACP_PREFIX)
}

type AcpAgentBuilder = (ctx: HarnessContext, token: string | undefined) => AcpAgentLaunch

/** How one agency tool call may take, in seconds (as in print mode): as long as the integrate API call. */
const TOOL_TIMEOUT_SEC = 1800

const NAMED: Record<string, AcpAgentBuilder> = {
  claude: (ctx, token) => {
    const launch = baseLaunch(ctx, 'claude-agent-acp', [])
    launch.env.MCP_CONNECTION_NONBLOCKING = '0'
    launch.env.MCP_CONNECT_TIMEOUT_MS = '120000'
    // agentd answers every permission itself and never wants the bypass mode. As root with
    // IS_SANDBOX set, claude-agent-acp 0.49 starts Claude Code with the bypass mode allowed anyway,
    // and Claude Code refuses that as root: "cannot be used with root/sudo privileges", exit 1.
    launch.env.IS_SANDBOX = ''
    return { launch, mcpServers: [agencyServer(ctx, token)] }
  },
  codex: ctx => {
    const server = mcpServerSpec(ctx)
    const key = `mcp_servers.${MCP_SERVER_NAME}`
    const overrides = [
      'allow_login_shell=false',
      'approval_policy="untrusted"',
      `sandbox_mode="${ctx.confined === true ? 'danger-full-access' : 'workspace-write'}"`,
      `${key}.command=${tomlString(server.command)}`,
      `${key}.args=[${server.args.map(tomlString).join(', ')}]`,
      ...Object.entries(server.env).map(([name, value]) => `${key}.env.${name}=${tomlString(value)}`),
      `${key}.env_vars=[${tomlString('AGENCY_TOKEN')}]`,
      `${key}.required=true`,
      `${key}.startup_timeout_sec=120`,
      `${key}.tool_timeout_sec=${TOOL_TIMEOUT_SEC}`
    ]
    return {
      launch: baseLaunch(
        ctx,
        'codex-acp',
        overrides.flatMap(o => ['-c', o])
      ),
      mcpServers: []
    }
  },
  gemini: (ctx, token) => {
    const launch = baseLaunch(ctx, 'gemini', ['--acp'])
    // As in print mode: MCP servers of an untrusted folder are not started, and no container sandbox.
    launch.env.GEMINI_CLI_TRUST_WORKSPACE = 'true'
    launch.env.GEMINI_SANDBOX = 'false'
    // Gemini CLI keeps a turn in its chat history only once the model answered it: a cancelled
    // turn is gone, the first one with the shared prompt included.
    return { launch, mcpServers: [agencyServer(ctx, token)], forgetsCancelledTurns: true }
  },
  copilot: ctx => {
    // Copilot CLI 1.0 in ACP mode offers no tool of a server given in session/new: the server
    // goes in --additional-mcp-config, as in print mode (its tools not deferred, 30 min per call).
    const mcpConfig = join(harnessDir(ctx), 'copilot-acp-mcp.json')
    const launch = baseLaunch(ctx, 'copilot', ['--acp', '--no-auto-update', '--additional-mcp-config', `@${mcpConfig}`])
    const server = mcpServerSpec(ctx)
    launch.files.push(
      jsonFile(mcpConfig, {
        mcpServers: {
          [MCP_SERVER_NAME]: {
            type: 'stdio',
            command: server.command,
            args: server.args,
            env: server.env,
            tools: ['*'],
            deferTools: 'never',
            timeout: TOOL_TIMEOUT_SEC * 1000
          }
        }
      })
    )
    return { launch, mcpServers: [] }
  },
  pi: ctx => ({ launch: baseLaunch(ctx, 'pi-acp', []), mcpServers: [] })
}

/** The ACP names `--harness` accepts. */
export const ACP_HARNESS_NAMES: readonly string[] = [...Object.keys(NAMED).map(n => `${ACP_PREFIX}${n}`), `${ACP_PREFIX}"<command>"`]

/**
 * How to start the ACP agent `name` (acp:claude, ..., acp:"<command>") for
 * this agent. `token` is the daemon's API token, given to the agency server
 * in its own environment (agents filter what they pass on to MCP servers).
 */
export function acpAgentLaunch(name: string, ctx: HarnessContext, token?: string): AcpAgentLaunch {
  if (!isAcpHarness(name)) throw new InvalidArgumentError(`"${name}" is not an ACP harness (acp:<agent>)`)
  const rest = name.slice(ACP_PREFIX.length).trim()
  const builder = Object.hasOwn(NAMED, rest) ? NAMED[rest] : undefined
  if (builder != null) return builder(ctx, token)
  const words = splitCommandLine(unquote(rest))
  if (words.length === 0) throw new InvalidArgumentError(`--harness ${name}: name an ACP agent (${ACP_HARNESS_NAMES.join(', ')})`)
  const [command, ...args] = words
  return { launch: baseLaunch(ctx, command, args), mcpServers: [agencyServer(ctx, token)] }
}

/** The agency MCP server in ACP's form: env is a list of {name, value}. */
function agencyServer(ctx: HarnessContext, token: string | undefined): McpServer {
  const s = mcpServerSpec(ctx)
  const env = Object.entries(s.env).map(([name, value]) => ({ name, value }))
  if (token != null) env.push({ name: 'AGENCY_TOKEN', value: token })
  return { name: MCP_SERVER_NAME, command: s.command, args: s.args, env }
}

// A JSON string is a valid TOML basic string (same escapes, \uXXXX included).
function tomlString(value: string): string {
  return JSON.stringify(value)
}

// `acp:"./agent --x"` arrives with its quotes: one quoted word is the command line.
function unquote(text: string): string {
  if (!/^(["']).*\1$/s.test(text)) return text
  const words = splitCommandLine(text)
  return words.length === 1 ? words[0] : text
}
