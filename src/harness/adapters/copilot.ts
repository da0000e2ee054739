// GitHub Copilot CLI (npm @github/copilot).
// Sources: "GitHub Copilot CLI programmatic reference",
//   https://docs.github.com/en/copilot/reference/copilot-cli-reference/cli-programmatic-reference
//   (-p PROMPT runs non-interactively; --allow-all-tools is required for it);
//   "Adding MCP servers for GitHub Copilot CLI",
//   https://docs.github.com/en/copilot/how-tos/copilot-cli/customize-copilot/add-mcp-servers
//   (mcpServers entries with type, command, args, env, tools); "GitHub Copilot CLI command
//   reference" and `copilot --help` (--additional-mcp-config takes JSON or @file and adds to
//   ~/.copilot/mcp-config.json for this session; --no-auto-update; COPILOT_HOME moves the
//   whole config dir, login included); the schema the CLI ships,
//   schemas/api.schema.json, McpServerConfigStdio (type "stdio", "local" being its legacy
//   alias; timeout in ms for tool discovery and calls; deferTools "never" keeps the tools
//   in the first tool list instead of behind tool search). Checked against Copilot CLI 1.0.102.
//
// The config goes in a file in the data dir, passed with --additional-mcp-config
// @file, so the user's ~/.copilot is untouched and their login still works.
// - inside agency's sandbox --allow-all-tools: nothing waits for a confirmation
//   (shell, file edits, MCP). Without it, --allow-tool for file writes, the
//   agency server's tools and the shell commands of the prompt's loop alone
//   (UNCONFINED_SHELL_COMMANDS); any other tool is refused, not asked about.
// - --no-auto-update: every agent runs the CLI that is installed, and none
//   downloads a newer one at start.
// - --usage-output-file: the run's usage report, which agentd reads after it.
// - deferTools "never": the coordination tools are the agent's loop, not an
//   extra it should have to search for first.
// - timeout: integrate runs the goal's tests and claim waits out the settle
//   window; the calls get the 30 minutes the integrate API call has.
// Copilot 1.0.102 passes its whole environment to a local MCP server (the docs
// say only PATH), so AGENCY_TOKEN reaches `agency mcp` without being written here.
import { join } from 'node:path'
import { baseLaunch, harnessDir, jsonFile, MCP_SERVER_NAME, mcpServerSpec, UNCONFINED_SHELL_COMMANDS } from './common.js'
import type { HarnessContext, HarnessLaunch } from '../types.js'
import { COPILOT_USAGE_DIR, COPILOT_USAGE_FILE } from '../usage/copilot.js'

/** How long one agency tool call may take, in milliseconds: as long as the integrate API call. */
const TOOL_TIMEOUT_MS = 30 * 60_000

export function copilotLaunch(ctx: HarnessContext): HarnessLaunch {
  const mcpConfig = join(harnessDir(ctx), 'copilot-mcp.json')
  const usageDir = join(harnessDir(ctx), COPILOT_USAGE_DIR)
  const launch = baseLaunch(ctx, 'copilot', [
    '-p',
    ctx.prompt,
    ...(ctx.confined === true
      ? ['--allow-all-tools']
      : ['write', MCP_SERVER_NAME, ...UNCONFINED_SHELL_COMMANDS.map(c => `shell(${c}:*)`)].flatMap(t => ['--allow-tool', t])),
    '--no-auto-update',
    '--additional-mcp-config',
    `@${mcpConfig}`,
    // The run's tokens per model, exactly (the text summary rounds them): read back by usage/copilot.ts.
    '--usage-output-file',
    join(usageDir, COPILOT_USAGE_FILE)
  ])
  launch.writable = [usageDir]
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
          timeout: TOOL_TIMEOUT_MS
        }
      }
    })
  )
  return launch
}
