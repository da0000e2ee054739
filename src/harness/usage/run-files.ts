// Reads back what one run reported: its output from the harness log (from the
// offset where the run started) and the report files its CLI wrote (Copilot's
// usage file, Pi's session files changed during the run). A report file is
// removed once read, so the next run's cannot be mistaken for it.
import { open, readdir, readFile, rm, stat } from 'node:fs/promises'
import { join } from 'node:path'
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
}

export async function readRunReport (i: RunFilesInput): Promise<RunReport> {
  const text = await readFrom(i.harnessLog, i.outputFrom)
  const paths = usageReportPaths(i.harness, i.harnessDir)
  const files = new Map<string, string>()
  for (const file of paths.files) {
    const content = await readFile(file, 'utf8').catch(() => undefined)
    if (content == null) continue
    files.set(file, content)
    await rm(file, { force: true })
  }
  for (const dir of paths.dirs) {
    for (const name of await readdir(dir, { recursive: true }).catch(() => [] as string[])) {
      if (!name.endsWith('.jsonl')) continue
      const path = join(dir, name)
      const s = await stat(path).catch(() => undefined)
      if (s == null || s.mtimeMs < i.startedAt) continue
      files.set(path, await readFile(path, 'utf8').catch(() => ''))
    }
  }
  return runReader(i.harness)({ text, files, now: i.now })
}

async function readFrom (path: string, from: number): Promise<string> {
  const f = await open(path, 'r').catch(() => undefined)
  if (f == null) return ''
  try {
    const size = (await f.stat()).size
    const start = Math.max(from, size - MAX_OUTPUT_BYTES, 0)
    const buf = Buffer.alloc(Math.max(0, size - start))
    await f.read(buf, 0, buf.length, start)
    return buf.toString('utf8')
  } finally {
    await f.close()
  }
}
