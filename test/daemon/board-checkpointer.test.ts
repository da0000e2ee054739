// A daemon restarted on its data dir takes its board from the checkpoint
// written at its stop and folds only the entries after it: the tasks, claims,
// hand-offs, reviews, test runs, integrations and landed work it serves are
// those of a daemon that folds the whole log, with a checkpoint that covers
// the log, one behind it (entries came after), and one that is corrupt or of
// another log (refused, removed, and written again at the next stop).
import { cp, readFile, writeFile } from 'node:fs/promises'
import { existsSync } from 'node:fs'
import { afterAll, describe, expect, it } from 'vitest'
import { Daemon } from '../../src/daemon/daemon.js'
import type { NewTask } from '../../src/core/board/index.js'
import { BOARD_CHECKPOINT_FILE, checkpointPath, removeCheckpoint } from '../../src/store/checkpoint-file.js'
import { VerdictKind } from '../../src/gen/agency/v1/log.js'
import { memoryAddr, seedLog, TempDirs } from '../scenarios/sync/helpers.js'

const dirs = new TempDirs()
afterAll(async () => {
  await dirs.removeAll()
})

async function start(dataDir: string): Promise<Daemon> {
  const d = new Daemon({
    dataDir,
    listen: [memoryAddr('board-ckpt')],
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

const task = (id: string, deps: string[] = []): NewTask => ({
  id,
  title: `task ${id}`,
  description: '',
  deps,
  scope: [`src/${id}/**`],
  priority: 0
})

/** What a client sees of the board. */
function board(d: Daemon): unknown {
  const b = d.boardService.board
  const me = d.peerId
  return {
    size: b.size,
    goals: b.goalHistory(),
    tasks: b.tasks(0),
    ready: b.ready(0).map(t => t.id),
    reviews: b.reviews(),
    runs: b.testRuns(),
    integrations: b.integrationResults(),
    landed: b.landingsBy(me),
    experts: b.experts('src/**'),
    met: b.goalMet(0)
  }
}

/** Some of every board kind, by this daemon. */
async function work(d: Daemon, n: number): Promise<void> {
  const log = d.logService
  await d.boardService.addTasks([task(`t${n}a`), task(`t${n}b`, [`t${n}a`])])
  await log.append('claim', { task: `t${n}a`, scope: [`src/t${n}a/**`], epoch: 1 })
  await log.append('release', { task: `t${n}a`, epoch: 1, note: 'over to you', branch: `agency/t${n}a` })
  await log.append('claim', { task: `t${n}a`, scope: [], epoch: 2, branch: `agency/t${n}a`, handoff: 'over to you' })
  await log.append('integration', { task: `t${n}a`, epoch: 2, commit: `m${n}`, result: 'merged', paths: [`src/t${n}a/x.ts`] })
  await log.append('done', { task: `t${n}a`, epoch: 2, commit: `m${n}`, paths: [`src/t${n}a/x.ts`] })
  await log.append('claim', { task: `t${n}b`, scope: [], epoch: 1 })
  await log.append('review_request', { target: `m${n}`, reviewers: [], note: 'look' })
  await log.append('verdict', { target: `m${n}`, verdict: VerdictKind.VERDICT_APPROVE, evidence: 'fine' })
  await log.append('test_run', {
    commit: `m${n}`,
    branch: 'main',
    passed: 4,
    failed: n % 2,
    total: 4 + (n % 2),
    durationMs: 10,
    summary: ''
  })
}

/** What a daemon on a copy of `dataDir` without the board checkpoint serves: the fold of the whole log. */
async function fullFold(dataDir: string): Promise<unknown> {
  const copy = await dirs.make('agency-board-fold-')
  await cp(dataDir, copy, { recursive: true })
  await removeCheckpoint(copy, BOARD_CHECKPOINT_FILE)
  const d = await start(copy)
  try {
    expect(d.boardService.restoredFromCheckpoint).toBe(0)
    return board(d)
  } finally {
    await d.stop()
  }
}

describe('the board checkpoint', () => {
  it('gives the same board after a restart as a full fold, also when stale, corrupt or of another log', async () => {
    const dir = await dirs.make('agency-board-ckpt-')
    await seedLog(dir, { entries: 300, authors: 3, seed: 11 })
    const path = checkpointPath(dir, BOARD_CHECKPOINT_FILE)

    let d = await start(dir)
    expect(d.boardService.restoredFromCheckpoint).toBe(0)
    await d.boardService.setGoal({ text: 'checkpoint the board', files: [], testCommand: 'true' })
    await work(d, 1)
    const before = board(d)
    const cursor = d.logService.state.cursor
    await d.stop()
    const covering = await readFile(path)

    // covering the whole log: nothing is folded after it
    d = await start(dir)
    expect(d.boardService.restoredFromCheckpoint).toBe(cursor)
    expect(board(d)).toEqual(before)
    await work(d, 2)
    const after = board(d)
    await d.stop()
    expect(after).not.toEqual(before)
    expect(after).toEqual(await fullFold(dir))

    // a stale one: the entries after it are folded on top
    await writeFile(path, covering)
    d = await start(dir)
    expect(d.boardService.restoredFromCheckpoint).toBe(cursor)
    expect(board(d)).toEqual(after)
    await d.stop()

    // corrupt: refused and removed, the log folded, and a new one written at the stop
    const corrupt = Buffer.from(covering)
    corrupt[Math.floor(corrupt.length / 2)] ^= 0x20
    await writeFile(path, corrupt)
    d = await start(dir)
    expect(d.boardService.restoredFromCheckpoint).toBe(0)
    expect(board(d)).toEqual(after)
    await d.stop()
    expect(existsSync(path)).toBe(true)
    expect((await readFile(path)).equals(corrupt)).toBe(false)

    // of another log: refused
    const other = await dirs.make('agency-board-ckpt-other-')
    await seedLog(other, { entries: 300, authors: 3, seed: 12 })
    const o = await start(other)
    await work(o, 1)
    await o.stop()
    await writeFile(path, await readFile(checkpointPath(other, BOARD_CHECKPOINT_FILE)))
    d = await start(dir)
    expect(d.boardService.restoredFromCheckpoint).toBe(0)
    expect(board(d)).toEqual(after)
    await d.stop()
  }, 120_000)
})
