// The start gate: a held run is not started and not counted as a failure; it
// starts when the gate opens (asked again after waitMs, or at once on wake()),
// and each exit says where its output starts in the harness log.
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { HarnessSupervisor, harnessLogPath, type HarnessExit, type HarnessLaunch } from '../../src/harness/index.js'
import type { StartHold } from '../../src/harness/supervisor.js'
import { waitFor } from '../helpers/wait-for.js'

let dir: string
const running: HarnessSupervisor[] = []

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agency-gate-'))
})
afterEach(async () => {
  await Promise.all(running.splice(0).map(s => s.stop()))
  await rm(dir, { recursive: true, force: true })
})

const echo = (word: string): HarnessLaunch => ({ command: 'sh', args: ['-c', `echo ${word}-$$`], env: {}, cwd: dir, files: [] })

describe('the start gate', () => {
  it('holds the first start until it opens; wake() asks at once', async () => {
    let hold: StartHold | null = { reason: 'budget reached', waitMs: 60_000 }
    const exits: HarnessExit[] = []
    const s = new HarnessSupervisor({
      launch: echo('run'),
      dataDir: join(dir, 'data'),
      minBackoffMs: 1,
      maxBackoffMs: 5,
      startGate: () => hold,
      shouldContinue: () => exits.length < 1,
      onExit: e => exits.push(e)
    })
    running.push(s)
    await s.start()
    expect(s.state).toBe('waiting')
    expect(s.hold?.reason).toBe('budget reached')
    expect(s.pid).toBeUndefined()
    hold = null
    s.wake()
    await waitFor(() => exits.length === 1, { what: 'the run' })
    await s.finished
    const log = await readFile(harnessLogPath(join(dir, 'data')), 'utf8')
    expect(log).toContain('not starting a run: budget reached')
    expect(log).toContain('starting again: budget reached no longer holds')
    expect(s.restarts).toBe(0)
  })

  it('holds a restart, asks again after waitMs, and each exit says where its output starts', async () => {
    let asked = 0
    const exits: HarnessExit[] = []
    const s = new HarnessSupervisor({
      launch: echo('out'),
      dataDir: join(dir, 'data'),
      minBackoffMs: 1,
      maxBackoffMs: 5,
      // after the first run: held twice (20 ms each), then open
      startGate: () => (exits.length === 0 ? null : ++asked <= 2 ? { reason: 'provider limited', waitMs: 20 } : null),
      shouldContinue: () => exits.length < 2,
      onExit: e => exits.push(e)
    })
    running.push(s)
    await s.start()
    await s.finished
    expect(exits).toHaveLength(2)
    expect(asked).toBe(3)
    expect(s.restarts).toBe(1)
    const log = await readFile(harnessLogPath(join(dir, 'data')), 'utf8')
    // each run's output is in the log from its own offset on
    const first = log.slice(exits[0].outputFrom, exits[1].outputFrom)
    const second = log.slice(exits[1].outputFrom)
    expect(first.match(/^out-\d+$/gm)).toHaveLength(1)
    expect(second.match(/^out-\d+$/gm)).toHaveLength(1)
    expect(first.match(/^out-\d+$/m)?.[0]).not.toBe(second.match(/^out-\d+$/m)?.[0])
  })

  it('a hold that outlives the work ends supervision instead of starting a run', async () => {
    let done = false
    const exits: HarnessExit[] = []
    const s = new HarnessSupervisor({
      launch: echo('x'),
      dataDir: join(dir, 'data'),
      minBackoffMs: 1,
      maxBackoffMs: 5,
      startGate: () => (exits.length > 0 ? { reason: 'held', waitMs: 20 } : null),
      shouldContinue: () => !done,
      onExit: e => exits.push(e)
    })
    running.push(s)
    await s.start()
    await waitFor(() => s.hold != null, { what: 'the hold' })
    done = true
    await s.finished
    expect(s.state).toBe('finished')
    expect(exits).toHaveLength(1)
  })
})
