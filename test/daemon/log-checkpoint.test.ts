// A daemon restarted on its data dir reads the checkpoint of its log's index
// instead of folding every entry again, and serves the same log, board and
// findings as a daemon that folds the whole log: with a checkpoint that
// covers the log, one behind it (entries came after), and one that is
// corrupt or ahead of the store (ignored, removed, and written again).
import { cp, readFile, stat, writeFile } from 'node:fs/promises'
import { afterAll, describe, expect, it } from 'vitest'
import { Daemon } from '../../src/daemon/daemon.js'
import type { NewTask } from '../../src/core/board/index.js'
import { summaryDigest } from '../../src/core/log/feed-summary.js'
import { toHex } from '../../src/core/log/crypto.js'
import { checkpointPath, FINDINGS_CHECKPOINT_FILE, removeCheckpoint } from '../../src/store/checkpoint-file.js'
import { memoryAddr, seedLog, TempDirs } from '../scenarios/sync/helpers.js'

const dirs = new TempDirs()
afterAll(async () => {
  await dirs.removeAll()
})

async function start(dataDir: string): Promise<Daemon> {
  const d = new Daemon({
    dataDir,
    listen: [memoryAddr('ckpt')],
    grpc: null,
    metrics: null,
    processMetrics: false,
    heartbeatMs: 300,
    liveTimeoutMs: 3000,
    ownHeadWaitMs: 1
  })
  await d.start()
  return d
}

function task(id: string, title: string, deps: string[] = []): NewTask {
  return { id, title, description: '', deps, scope: [], priority: 0 }
}

/** What a client of the daemon sees of the log, the board and the findings. */
function served(d: Daemon): unknown {
  const log = d.logService.state
  const now = 1e15
  return {
    entries: log.size,
    digest: toHex(summaryDigest(log.summaries())),
    counts: [...log.countsByKind()].sort(),
    ordered: log.ordered().map(e => e.id),
    tasks: d.boardService.board.tasks(now).map(t => [t.id, t.state, t.holder]),
    goal: d.boardService.board.goal()?.text,
    findings: d.logService.findings.search({ query: 'lease vector', limit: 50 }).map(h => [h.id, h.score]),
    recent: d.logService.findings.search({ limit: 10 }).map(h => h.id)
  }
}

/** A copy of `bytes` with the byte at `fraction` of its length xored with `mask`. */
function flipped(bytes: Uint8Array, fraction: number, mask: number): Buffer {
  const copy = Buffer.from(bytes)
  copy[Math.floor(copy.length * fraction)] ^= mask
  return copy
}

/** What a daemon started on `dataDir` serves, taken before it stops. */
async function startAndStop(dataDir: string): Promise<unknown> {
  const d = await start(dataDir)
  try {
    return served(d)
  } finally {
    await d.stop()
  }
}

/** The same data dir, copied, with no checkpoints: a daemon on it folds the whole log and indexes every finding. */
async function fullFold(dataDir: string): Promise<unknown> {
  const copy = await dirs.make('agency-ckpt-fold-')
  await cp(dataDir, copy, { recursive: true })
  await removeCheckpoint(copy)
  await removeCheckpoint(copy, FINDINGS_CHECKPOINT_FILE)
  const d = await start(copy)
  try {
    return served(d)
  } finally {
    await d.stop()
  }
}

describe('the checkpoint of the log index', () => {
  it('gives the same log, board and findings after a restart as a full fold, also when stale, corrupt or ahead', async () => {
    const dir = await dirs.make('agency-ckpt-')
    await seedLog(dir, { entries: 3000, authors: 4, seed: 5 })

    // first start: no checkpoint, the log is folded; some board entries of its own
    let d = await start(dir)
    expect(d.logService.restoredFromCheckpoint).toBe(0)
    await d.boardService.setGoal({ text: 'checkpoint the views', files: [], testCommand: 'true' })
    await d.boardService.addTasks([task('a', 'first'), task('b', 'second', ['a'])])
    const before = served(d)
    await d.stop()
    const covering = await readFile(checkpointPath(dir))
    expect(covering.byteLength).toBeGreaterThan(0)

    // a checkpoint that covers the whole log
    d = await start(dir)
    expect(d.logService.restoredFromCheckpoint).toBe(3003)
    expect(served(d)).toEqual(before)
    await d.boardService.addTask(task('c', 'third'))
    const after = served(d)
    await d.stop()
    expect(after).toEqual(await fullFold(dir))

    // a stale one: the entries after it are folded on top
    await writeFile(checkpointPath(dir), covering)
    d = await start(dir)
    expect(d.logService.restoredFromCheckpoint).toBe(3003)
    expect(served(d)).toEqual(after)
    await d.stop()

    // a corrupt one: ignored, and written again at the stop
    const corrupt = flipped(covering, 1 / 3, 0xff)
    await writeFile(checkpointPath(dir), corrupt)
    d = await start(dir)
    expect(d.logService.restoredFromCheckpoint).toBe(0)
    expect(served(d)).toEqual(after)
    await d.stop()
    expect((await readFile(checkpointPath(dir))).equals(corrupt)).toBe(false)

    // one of a longer log than the store holds (the store lost its last writes): ignored
    const other = await dirs.make('agency-ckpt-other-')
    await seedLog(other, { entries: 50, authors: 2, seed: 6 })
    d = await start(other)
    const small = served(d)
    await d.stop()
    await writeFile(checkpointPath(other), await readFile(checkpointPath(dir)))
    d = await start(other)
    expect(d.logService.restoredFromCheckpoint).toBe(0)
    expect(served(d)).toEqual(small)
    await d.stop()
    expect((await stat(checkpointPath(other))).size).toBeLessThan(covering.byteLength)
  })

  it('restores the findings index from its checkpoint, and indexes the log instead when that one is corrupt or of another log', async () => {
    const findingsPath = (dir: string): string => checkpointPath(dir, FINDINGS_CHECKPOINT_FILE)
    const dir = await dirs.make('agency-ckpt-findings-')
    await seedLog(dir, { entries: 2000, authors: 3, seed: 8 })
    let d = await start(dir)
    await d.logService.findingsReady()
    expect(d.logService.findingsRestoredFrom).toBe(0)
    await d.logService.append('finding', {
      kind: 'failure',
      text: 'the lease vector timed out',
      paths: ['src/mesh/sync.ts'],
      tags: ['lease'],
      refs: [],
      supersedes: ''
    })
    const before = served(d)
    await d.stop()
    const saved = await readFile(findingsPath(dir))

    // from the checkpoint: the same hits, without indexing the log
    d = await start(dir)
    await d.logService.findingsReady()
    expect(d.logService.findingsRestoredFrom).toBe(2001)
    expect(served(d)).toEqual(before)
    await d.stop()
    expect(await startAndStop(dir)).toEqual(await fullFold(dir))

    // corrupt: removed, the log indexed, and written again at the stop
    await writeFile(findingsPath(dir), flipped(saved, 1 / 2, 0x10))
    d = await start(dir)
    await d.logService.findingsReady()
    expect(d.logService.findingsRestoredFrom).toBe(0)
    expect(served(d)).toEqual(before)
    await d.stop()
    expect((await readFile(findingsPath(dir))).equals(saved)).toBe(true)

    // of another log (same kinds of findings, other ids): refused
    const other = await dirs.make('agency-ckpt-findings-other-')
    await seedLog(other, { entries: 2001, authors: 3, seed: 9 })
    await (await start(other)).stop()
    await writeFile(findingsPath(dir), await readFile(findingsPath(other)))
    d = await start(dir)
    await d.logService.findingsReady()
    expect(d.logService.findingsRestoredFrom).toBe(0)
    expect(served(d)).toEqual(before)
    await d.stop()
  })
})
