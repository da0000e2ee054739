// Pi (npm @mariozechner/pi-coding-agent, command `pi`).
// Sources: "Using Pi", https://github.com/badlogic/pi-mono/blob/main/packages/coding-agent/docs/usage.md
//   (-p/--print sends the prompt, prints the response and exits; built-in tools read, bash,
//   edit, write; --session-dir <dir> for session storage; "It intentionally does not include
//   built-in MCP ... permission popups"); the package README (same flags; models and API keys
//   come from ~/.pi/agent: auth.json, models.json, settings.json defaultProvider/defaultModel);
//   "Custom Models", docs/models.md (custom providers and base URLs in models.json);
//   packages/coding-agent/src/cli/args.ts (a word starting with "-" is an option and one
//   starting with "@" a file to attach; every other word is a message).
//
// Pi has no MCP client and asks for no approvals, so no MCP configuration is
// written: the prompt's `agency` commands run in its bash tool (the shim on
// PATH reaches the daemon, and the API token is in the environment). Print
// mode exits non-zero when the model request fails, which a JSON event stream
// would not. Sessions go to the data dir, so what the agent did can be read
// back there without filling the user's ~/.pi/agent/sessions. Pi's login and
// model choice stay the user's own: nothing in ~/.pi is read or written here.
import { join } from 'node:path'
import { baseLaunch, harnessDir } from './common.js'
import type { HarnessContext, HarnessLaunch } from '../types.js'

export function piLaunch(ctx: HarnessContext): HarnessLaunch {
  const sessions = join(harnessDir(ctx), 'pi-sessions')
  const launch = baseLaunch(ctx, 'pi', ['--print', '--session-dir', sessions, promptWord(ctx.prompt)])
  launch.writable = [sessions]
  return launch
}

// A prompt that began with "-" or "@" would be read as an option or a file: a
// leading newline keeps it a message and changes nothing for the model.
function promptWord(prompt: string): string {
  return /^[-@]/.test(prompt) ? `\n${prompt}` : prompt
}
