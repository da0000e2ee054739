// Runs bench:swarm's jobs in child processes, one process per job, never
// more at once than the machine's free memory holds. A job's process ends
// with the job, so its peak RSS (getrusage's maxrss, read by the child after
// the run) is that run's own, and its memory goes back to the machine at
// once. Before a job starts, its peak is estimated (from the peaks measured
// so far for that strategy, size and project, else from a per-replica
// model) and it waits until os.freemem() (MemAvailable on Linux) minus what
// the running jobs were estimated to take holds it.

import { fork } from 'node:child_process'
import { freemem } from 'node:os'
import type { RunResult } from '../../src/experiment/run-recorder.js'
import type { SwarmJob } from '../../src/sim/swarm-model/swarm-job.js'

const MiB = 1024 * 1024

/** A run's result with the peak resident memory of the process that ran it (nothing else ran in it). */
export type MeasuredRun = RunResult & { peakRssBytes?: number }

/** What a worker sends back. */
export interface WorkerReply {
  result: RunResult
  peakRssBytes: number
}

/** Node and the simulator's code, before a run allocates anything. */
const BASE_BYTES = 160 * MiB
/**
 * Each simulated agentd's board, per task of the project: 1024 agents and 500 tasks peaked at 2.0 GiB, 3.7 KiB a replica and task; 4 KiB
 * leaves headroom.
 */
const AGENCY_REPLICA_BYTES_PER_TASK = 4 * 1024
/** The baselines keep one shared board state; per agent and task they hold little. */
const BASELINE_BYTES_PER_AGENT_TASK = 64

/** The peak a job is expected to reach before any run of its kind was measured. */
export function modelledPeakBytes(job: SwarmJob): number {
  const tasks = job.workload.tasks ?? 2000
  const perAgent = job.strategy === 'agency' ? AGENCY_REPLICA_BYTES_PER_TASK * tasks : BASELINE_BYTES_PER_AGENT_TASK * tasks
  return BASE_BYTES + job.agents * perAgent
}

function kindOf(job: SwarmJob): string {
  return `${job.strategy}/${job.agents}/${job.workload.tasks ?? ''}/${job.workload.hazards === undefined ? 'h' : 'n'}`
}

export interface PoolOptions {
  /** at most this many jobs at once (cores) */
  maxJobs: number
  /** the script a worker runs (it handles one job sent over IPC and exits) */
  workerScript: string
  workerArgs: string[]
  /** free memory, bytes (tests and other machines may stand in) */
  freeBytes?: () => number
  log?: (line: string) => void
}

/**
 * Whether a job expected to peak at `needBytes` may start beside running jobs
 * expected to peak at `runningBytes`: fewer than maxJobs run, and free memory
 * less what the running ones were expected to take holds it. With nothing
 * running it always may (waiting could never free more).
 */
export function mayStart(needBytes: number, runningBytes: readonly number[], freeBytes: number, maxJobs: number): boolean {
  if (runningBytes.length === 0) return true
  if (runningBytes.length >= maxJobs) return false
  return needBytes <= freeBytes - runningBytes.reduce((a, b) => a + b, 0)
}

/**
 * Runs every job, calling `done` as each finishes. A job starts when fewer
 * than maxJobs run and its estimated peak fits in free memory less the
 * estimates of the running jobs; when nothing runs it starts whatever the
 * estimate (waiting could never free more), with a warning if it does not fit.
 */
export async function runPool(jobs: SwarmJob[], opts: PoolOptions, done: (r: MeasuredRun) => Promise<void>): Promise<void> {
  const free = opts.freeBytes ?? freemem
  const measured = new Map<string, number>()
  const estimate = (j: SwarmJob): number => {
    const seen = measured.get(kindOf(j))
    return seen === undefined ? modelledPeakBytes(j) : Math.ceil(seen * 1.1)
  }
  const queue = [...jobs]
  const running = new Map<Promise<void>, number>()
  let failure: Error | undefined
  while ((queue.length > 0 || running.size > 0) && failure === undefined) {
    const next = queue[0]
    const need = next === undefined ? 0 : estimate(next)
    if (next !== undefined && mayStart(need, [...running.values()], free(), opts.maxJobs)) {
      queue.shift()
      if (running.size === 0 && need > free())
        opts.log?.(`  (${next.strategy} × ${next.agents} may need ${Math.round(need / MiB)} MiB; ${Math.round(free() / MiB)} MiB free)`)
      const p: Promise<void> = runOne(next, need, opts)
        .then(async r => {
          measured.set(kindOf(next), Math.max(measured.get(kindOf(next)) ?? 0, r.peakRssBytes ?? 0))
          await done(r)
        })
        .catch((err: unknown) => {
          failure ??= err instanceof Error ? err : new Error(JSON.stringify(err))
        })
        .finally(() => {
          running.delete(p)
        })
      running.set(p, need)
      continue
    }
    // wait for a job to end, or for other processes to free memory
    const tick = new Promise<void>(resolve => {
      setTimeout(resolve, 1_000).unref()
    })
    await Promise.race([...running.keys(), tick])
  }
  await Promise.allSettled(running.keys())
  if (failure !== undefined) throw failure
}

async function runOne(job: SwarmJob, estimatedBytes: number, opts: PoolOptions): Promise<MeasuredRun> {
  // The heap may grow to twice the estimate before V8 gives up. A run's live
  // heap only grows (its boards), so old space grows by 10 % over what the
  // last full collection kept instead of V8's factor of up to 4, which let
  // the same 1024-agent run peak anywhere from 2.0 to 2.4 GiB; semi-spaces
  // of 16 MiB, V8's default.
  const heapMiB = Math.max(2048, Math.ceil((2 * estimatedBytes) / MiB))
  const child = fork(opts.workerScript, opts.workerArgs, {
    execArgv: [...process.execArgv, `--max-old-space-size=${heapMiB}`, '--heap-growing-percent=10', '--max-semi-space-size=16'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc']
  })
  return await new Promise<MeasuredRun>((resolve, reject) => {
    let reply: WorkerReply | undefined
    child.once('message', m => {
      reply = m as WorkerReply
    })
    child.once('error', reject)
    child.once('exit', code => {
      if (reply === undefined)
        reject(new Error(`worker for ${job.strategy} × ${job.agents} seed ${job.seed} exited with code ${code} before answering`))
      else resolve({ ...reply.result, peakRssBytes: reply.peakRssBytes })
    })
    child.send(job)
  })
}
