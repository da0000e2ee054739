import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  HarnessSupervisor,
  harnessLaunch,
  harnessLogPath,
  type HarnessContext,
  type HarnessExit,
  type HarnessLaunch,
  type HarnessRestart
} from '../../src/harness/index.js'
import { restartDelayMs } from '../../src/harness/restart-backoff.js'
import { FailedPreconditionError, InvalidArgumentError } from '../../src/core/errors.js'
import { waitFor } from '../helpers/wait-for.js'

let dir: string
let ctx: HarnessContext
const running: HarnessSupervisor[] = []

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agency-harness-'))
  ctx = {
    agentId: 'agent-x',
    agentName: 'xena',
    workspace: dir,
    dataDir: join(dir, 'data'),
    agencyAddr: '127.0.0.1:7409',
    prompt: 'THE PROMPT TEXT',
    agencyBin: 'agency'
  }
})

afterEach(async () => {
  await Promise.all(running.splice(0).map(s => s.stop()))
  await rm(dir, { recursive: true, force: true })
})

function supervise(launch: HarnessLaunch, opts: Partial<ConstructorParameters<typeof HarnessSupervisor>[0]> = {}): HarnessSupervisor {
  const s = new HarnessSupervisor({ launch, dataDir: ctx.dataDir, minBackoffMs: 1, maxBackoffMs: 5, ...opts })
  running.push(s)
  return s
}

async function logText(): Promise<string> {
  return await readFile(harnessLogPath(ctx.dataDir), 'utf8').catch(() => '')
}

// Dead, or a zombie nobody reaps (PID 1 in a container may not).
function isGone(pid: number): boolean {
  try {
    process.kill(pid, 0)
  } catch {
    return true
  }
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.startsWith('Z') ?? false
  } catch {
    return true
  }
}

describe('HarnessSupervisor', () => {
  it('restarts a harness that crashes, counting restarts and logging its output', async () => {
    const restarts: HarnessRestart[] = []
    const exits: HarnessExit[] = []
    const s = supervise(harnessLaunch('cmd:echo "crash of $AGENCY_AGENT_ID"; exit 1', ctx), {
      onRestart: r => restarts.push(r),
      onExit: e => exits.push(e)
    })
    await s.start()
    await waitFor(() => s.restarts >= 2, { what: 'two restarts' })
    await s.stop()

    expect(restarts.slice(0, 2).map(r => r.restarts)).toEqual([1, 2])
    expect(restarts[0].previous.code).toBe(1)
    expect(exits.length).toBeGreaterThanOrEqual(2)
    expect(exits.every(e => e.code === 1 || e.signal != null)).toBe(true)
    const log = await logText()
    // The first two runs crashed on their own; the third may be stopped before it prints.
    expect(log.match(/crash of agent-x/g)?.length).toBeGreaterThanOrEqual(2)
    expect(log).toMatch(/agentd: harness exited \(code 1, signal null\)/)
    expect(s.state).toBe('stopped')
  })

  it('appends to the log across supervisors instead of truncating it', async () => {
    for (const word of ['first-run', 'second-run']) {
      const s = supervise(harnessLaunch(`cmd:echo ${word}`, ctx), { shouldContinue: () => false })
      await s.start()
      await s.finished
    }
    const log = await logText()
    expect(log.indexOf('first-run')).toBeGreaterThanOrEqual(0)
    expect(log.indexOf('second-run')).toBeGreaterThan(log.indexOf('first-run'))
  })

  it('stop() ends a long-running harness and what it started', async () => {
    const pidFile = join(dir, 'sleeper.pid')
    const s = supervise(harnessLaunch(`cmd:sleep 30 & echo $! > ${pidFile}; sleep 30`, ctx))
    await s.start()
    await waitFor(async () => (await readFile(pidFile, 'utf8').catch(() => '')).trim() !== '', { what: 'the background sleep' })
    const pid = s.pid!
    const sleeper = Number((await readFile(pidFile, 'utf8')).trim())
    expect(() => process.kill(pid, 0)).not.toThrow()

    await s.stop()

    expect(() => process.kill(pid, 0)).toThrow()
    await waitFor(() => isGone(sleeper), { what: 'the background sleep to die' })
    expect(s.pid).toBeUndefined()
    expect(s.state).toBe('stopped')
    await s.finished
  })

  it('stop() kills with SIGKILL a harness that ignores SIGTERM', async () => {
    const exits: HarnessExit[] = []
    const s = supervise(harnessLaunch('cmd:trap "" TERM; echo trapped; sleep 30', ctx), { stopGraceMs: 50, onExit: e => exits.push(e) })
    await s.start()
    // The line the shell prints, not the start note (which quotes the command).
    await waitFor(async () => (await logText()).split('\n').includes('trapped'), { what: 'the trap' })
    const pid = s.pid!
    const first = s.stop()
    await s.stop() // a second caller also waits until the harness is gone
    expect(exits.at(-1)?.signal).toBe('SIGKILL')
    await first
    expect(() => process.kill(pid, 0)).toThrow()
  })

  it('stops restarting once shouldContinue() says the work is done', async () => {
    let asked = 0
    const s = supervise(harnessLaunch('cmd:exit 0', ctx), { shouldContinue: () => ++asked < 3 })
    await s.start()
    await s.finished
    expect(s.state).toBe('finished')
    expect(asked).toBe(3)
    expect(s.restarts).toBe(2)
    expect(await logText()).toContain('work is done')
  })

  it('starts no run while paused, and the held one on resume()', async () => {
    let paused = true
    const s = supervise(harnessLaunch('cmd:echo "run $AGENCY_AGENT_ID"; exit 0', ctx), { paused: () => paused })
    await s.start()
    expect(s.state).toBe('waiting')
    expect(s.pid).toBeUndefined()
    expect(await logText()).toContain('the operator paused the swarm: no new run until it resumes')
    s.resume() // still paused: nothing happens
    expect(s.pid).toBeUndefined()
    paused = false
    s.resume()
    await waitFor(async () => (await logText()).includes('run agent-x'), { what: 'a run after the resume' })
    await s.stop()
  })

  it('holds a restart that comes due while paused', async () => {
    let paused = false
    // the pause comes while the run ends: the restart after it is held
    const s = supervise(harnessLaunch('cmd:exit 0', ctx), {
      paused: () => paused,
      onExit: () => {
        paused = true
      }
    })
    await s.start()
    await waitFor(async () => s.state === 'waiting' && (await logText()).includes('no new run until it resumes'), {
      what: 'the restart held'
    })
    expect(s.restarts).toBe(0)
    paused = false
    s.resume()
    await waitFor(() => s.restarts === 1, { what: 'the held restart' })
    await s.stop()
  })

  it('a stop() during the backoff wait cancels the pending restart', async () => {
    const backoffMs = 150
    const s = supervise(harnessLaunch('cmd:exit 1', ctx), { minBackoffMs: backoffMs, maxBackoffMs: backoffMs })
    await s.start()
    await waitFor(() => s.state === 'waiting', { what: 'the backoff wait' })
    const timers = (): number => process.getActiveResourcesInfo().filter(r => r === 'Timeout').length
    const before = timers()
    await s.stop()
    expect(timers()).toBe(before - 1)
    // Past the first restart's delay, the one the stop cancelled: nothing started.
    await new Promise(resolve => setTimeout(resolve, 2 * restartDelayMs(1, backoffMs, backoffMs)))
    expect(s.restarts).toBe(0)
    expect((await logText()).match(/agentd: starting/g)?.length).toBe(1)
  })

  it('writes the launch files and gives the harness its environment and the agency shim on PATH', async () => {
    const fake = join(dir, 'fake-agency.mjs')
    await writeFile(fake, 'console.log("fake-agency", process.env.AGENCY_ADDR, process.argv.slice(2).join(","))\n')
    const launch = harnessLaunch('cmd:agency status --json; echo "id=$AGENCY_AGENT_ID"; cat "$AGENCY_PROMPT_FILE"', {
      ...ctx,
      agencyBin: `"${process.execPath}" ${fake}`
    })
    const s = supervise(launch, { shouldContinue: () => false, baseEnv: { PATH: process.env.PATH, SOME_USER_VAR: 'kept' } })
    await s.start()
    await s.finished

    const log = await logText()
    expect(log).toContain('fake-agency 127.0.0.1:7409 status,--json')
    expect(log).toContain('id=agent-x')
    expect(log).toContain('THE PROMPT TEXT')
    expect(await readFile(join(ctx.dataDir, 'harness', 'prompt.md'), 'utf8')).toBe('THE PROMPT TEXT')
    expect((await stat(join(ctx.dataDir, 'harness', 'bin', 'agency'))).mode & 0o777).toBe(0o755)
  })

  it('merges the launch environment over the base one', async () => {
    const launch: HarnessLaunch = {
      command: '/bin/sh',
      args: ['-c', 'echo "user=$SOME_USER_VAR addr=$AGENCY_ADDR"'],
      env: { AGENCY_ADDR: 'from-launch' },
      cwd: dir,
      files: []
    }
    const s = supervise(launch, {
      shouldContinue: () => false,
      baseEnv: { PATH: process.env.PATH, SOME_USER_VAR: 'kept', AGENCY_ADDR: 'from-base' }
    })
    await s.start()
    await s.finished
    expect(await logText()).toContain('user=kept addr=from-launch')
  })

  it('logs a harness that cannot start and keeps trying', async () => {
    const launch: HarnessLaunch = { command: join(dir, 'no-such-harness'), args: [], env: {}, cwd: dir, files: [] }
    const exits: HarnessExit[] = []
    const s = supervise(launch, { onExit: e => exits.push(e) })
    await s.start()
    await waitFor(() => s.restarts >= 1, { what: 'a retry' })
    await s.stop()
    expect(exits[0].error?.message).toMatch(/ENOENT/)
    expect(await logText()).toMatch(/harness could not start: .*ENOENT/)
  })

  it('refuses bad options and a second start', async () => {
    const launch = harnessLaunch('cmd:sleep 30', ctx)
    expect(() => new HarnessSupervisor({ launch, dataDir: ctx.dataDir, minBackoffMs: 10, maxBackoffMs: 5 })).toThrow(InvalidArgumentError)
    expect(() => new HarnessSupervisor({ launch, dataDir: ctx.dataDir, minBackoffMs: -1 })).toThrow(InvalidArgumentError)
    expect(() => new HarnessSupervisor({ launch: { ...launch, command: '' }, dataDir: ctx.dataDir })).toThrow(InvalidArgumentError)
    const s = supervise(launch)
    await s.start()
    await expect(s.start()).rejects.toThrow(FailedPreconditionError)
  })
})

describe('restartDelayMs', () => {
  it('doubles from the minimum with each quick exit and stops at the maximum', () => {
    expect([1, 2, 3, 4, 5, 6, 7].map(n => restartDelayMs(n, 1_000, 30_000))).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000])
    expect(restartDelayMs(10_000, 1_000, 30_000)).toBe(30_000)
    expect(restartDelayMs(3, 0, 10)).toBe(0)
  })
})
