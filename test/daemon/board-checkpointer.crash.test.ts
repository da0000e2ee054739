// The board checkpoint is written while the daemon runs, not only at a clean
// stop: an agentd process killed with SIGKILL restarts from the checkpoint it
// wrote, which covers the board it had, and folds on top only what came
// after. A checkpoint that is ahead of the log (a log that lost its tail) or
// torn is refused there, and the log folded: the board is the same.
import { cp, readFile, writeFile } from 'node:fs/promises'
import { afterAll, describe, expect, it } from 'vitest'
import { Daemon } from '../../src/daemon/daemon.js'
import type { NewTask } from '../../src/core/board/index.js'
import { decodeBoardCheckpoint } from '../../src/core/board/index.js'
import { BOARD_CHECKPOINT_FILE, checkpointPath, readCheckpoint, removeCheckpoint } from '../../src/store/checkpoint-file.js'
import { AgentdProcesses, memoryAddr, type AgentdProcess } from '../scenarios/sync/helpers.js'
import { waitFor } from '../helpers/wait-for.js'

const procs = new AgentdProcesses()
afterAll(async () => {
  await procs.cleanup()
}, 60_000)

const task = (id: string, deps: string[] = []): NewTask => ({
  id,
  title: `task ${id}`,
  description: '',
  deps,
  scope: [`src/${id}/**`],
  priority: 0
})

/** A data dir whose log holds a goal, tasks, claims, a hand-off, an integration and a done, and no board checkpoint. */
async function seededDir(): Promise<string> {
  const dir = await procs.dirs.make('agency-board-crash-')
  const d = new Daemon({
    dataDir: dir,
    listen: [memoryAddr('board-crash')],
    grpc: null,
    metrics: null,
    processMetrics: false,
    heartbeatMs: 300,
    liveTimeoutMs: 3000,
    ownHeadWaitMs: 1
  })
  await d.start()
  const log = d.logService
  await d.boardService.setGoal({ text: 'survive a crash', files: [], testCommand: 'true' })
  await d.boardService.addTasks([task('a'), task('b', ['a']), task('c')])
  await log.append('claim', { task: 'a', scope: ['src/a/**'], epoch: 1 })
  await log.append('release', { task: 'a', epoch: 1, note: 'over to you', branch: 'agency/a' })
  await log.append('claim', { task: 'a', scope: [], epoch: 2, branch: 'agency/a', handoff: 'over to you' })
  await log.append('integration', { task: 'a', epoch: 2, commit: 'm1', result: 'merged', paths: ['src/a/x.ts'] })
  await log.append('done', { task: 'a', epoch: 2, commit: 'm1', paths: ['src/a/x.ts'] })
  await log.append('claim', { task: 'c', scope: [], epoch: 1 })
  await d.stop()
  // what a daemon that never stopped cleanly has: none
  await removeCheckpoint(dir, BOARD_CHECKPOINT_FILE)
  return dir
}

/** The cursor the board checkpoint on disk covers (0: none or unreadable). */
async function checkpointCursor(dir: string): Promise<number> {
  const bytes = await readCheckpoint(dir, BOARD_CHECKPOINT_FILE)
  if (bytes === undefined) return 0
  try {
    return decodeBoardCheckpoint(bytes).cursor
  } catch {
    return 0
  }
}

/** The cursor this run of the daemon took its board from, per its log (0: it folded the whole log). */
function restoredFrom(p: AgentdProcess): number {
  const line = p.stderr.split('\n').find(l => l.includes('"board restored from its checkpoint"'))
  return line === undefined ? 0 : (JSON.parse(line) as { cursor: number }).cursor
}

async function tasks(p: AgentdProcess): Promise<unknown> {
  const { tasks } = await p.agency.call(c => c.listTasks, { state: '' })
  return tasks.map(t => ({ ...t, heldSinceMs: undefined }))
}

describe('the board checkpoint across a crash', () => {
  it('is written while running, taken after a SIGKILL, and refused when ahead of the log or torn', async () => {
    const dir = await seededDir()
    const env = { AGENCY_LOG_LEVEL: 'info' }
    const p = await procs.start({ name: 'crash', dataDir: dir, env })
    expect(restoredFrom(p)).toBe(0)
    const entries = (await p.logInfo()).entries
    // none on disk: the running daemon writes one covering its whole log
    await waitFor(async () => (await checkpointCursor(dir)) === entries, {
      what: 'a board checkpoint written while running',
      timeoutMs: 30_000
    })
    const had = await tasks(p)

    await p.stop('SIGKILL')
    const early = await procs.dirs.make('agency-board-crash-early-')
    await cp(dir, early, { recursive: true })
    await p.start()
    expect(restoredFrom(p)).toBe(entries)
    expect(await tasks(p)).toEqual(had)

    // an entry after the checkpoint: the next start after a crash folds it on top
    await p.agency.call(c => c.addTask, { id: 'd', title: 'task d', description: '', deps: ['c'], scope: ['src/d/**'], priority: 1 })
    const more = await tasks(p)
    expect(more).not.toEqual(had)
    await p.stop('SIGKILL')
    await p.start()
    expect(restoredFrom(p)).toBe(entries)
    expect(await tasks(p)).toEqual(more)
    // a clean stop writes one covering the new entry too
    await p.stop()
    expect(await checkpointCursor(dir)).toBeGreaterThan(entries)

    // ahead of the log (as when a log lost its last writes): refused, the log folded
    const q = new (p.constructor as typeof AgentdProcess)({ ...p.options, name: 'crash-early', dataDir: early })
    await writeFile(checkpointPath(early, BOARD_CHECKPOINT_FILE), await readFile(checkpointPath(dir, BOARD_CHECKPOINT_FILE)))
    await q.start()
    try {
      expect(restoredFrom(q)).toBe(0)
      expect(q.stderr).toContain('the board checkpoint does not fit the log')
      expect(await tasks(q)).toEqual(had)
    } finally {
      await q.stop('SIGKILL')
    }

    // torn (half of it): refused, the log folded
    const whole = await readFile(checkpointPath(dir, BOARD_CHECKPOINT_FILE))
    await writeFile(checkpointPath(dir, BOARD_CHECKPOINT_FILE), whole.subarray(0, Math.floor(whole.length / 2)))
    await p.start()
    expect(restoredFrom(p)).toBe(0)
    expect(p.stderr).toContain('the board checkpoint does not fit the log')
    expect(await tasks(p)).toEqual(more)
    await p.stop('SIGKILL')
  }, 120_000)
})
