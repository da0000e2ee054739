// GitHub Copilot CLI (npm @github/copilot).
// Sources: "GitHub Copilot CLI programmatic reference",
//   https://docs.github.com/en/copilot/reference/copilot-cli-reference/cli-programmatic-reference
//   (-p PROMPT runs non-interactively; --allow-all-tools is required for it);
//   "Adding MCP servers for GitHub Copilot CLI",
//   https://docs.github.com/en/copilot/how-tos/copilot-cli/customize-copilot/add-mcp-servers
//   (mcpServers entries with type local|stdio, command, args, env, tools; only PATH is
//   inherited, every other variable must be in env); "GitHub Copilot CLI command reference"
//   (--additional-mcp-config takes JSON or @file and adds to ~/.copilot/mcp-config.json
//   for this session; COPILOT_HOME moves the whole config dir, login included).
//
// The config goes in a file in the data dir, passed with --additional-mcp-config
// @file, so the user's ~/.copilot is untouched and their login still works.
import { join } from 'node:path'
import { baseLaunch, harnessDir, jsonFile, MCP_SERVER_NAME, mcpServerSpec } from './common.js'
import type { HarnessContext, HarnessLaunch } from '../types.js'

export function copilotLaunch (ctx: HarnessContext): HarnessLaunch {
  const mcpConfig = join(harnessDir(ctx), 'copilot-mcp.json')
  const launch = baseLaunch(ctx, 'copilot', [
    '-p', ctx.prompt,
    '--allow-all-tools',
    '--additional-mcp-config', `@${mcpConfig}`
  ])
  const server = mcpServerSpec(ctx)
  launch.files.push(jsonFile(mcpConfig, {
    mcpServers: {
      [MCP_SERVER_NAME]: { type: 'local', command: server.command, args: server.args, env: server.env, tools: ['*'] }
    }
  }))
  return launch
}
