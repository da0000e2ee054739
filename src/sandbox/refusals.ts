// What the box refused, as the programs inside report it: a refused file or
// connection surfaces in their output as "Permission denied", "Read-only file
// system", "Connection refused" or a name that does not resolve. Inside a box
// these are the sandbox's refusals (hidden paths are unreadable stand-ins and
// nothing outside the allow-list routes), so each such line is named in the
// harness log and counted. Outside a box nothing is scanned.
import { appendFileSync, closeSync, openSync, readSync, statSync, watch, type FSWatcher } from 'node:fs'

export type RefusalKind = 'fs' | 'net'

const FS = /permission denied|read-only file system|\bEACCES\b|\bEROFS\b|\bEPERM\b.*(open|write|mkdir|unlink)/i
const NET =
  /connection refused|\bECONNREFUSED\b|could not resolve host|\bENOTFOUND\b|\bEAI_AGAIN\b|name or service not known|temporary failure in name resolution|network is unreachable|\bENETUNREACH\b/i
/** Our own lines, so a note is never counted again. */
const OURS = 'agentd: sandbox refused'

/** The refusal a line reports, if any. */
export function refusalIn(line: string): RefusalKind | undefined {
  if (line.includes(OURS)) return undefined
  if (FS.test(line)) return 'fs'
  if (NET.test(line)) return 'net'
  return undefined
}

/** The refusals in a run's output, one per line that reports one. */
export function refusalsIn(output: string): Array<{ kind: RefusalKind; line: string }> {
  const out: Array<{ kind: RefusalKind; line: string }> = []
  // A CLI's JSON log holds a whole tool result on one line: its escaped line breaks count as breaks.
  for (const line of output.split(/\n|\\n/)) {
    const kind = refusalIn(line)
    if (kind != null) out.push({ kind, line: line.trim().slice(0, 300) })
  }
  return out
}

export function refusalNote(kind: RefusalKind, line: string): string {
  return `${OURS} (${kind}): ${line}`
}

/**
 * Follows the harness log from its current end; each new line that reports a
 * refusal is counted and named in the log under it.
 */
export class RefusalWatch {
  private offset = 0
  private watcher: FSWatcher | undefined
  private rest = ''

  constructor(
    private readonly logFile: string,
    private readonly onRefusal: (kind: RefusalKind, line: string) => void
  ) {}

  start(): void {
    // The first run makes the log; it exists from now on so that it can be watched.
    try {
      appendFileSync(this.logFile, '')
    } catch {
      /* its directory is not there: nothing to follow */
    }
    try {
      this.offset = statSync(this.logFile).size
    } catch {
      this.offset = 0
    }
    try {
      this.watcher = watch(this.logFile, () => {
        this.readNew()
      })
      this.watcher.on('error', () => {})
    } catch {
      /* no log yet: the first run creates it; read on stop */
    }
  }

  /** Reads what was appended since the last look. */
  readNew(): void {
    let fd: number
    try {
      fd = openSync(this.logFile, 'r')
    } catch {
      return
    }
    const notes: string[] = []
    try {
      const buf = Buffer.alloc(64 * 1024)
      for (;;) {
        const n = readSync(fd, buf, 0, buf.length, this.offset)
        if (n <= 0) break
        this.offset += n
        const text = this.rest + buf.subarray(0, n).toString('utf8')
        const lines = text.split('\n')
        this.rest = lines.pop() ?? ''
        for (const r of refusalsIn(lines.join('\n'))) {
          this.onRefusal(r.kind, r.line)
          notes.push(`[${new Date().toISOString()}] ${refusalNote(r.kind, r.line)}\n`)
        }
      }
    } finally {
      closeSync(fd)
    }
    if (notes.length > 0) {
      try {
        appendFileSync(this.logFile, notes.join(''))
      } catch {
        /* the log is gone */
      }
    }
  }

  stop(): void {
    this.watcher?.close()
    this.readNew()
  }
}
