// The machine's floor for a catch-up, for bench:log: the same entries a late
// joiner takes in, each hashed (sha256, as an entry's id) and all written in
// one LevelDB batch with the `level` package, with no daemon, no network, no
// signature check and no index. A catch-up's time over this floor says how
// far agency is from what the disk and the hash allow, which a machine's
// speed or load changes far less than the seconds themselves.
//
// Runs in a process of its own (forked by log-sync.bench.ts): it reads the
// entries from a data dir first (not timed), answers `loaded`, and on `go`
// hashes and writes them into a fresh LevelDB, answering with the figures.
import { fork } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { performance } from 'node:perf_hooks'
import { Level } from 'level'
import { sha256, toHex } from '../../src/core/log/crypto.js'
import { levelPath } from '../../src/store/level-db.js'

export interface FloorResult {
  entries: number
  /** wall seconds: hashing, then the batch until LevelDB answered */
  seconds: number
  hashSeconds: number
  writeSeconds: number
  /** CPU seconds of the process (all its threads: LevelDB's too) over the same span */
  cpuSeconds: number
}

/** Every accepted entry's bytes in a data dir, in cursor order (the log store's `log-c` sublevel). */
async function readEntries(dataDir: string): Promise<Uint8Array[]> {
  const db = new Level<string, Uint8Array>(levelPath(dataDir), { keyEncoding: 'utf8', valueEncoding: 'view' })
  await db.open()
  try {
    const out: Uint8Array[] = []
    for await (const v of db.sublevel<string, Uint8Array>('log-c', { keyEncoding: 'utf8', valueEncoding: 'view' }).values()) out.push(v)
    return out
  } finally {
    await db.close()
  }
}

const cpuSeconds = (): number => {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1e6
}

/**
 * Hashes each entry and writes them all, keyed by id, in one batch (chained:
 * each put goes to the native batch as it is made, the cheapest way the
 * package offers), unsynced like a sync's batches.
 */
export async function measureFloor(entries: readonly Uint8Array[], dir: string): Promise<FloorResult> {
  const db = new Level<string, Uint8Array>(join(dir, 'db'), { keyEncoding: 'utf8', valueEncoding: 'view' })
  await db.open()
  try {
    const cpu0 = cpuSeconds()
    const t0 = performance.now()
    const ids = entries.map(e => toHex(sha256(e)))
    const t1 = performance.now()
    const batch = db.batch()
    for (let i = 0; i < entries.length; i++) batch.put(ids[i], entries[i])
    await batch.write()
    const t2 = performance.now()
    return {
      entries: entries.length,
      seconds: (t2 - t0) / 1000,
      hashSeconds: (t1 - t0) / 1000,
      writeSeconds: (t2 - t1) / 1000,
      cpuSeconds: cpuSeconds() - cpu0
    }
  } finally {
    await db.close()
  }
}

/**
 * Starts the floor's process on a data dir (not running, e.g. before its
 * daemon starts); `loaded` resolves once it holds the entries, and `run`
 * then measures, so the floor can be taken at the moment the catch-up is.
 */
export function startFloor(dataDir: string): { loaded: Promise<number>; run: () => Promise<FloorResult>; stop: () => void } {
  const proc = fork(fileURLToPath(import.meta.url), ['--floor-of', dataDir], {
    execArgv: [...process.execArgv, '--max-old-space-size=4096'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc']
  })
  const exited = new Promise<never>((resolve, reject) => {
    proc.once('exit', (code, signal) => {
      reject(new Error(`the floor's process exited (${signal ?? `code ${code}`}) without a result`))
    })
    proc.once('error', reject)
  })
  exited.catch(() => {})
  const message = async <T>(key: string): Promise<T> =>
    await Promise.race([
      exited,
      new Promise<T>(resolve => {
        const on = (m: Record<string, unknown>): void => {
          if (key in m) {
            proc.off('message', on)
            resolve(m[key] as T)
          }
        }
        proc.on('message', on)
      })
    ])
  const loaded = message<number>('loaded')
  return {
    loaded,
    run: async () => {
      const result = message<FloorResult>('result')
      proc.send('go')
      return await result
    },
    stop: () => {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill()
    }
  }
}

async function child(): Promise<void> {
  const dataDir = process.argv[process.argv.indexOf('--floor-of') + 1]
  const entries = await readEntries(dataDir)
  process.send?.({ loaded: entries.length })
  await new Promise<void>(resolve =>
    process.once('message', () => {
      resolve()
    })
  )
  const dir = await mkdtemp(join(tmpdir(), 'agency-bench-floor-'))
  try {
    const result = await measureFloor(entries, dir)
    await new Promise<void>((resolve, reject) =>
      process.send?.({ result }, err => {
        if (err != null) reject(err)
        else resolve()
      })
    )
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

if (process.argv.includes('--floor-of')) {
  child().then(
    () => process.exit(0),
    err => {
      process.stderr.write(`log floor failed: ${(err as Error).stack ?? String(err)}\n`)
      process.exit(1)
    }
  )
}
