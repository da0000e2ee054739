// Which reader reads which harness's runs, and the report files each names.
import { join } from 'node:path'
import { aiderRun } from './aider.js'
import { claudeRun } from './claude.js'
import { cmdRun } from './cmd.js'
import { codexRun } from './codex.js'
import { COPILOT_USAGE_DIR, COPILOT_USAGE_FILE, copilotRun } from './copilot.js'
import { geminiRun } from './gemini.js'
import { piRun } from './pi.js'
import { lastRateLimit } from './rate-limit.js'
import type { RunOutput, RunReader, RunReport } from './run-report.js'

const READERS: Record<string, RunReader> = {
  claude: claudeRun,
  codex: codexRun,
  copilot: copilotRun,
  gemini: geminiRun,
  pi: piRun,
  aider: aiderRun
}

/**
 * The reader for `--harness <name>`. A `cmd:` program reports what it says in
 * `agency-usage` lines (cmd.ts); a harness without a reader (sim) reports no
 * usage; a limit is still recognised in its last lines of output.
 */
export function runReader(harness: string): RunReader {
  if (harness.startsWith('cmd:')) return cmdRun
  return Object.hasOwn(READERS, harness) ? READERS[harness] : lastLinesOnly
}

function lastLinesOnly(out: RunOutput): RunReport {
  return { usage: [], limit: lastRateLimit(out.text.split('\n').slice(-5), out.now) }
}

/** Where a harness leaves its report files, under its harness dir: a file, or a dir of session files. */
export function usageReportPaths(harness: string, harnessDir: string): { files: string[]; dirs: string[] } {
  if (harness === 'copilot') return { files: [join(harnessDir, COPILOT_USAGE_DIR, COPILOT_USAGE_FILE)], dirs: [] }
  if (harness === 'pi') return { files: [], dirs: [join(harnessDir, 'pi-sessions')] }
  return { files: [], dirs: [] }
}
