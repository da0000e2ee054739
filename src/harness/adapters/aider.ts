// Aider (pip aider-chat).
// Sources: "Scripting aider", https://aider.chat/docs/scripting.html (--message-file runs one
//   instruction, applies the edits and exits); "Options reference",
//   https://aider.chat/docs/config/options.html (--yes-always, --no-gitignore,
//   --chat-history-file, --input-history-file, --no-check-update, --no-show-release-notes,
//   --analytics-disable, --no-pretty).
//
// Aider has no MCP client, so no MCP configuration is written: the prompt tells it
// to use the `agency` CLI instead. Even with --yes-always aider asks before it
// runs a shell command, and headless nobody answers, so in practice aider makes
// one round of edits (auto-committed) per run and the supervisor restarts it; it
// cannot claim or integrate on its own. Its history files go to the data dir
// (harness/aider, the one place there it may write from a box) so
// they do not end up in the shared repository, and --no-gitignore stops it from
// editing the repository's .gitignore.
import { join } from 'node:path'
import { baseLaunch, harnessDir, promptFilePath } from './common.js'
import type { HarnessContext, HarnessLaunch } from '../types.js'

export function aiderLaunch(ctx: HarnessContext): HarnessLaunch {
  const dir = join(harnessDir(ctx), 'aider')
  const launch = baseLaunch(ctx, 'aider', [
    '--message-file',
    promptFilePath(ctx),
    '--yes-always',
    '--no-gitignore',
    '--chat-history-file',
    join(dir, 'aider.chat.history.md'),
    '--input-history-file',
    join(dir, 'aider.input.history'),
    '--no-check-update',
    '--no-show-release-notes',
    '--analytics-disable',
    '--no-pretty'
  ])
  launch.writable = [dir]
  return launch
}
