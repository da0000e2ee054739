// Gemini CLI (npm @google/gemini-cli).
// Sources: "Gemini CLI configuration", https://geminicli.com/docs/reference/configuration
//   (google-gemini/gemini-cli docs/reference/configuration.md): -p/--prompt runs headless;
//   --approval-mode yolo approves every tool call (the unified form of --yolo); the project
//   settings file is .gemini/settings.json in the directory the CLI runs in; mcpServers.<name>
//   takes command, args, env, trust (skip confirmations); security.environmentVariableRedaction
//   .allowed lets named variables through the redaction; GEMINI_SANDBOX=false keeps tools out of
//   the container sandbox; GEMINI_CLI_TRUST_WORKSPACE=true trusts the current folder for the
//   session. "Trusted Folders", https://geminicli.com/docs/cli/trusted-folders (headless and
//   automated environments: an untrusted folder is a FatalUntrustedWorkspaceError, and an
//   untrusted folder's .gemini/settings.json is ignored and its MCP servers never start).
//   "Headless mode", https://geminicli.com/docs/cli/headless (--output-format stream-json).
//   "MCP servers with Gemini CLI", https://geminicli.com/docs/tools/mcp-server
//
// The MCP server goes in the workspace's .gemini/settings.json, the one
// settings file Gemini CLI reads for any user from any directory: the system
// settings file (GEMINI_CLI_SYSTEM_SETTINGS_PATH) is skipped unless it and every
// directory above it are owned by root and writable by nobody else, which a data
// dir never is; ~/.gemini is the user's own (login included). A .gitignore of
// "*" beside it keeps the whole .gemini/ out of git: `git add -A` in the
// workspace never commits it and the workspace still counts as clean.
// The folder is trusted through the environment, not --skip-trust: the flag is
// applied after the settings are loaded, so the project file (and with it the
// MCP server) would already have been dropped as untrusted. Gemini CLI strips
// variables named like secrets (…TOKEN…) from an MCP server's environment, so
// the daemon's API token is let through by name; its value is never written.
// Gemini's own container sandbox is off because the agent must reach its
// daemon and the `agency` command, neither of which exists inside it. Inside
// agency's sandbox every tool call is approved (--approval-mode yolo); without
// it, edits are (auto_edit), and of the shell only the commands of the
// prompt's loop (tools.allowed, UNCONFINED_SHELL_COMMANDS): headless, any other
// call that would need a confirmation is refused.
// stream-json puts every tool call and result in the harness log, not just the
// last answer.
import { join } from 'node:path'
import { baseLaunch, jsonFile, MCP_SERVER_NAME, mcpServerSpec, UNCONFINED_SHELL_COMMANDS } from './common.js'
import type { HarnessContext, HarnessLaunch } from '../types.js'

/** Variables the `agency mcp` server reads its API token from; see src/cli/output.ts. */
const TOKEN_VARIABLES = ['AGENCY_TOKEN', 'AGENCY_TOKEN_FILE']

export function geminiLaunch(ctx: HarnessContext): HarnessLaunch {
  const dir = join(ctx.workspace, '.gemini')
  const launch = baseLaunch(ctx, 'gemini', [
    '--prompt',
    ctx.prompt,
    '--approval-mode',
    ctx.confined === true ? 'yolo' : 'auto_edit',
    '--output-format',
    'stream-json'
  ])
  launch.env.GEMINI_CLI_TRUST_WORKSPACE = 'true'
  launch.env.GEMINI_SANDBOX = 'false'
  const server = mcpServerSpec(ctx)
  launch.files.push(
    jsonFile(join(dir, 'settings.json'), {
      mcpServers: {
        [MCP_SERVER_NAME]: { command: server.command, args: server.args, env: server.env, trust: true }
      },
      security: { environmentVariableRedaction: { allowed: TOKEN_VARIABLES } },
      ...(ctx.confined === true ? {} : { tools: { allowed: UNCONFINED_SHELL_COMMANDS.map(c => `run_shell_command(${c})`) } })
    }),
    { path: join(dir, '.gitignore'), content: '# Written by agentd for Gemini CLI: keep this directory out of git.\n*\n' }
  )
  return launch
}
