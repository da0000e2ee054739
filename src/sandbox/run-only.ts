// Files a box may run but not read: ProgramBench's reference executable is
// execute-only. Each is copied once, mode 0111, into a directory of the
// sandbox's own and bound read-only at its path in the box. Inside, nothing
// can read its bytes: no read bit for anyone, capabilities dropped (so not
// even root in the box overrides the mode), the mount read-only (no chmod),
// no user namespaces inside (no way to take capabilities back), and a
// process started from an unreadable file is not dumpable (no /proc/<pid>/exe,
// mem or maps). A compiled program runs; a script, which its interpreter
// must read, does not.
import { chmodSync, copyFileSync, statSync } from 'node:fs'
import { isAbsolute, join, normalize, resolve } from 'node:path'
import { InvalidArgumentError } from '../core/errors.js'
import { SYSTEM_DIRS } from './paths.js'

/** A file the box runs, not reads: the host file and where it is in the box. */
export interface RunOnlyFile {
  file: string
  at: string
}

/** `FILE=BOXPATH`: the file must exist, BOXPATH be absolute and outside what every box binds from the host. */
export function parseRunOnly(entries: readonly string[]): RunOnlyFile[] {
  return entries
    .flatMap(e => e.split(','))
    .map(e => e.trim())
    .filter(e => e !== '')
    .map(entry => {
      const eq = entry.indexOf('=')
      if (eq <= 0) throw new InvalidArgumentError(`--sandbox-run-only: ${JSON.stringify(entry)} is not FILE=BOXPATH`)
      const file = resolve(entry.slice(0, eq))
      const at = normalize(entry.slice(eq + 1))
      let regular = false
      try {
        regular = statSync(file).isFile()
      } catch {
        /* said below */
      }
      if (!regular) throw new InvalidArgumentError(`--sandbox-run-only: ${file} is not a file`)
      if (!isAbsolute(at) || at === '/' || at.startsWith('/tmp/') || SYSTEM_DIRS.some(d => at === d || at.startsWith(d + '/'))) {
        throw new InvalidArgumentError(
          `--sandbox-run-only: the box path ${JSON.stringify(entry.slice(eq + 1))} must be absolute and outside /tmp and the system directories, e.g. /run/agency/reference/executable`
        )
      }
      return { file, at }
    })
}

/** Copies each file into `dir` with mode 0111; the copies and their box paths, for the box to bind. */
export function executeOnlyCopies(files: readonly RunOnlyFile[], dir: string): Array<[string, string]> {
  return files.map((f, i) => {
    const copy = join(dir, `run-only-${i}`)
    copyFileSync(f.file, copy)
    chmodSync(copy, 0o111)
    return [copy, f.at]
  })
}
