// Bounds on one test run: how many processes and how much memory it may use,
// as a control group of its own, so a fork bomb or a memory hog in a commit
// fails that run and leaves the daemon and its peers serving. Linux cgroup v1
// (pids, memory) or v2 (one unified group); where neither can be made, the
// run is not bounded and `available` says why.
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'

export interface RunLimits {
  /** processes (and threads) at once */
  pids: number
  memoryBytes: number
}

export const DEFAULT_RUN_LIMITS: RunLimits = { pids: 512, memoryBytes: 2 * 1024 ** 3 }

const ROOT = '/sys/fs/cgroup'

/** One run's control group: the shell prefix that moves the run into it, then why it failed, if it hit a bound. */
export interface RunGroup {
  /** `sh -c '<enter>; exec "$@"'`: the words to put before the command */
  prefix: string[]
  /** After the run: the bound it hit, in words, or undefined. */
  verdict: () => string | undefined
  remove: () => void
}

/** Creates a control group for one run, or returns the reason it cannot. */
export function runGroup(limits: RunLimits): RunGroup | { unavailable: string } {
  const id = `agency-run-${process.pid}-${randomBytes(4).toString('hex')}`
  try {
    if (existsSync(join(ROOT, 'cgroup.controllers'))) return v2Group(id, limits)
    return v1Group(id, limits)
  } catch (err) {
    return {
      unavailable: `cannot make a control group for the test run (${(err as Error).message}); it runs without process and memory bounds`
    }
  }
}

function ownPath(controller: string): string {
  for (const line of readFileSync('/proc/self/cgroup', 'utf8').split('\n')) {
    const [, names, path] = line.split(':')
    if (names?.split(',').includes(controller)) return path ?? '/'
  }
  throw new Error(`no ${controller} controller`)
}

function v1Group(id: string, limits: RunLimits): RunGroup {
  const pids = join(ROOT, 'pids', ownPath('pids'), id)
  const memory = join(ROOT, 'memory', ownPath('memory'), id)
  mkdirSync(pids)
  try {
    mkdirSync(memory)
    writeFileSync(join(pids, 'pids.max'), String(limits.pids))
    writeFileSync(join(memory, 'memory.limit_in_bytes'), String(limits.memoryBytes))
    // Swap would let a hog run on past the bound instead of being stopped by it.
    try {
      writeFileSync(join(memory, 'memory.memsw.limit_in_bytes'), String(limits.memoryBytes))
    } catch {
      /* no swap accounting */
    }
  } catch (err) {
    tryRmdir(pids)
    tryRmdir(memory)
    throw err
  }
  return {
    prefix: enter([join(pids, 'cgroup.procs'), join(memory, 'cgroup.procs')]),
    verdict: () => verdict(limits, counter(join(pids, 'pids.events'), 'max'), counter(join(memory, 'memory.oom_control'), 'oom_kill')),
    remove: () => {
      removeGroups([pids, memory])
    }
  }
}

function v2Group(id: string, limits: RunLimits): RunGroup {
  const dir = join(ROOT, ownPath(''), id)
  mkdirSync(dir)
  try {
    writeFileSync(join(dir, 'pids.max'), String(limits.pids))
    writeFileSync(join(dir, 'memory.max'), String(limits.memoryBytes))
    try {
      writeFileSync(join(dir, 'memory.swap.max'), '0')
    } catch {
      /* no swap control */
    }
  } catch (err) {
    tryRmdir(dir)
    throw err
  }
  return {
    prefix: enter([join(dir, 'cgroup.procs')]),
    verdict: () => verdict(limits, counter(join(dir, 'pids.events'), 'max'), counter(join(dir, 'memory.events'), 'oom_kill')),
    remove: () => {
      removeGroups([dir])
    }
  }
}

function enter(procsFiles: string[]): string[] {
  return ['/bin/sh', '-c', `${procsFiles.map(f => `echo $$ > '${f}'`).join(' && ')} && exec "$@"`, 'sh']
}

function verdict(limits: RunLimits, forkRefused: number, oomKills: number): string | undefined {
  if (oomKills > 0) return `the test run went over its memory bound (${Math.round(limits.memoryBytes / 1024 ** 2)} MiB) and was killed`
  if (forkRefused > 0) return `the test run hit its process bound (${limits.pids} processes at once): ${forkRefused} fork(s) refused`
  return undefined
}

/** The value of a `name value` line. */
function counter(file: string, name: string): number {
  try {
    const text = readFileSync(file, 'utf8')
    const m = new RegExp(`^${name} (\\d+)`, 'm').exec(text)
    return m != null ? Number(m[1]) : 0
  } catch {
    return 0
  }
}

function tryRmdir(dir: string): boolean {
  try {
    rmdirSync(dir)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT'
  }
}

// A group goes once its last process is gone: what the run left is killed,
// and the removal is tried again until the kernel has let them go.
function removeGroups(dirs: string[], tries = 100): void {
  const left = dirs.filter(d => !tryRmdir(d))
  if (left.length === 0 || tries === 0) return
  for (const d of left) {
    try {
      for (const pid of readFileSync(join(d, 'cgroup.procs'), 'utf8')
        .split('\n')
        .filter(p => p !== ''))
        process.kill(Number(pid), 'SIGKILL')
    } catch {
      /* gone meanwhile */
    }
  }
  setTimeout(() => {
    removeGroups(left, tries - 1)
  }, 100).unref()
}
