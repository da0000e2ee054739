// Bad requests over the gRPC API get a named error with the right status, and
// change nothing: the log (entry count and version vector) and the task list
// are the same before and after every one of them.
import { spawn } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { serveDaemon, type ServedDaemon } from '../../../src/cli/serve.js'
import { connectAgency, type Agency } from '../../../src/client/agency.js'
import type { Daemon } from '../../../src/daemon/daemon.js'
import { FAST, MemoryCluster, addrsOf, livePeerIds, memoryAddr, rejectionOf, waitForTaskEverywhere } from './helpers.js'
import { waitFor } from '../../helpers/wait-for.js'

const AGENCY_JS = join(import.meta.dirname, '..', '..', '..', 'dist', 'src', 'cli', 'agency.js')

interface BoardSnapshot {
  entries: number
  vectorDigest: string
  tasks: unknown
}

async function snapshot(agency: Agency): Promise<BoardSnapshot> {
  const info = await agency.call(c => c.logInfo, {})
  const { tasks } = await agency.call(c => c.listTasks, { state: '' })
  return { entries: info.entries, vectorDigest: info.vectorDigest, tasks }
}

/** Runs the agency CLI against `addr`; resolves with its exit code and stderr. */
async function cli(addr: string, args: string[]): Promise<{ code: number | null; stderr: string }> {
  return await new Promise(resolve => {
    const child = spawn(process.execPath, [AGENCY_JS, ...args, '--json', '--addr', addr], { stdio: ['ignore', 'ignore', 'pipe'] })
    let stderr = ''
    child.stderr.setEncoding('utf8').on('data', (s: string) => {
      stderr += s
    })
    child.once('exit', code => {
      resolve({ code, stderr })
    })
  })
}

describe('bad board requests over gRPC', () => {
  const cluster = new MemoryCluster()
  let dataDir: string
  let served: ServedDaemon | undefined
  let daemon: Daemon
  let other: Daemon
  let agency: Agency

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'agency-board-grpc-'))
    served = await serveDaemon({ dataDir, listen: [memoryAddr()], grpc: '127.0.0.1:0', metrics: null, processMetrics: false, ...FAST })
    daemon = served.daemon
    agency = connectAgency(served.grpc?.address)
    other = await cluster.start({ peers: addrsOf(daemon) })
    await waitFor(() => livePeerIds(daemon).includes(other.peerId) && livePeerIds(other).includes(daemon.peerId), {
      what: 'the two daemons to see each other'
    })
    await agency.call(c => c.addTask, {
      id: 'free',
      title: 'nobody holds this',
      description: '',
      deps: [],
      scope: ['src/free/**'],
      priority: 1
    })
    await agency.call(c => c.addTask, {
      id: 'taken',
      title: 'the other daemon holds this',
      description: '',
      deps: [],
      scope: [],
      priority: 0
    })
    await waitForTaskEverywhere([daemon, other], 'taken')
    const held = await other.boardService.claim('taken', ['src/taken/**'])
    expect(held.outcome).toBe('HELD')
    await waitFor(() => daemon.boardService.board.holder('taken')?.holder === other.peerId, {
      what: "the other daemon's claim on this board"
    })
  }, 60_000)

  afterAll(async () => {
    agency?.close()
    await served?.stop()
    await cluster.cleanup()
    if (dataDir != null) await rm(dataDir, { recursive: true, force: true })
  }, 30_000)

  /** Expects `request` to fail with `code` and the board to be unchanged by it. */
  async function expectRefused(code: string, request: () => Promise<unknown>): Promise<Error> {
    const before = await snapshot(agency)
    const err = await rejectionOf(request)
    expect(err.code).toBe(code)
    expect(await snapshot(agency)).toEqual(before)
    return err
  }

  it('answers NOT_FOUND to a claim on an unknown task', async () => {
    const err = await expectRefused('NOT_FOUND', async () => await agency.call(c => c.claim, { task: 'ghost', scope: [], noWait: false }))
    expect(err.message).toContain('ghost')
    await expectRefused('NOT_FOUND', async () => await agency.call(c => c.getTask, { id: 'ghost' }))
  })

  it('answers NOT_FOUND to a release of an unknown task', async () => {
    await expectRefused('NOT_FOUND', async () => await agency.call(c => c.release, { task: 'ghost', note: '', branch: '' }))
  })

  it('answers FAILED_PRECONDITION to a release of a task nobody holds', async () => {
    const err = await expectRefused(
      'FAILED_PRECONDITION',
      async () => await agency.call(c => c.release, { task: 'free', note: 'not mine', branch: '' })
    )
    expect(err.message).toContain('free')
  })

  it('answers FAILED_PRECONDITION to a release, or a done, of a task another daemon holds', async () => {
    const err = await expectRefused(
      'FAILED_PRECONDITION',
      async () => await agency.call(c => c.release, { task: 'taken', note: '', branch: '' })
    )
    expect(err.message).toContain(other.peerId)
    await expectRefused(
      'FAILED_PRECONDITION',
      async () => await agency.call(c => c.done, { task: 'taken', commit: 'abc123', paths: [], noChange: '' })
    )
    // The holder is untouched.
    const { task } = await agency.call(c => c.getTask, { id: 'taken' })
    expect(task).toMatchObject({ state: 'claimed', holder: other.peerId, epoch: 1 })
  })

  it('answers FAILED_PRECONDITION to a claim on a task a live peer holds', async () => {
    await expectRefused('FAILED_PRECONDITION', async () => await agency.call(c => c.claim, { task: 'taken', scope: [], noWait: false }))
  })

  const MALFORMED = ['src/[ab', 'src/{a,b', '!src/x.ts', '/etc/passwd', 'src/../secrets', '', 'src/a\\']
  it.each(MALFORMED)('answers INVALID_ARGUMENT to a claim with the glob %j', async glob => {
    await expectRefused(
      'INVALID_ARGUMENT',
      async () => await agency.call(c => c.claim, { task: 'free', scope: ['src/ok/**', glob], noWait: false })
    )
  })

  it('answers INVALID_ARGUMENT to a task added with a malformed glob, or a malformed id', async () => {
    await expectRefused(
      'INVALID_ARGUMENT',
      async () =>
        await agency.call(c => c.addTask, { id: 'new-task', title: '', description: '', deps: [], scope: ['src/[x'], priority: 0 })
    )
    await expectRefused('INVALID_ARGUMENT', async () => await agency.call(c => c.claim, { task: 'Not A Slug', scope: [], noWait: false }))
  })

  it('leaves the free task claimable after all of that', async () => {
    const { task } = await agency.call(c => c.getTask, { id: 'free' })
    expect(task).toMatchObject({ state: 'open', holder: '', epoch: 0 })
    const reply = await agency.call(c => c.claim, { task: 'free', scope: ['src/free/a.ts'], noWait: true })
    expect(reply.epoch).toBe(1)
  })

  it("exits non-zero with the daemon's message from the CLI", async () => {
    const addr = served?.grpc?.address as string
    const before = await snapshot(agency)
    const [unknown, notMine, badGlob] = await Promise.all([
      cli(addr, ['claim', 'ghost']),
      cli(addr, ['release', 'taken']),
      cli(addr, ['claim', 'free', '--scope', 'src/[ab'])
    ])
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toMatch(/^agency: .*ghost/)
    expect(notMine.code).toBe(1)
    expect(notMine.stderr).toContain('do not hold')
    expect(badGlob.code).toBe(1)
    expect(badGlob.stderr).toContain('malformed glob')
    expect(await snapshot(agency)).toEqual(before)
  }, 60_000)
})
