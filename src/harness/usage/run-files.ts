// Reads back what one run reported: its output from the harness log (from the
// offset where the run started) and the report files its CLI wrote (Copilot's
// usage file, Pi's session files changed during the run, Codex's session file
// named by the run's session id). A report file is
// removed once read, so the next run's cannot be mistaken for it. Synchronous:
// it runs once per run, in the exit path that decides whether the run failed.
import { closeSync, fstatSync, openSync, readdirSync, readFileSync, readSync, rmSync, statSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { codexSessionId } from './codex.js'
import { runReader, usageReportPaths } from './readers.js'
import type { RunReport } from './run-report.js'

/** The most of a run's output read back: its last bytes are where CLIs report. */
const MAX_OUTPUT_BYTES = 4 * 1024 * 1024

export interface RunFilesInput {
  harness: string
  harnessLog: string
  harnessDir: string
  /** the run's first byte in the harness log */
  outputFrom: number
  /** when the run started, ms since the epoch (session files written since count) */
  startedAt: number
  now: number
  /** where Codex keeps its sessions (default $CODEX_HOME, else ~/.codex) */
  codexHome?: string
}

export function readRunReport(i: RunFilesInput): RunReport {
  const text = readFrom(i.harnessLog, i.outputFrom)
  const paths = usageReportPaths(i.harness, i.harnessDir)
  const files = new Map<string, string>()
  for (const file of paths.files) {
    const content = readOrUndefined(file)
    if (content == null) continue
    files.set(file, content)
    rmSync(file, { force: true })
  }
  for (const dir of paths.dirs) {
    let names: string[] = []
    try {
      names = readdirSync(dir, { recursive: true, encoding: 'utf8' })
    } catch {
      /* no sessions yet */
    }
    for (const name of names) {
      if (!name.endsWith('.jsonl')) continue
      const path = join(dir, name)
      let mtime: number
      try {
        mtime = statSync(path).mtimeMs
      } catch {
        continue
      }
      if (mtime < i.startedAt) continue
      files.set(path, readOrUndefined(path) ?? '')
    }
  }
  if (i.harness === 'codex') {
    const found = codexSessionFile(i.codexHome ?? process.env.CODEX_HOME ?? join(homedir(), '.codex'), text, [i.startedAt, i.now])
    if (found != null) files.set(found.path, found.content)
  }
  return runReader(i.harness)({ text, files, now: i.now })
}

/**
 * The session file of the Codex run whose output is `text`: under
 * sessions/YYYY/MM/DD (the day the run started or ended, local or UTC), the
 * rollout named by the session id the output gives. It is Codex's own
 * history, so it is read and kept, not removed.
 */
function codexSessionFile(codexHome: string, text: string, times: number[]): { path: string; content: string } | undefined {
  const id = codexSessionId(text)
  if (id == null) return undefined
  const pad = (n: number): string => String(n).padStart(2, '0')
  const days = new Set(
    times.flatMap(t => {
      const d = new Date(t)
      return [
        join(String(d.getFullYear()), pad(d.getMonth() + 1), pad(d.getDate())),
        join(String(d.getUTCFullYear()), pad(d.getUTCMonth() + 1), pad(d.getUTCDate()))
      ]
    })
  )
  for (const day of days) {
    const dir = join(codexHome, 'sessions', day)
    let names: string[]
    try {
      names = readdirSync(dir)
    } catch {
      continue
    }
    const name = names.find(n => n.startsWith('rollout-') && n.endsWith(`-${id}.jsonl`))
    const content = name != null ? readOrUndefined(join(dir, name)) : undefined
    if (name != null && content != null) return { path: join(dir, name), content }
  }
  return undefined
}

function readOrUndefined(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8')
  } catch {
    return undefined
  }
}

function readFrom(path: string, from: number): string {
  let fd: number
  try {
    fd = openSync(path, 'r')
  } catch {
    return ''
  }
  try {
    const size = fstatSync(fd).size
    const start = Math.max(from, size - MAX_OUTPUT_BYTES, 0)
    const buf = Buffer.alloc(Math.max(0, size - start))
    readSync(fd, buf, 0, buf.length, start)
    return buf.toString('utf8')
  } finally {
    closeSync(fd)
  }
}
