// External programs the monitoring tests use (promtool, prometheus, kubectl,
// systemd-analyze). A test that needs a missing one skips, and says so in one
// line on stderr, never passing silently.
import { accessSync, constants } from 'node:fs'
import { delimiter, join } from 'node:path'

/** The absolute path of `name` on PATH, or undefined. */
export function findTool(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir === '') continue
    const candidate = join(dir, name)
    try {
      accessSync(candidate, constants.X_OK)
      return candidate
    } catch {
      /* not here */
    }
  }
  return undefined
}

/** The reason a test skips for lack of `tool`, printed once on stderr. */
export function missingTool(test: string, tool: string, install: string): string {
  const line = `SKIP ${test}: \`${tool}\` is not installed (${install})`
  process.stderr.write(line + '\n')
  return line
}

export const PROMETHEUS_INSTALL = 'Debian: apt-get install -y prometheus'
