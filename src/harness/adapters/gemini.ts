// Gemini CLI (npm @google/gemini-cli).
// Sources: "Gemini CLI configuration", https://geminicli.com/docs/reference/configuration
//   (google-gemini/gemini-cli docs/reference/configuration.md): -p/--prompt runs headless;
//   --approval-mode yolo approves every tool call (the unified form of --yolo; the two
//   cannot be combined); the system settings file, which overrides user and project
//   settings, can be moved with GEMINI_CLI_SYSTEM_SETTINGS_PATH; mcpServers.<name> takes
//   command, args, env, trust (skip confirmations); security.folderTrust.enabled;
//   GEMINI_SANDBOX=false keeps tools out of the container sandbox; aliases must not
//   contain "_". "MCP servers with Gemini CLI", https://geminicli.com/docs/tools/mcp-server
//
// The settings go in a file in the data dir named by GEMINI_CLI_SYSTEM_SETTINGS_PATH,
// not in the workspace's .gemini/ (that would land in the shared repository) nor
// in ~/.gemini. Folder trust is off in it because an untrusted workspace forces
// the approval mode back to "default", which blocks a headless run.
// The sandbox is off because the agent must reach its daemon and the `agency`
// command, neither of which exists inside the sandbox container.
import { join } from 'node:path'
import { baseLaunch, harnessDir, jsonFile, MCP_SERVER_NAME, mcpServerSpec } from './common.js'
import type { HarnessContext, HarnessLaunch } from '../types.js'

export function geminiLaunch (ctx: HarnessContext): HarnessLaunch {
  const settings = join(harnessDir(ctx), 'gemini-settings.json')
  const launch = baseLaunch(ctx, 'gemini', [
    '--prompt', ctx.prompt,
    '--approval-mode', 'yolo'
  ])
  launch.env.GEMINI_CLI_SYSTEM_SETTINGS_PATH = settings
  launch.env.GEMINI_SANDBOX = 'false'
  const server = mcpServerSpec(ctx)
  launch.files.push(jsonFile(settings, {
    security: { folderTrust: { enabled: false } },
    mcpServers: {
      [MCP_SERVER_NAME]: { command: server.command, args: server.args, env: server.env, trust: true }
    }
  }))
  return launch
}
