// The chaos loop of the chaos test: it SIGKILLs a random running daemon each
// time the swarm passes a progress milestone (so many tasks done), never more
// than `maxDown` at once so the swarm is never all gone, kills what that
// daemon's harness left running, and restarts the daemon a moment later on the
// same data dir with the same flags, bootstrapping from whichever daemons are
// up. Kills follow progress, not the clock: a fast machine that finishes the
// project sooner still meets every milestone before the last task is done.
import { setTimeout as sleep } from 'node:timers/promises'
import type { AgentdProcess } from '../helpers/agentd-process.js'
import { killWorkingUnder } from '../helpers/trust.js'

export interface ChaosOptions {
  daemons: AgentdProcess[]
  random: () => number
  /** how far the swarm is (tasks done); read every `pollMs` */
  progress: () => Promise<number>
  /** one kill as the progress reaches each of these, in order */
  milestones: number[]
  pollMs: number
  /** how long a killed daemon stays down, ms: [min, max) */
  downMs: [number, number]
  maxDown: number
  /** how many times a restart is tried when the daemon is merely slow to say ready */
  startAttempts: number
  onEvent?: (line: string) => void
}

export class ChaosLoop {
  readonly kills: string[] = []
  private running = false
  private loop?: Promise<void>
  private readonly restarts = new Set<Promise<void>>()
  private readonly down = new Set<AgentdProcess>()
  private failure?: Error
  private startedAt = Date.now()

  constructor(private readonly o: ChaosOptions) {}

  start(): void {
    this.startedAt = Date.now()
    this.running = true
    this.loop = this.run()
  }

  /** Stops killing, waits for every pending restart; throws if a restart failed. */
  async stop(): Promise<void> {
    this.running = false
    await this.loop
    await Promise.all([...this.restarts])
    if (this.failure != null) throw this.failure
  }

  private between([min, max]: [number, number]): number {
    return min + Math.floor(this.o.random() * (max - min))
  }

  private async run(): Promise<void> {
    const milestones = [...this.o.milestones].sort((a, b) => a - b)
    while (this.running && milestones.length > 0) {
      await sleep(this.o.pollMs)
      if (!this.running) break
      const up = this.o.daemons.filter(d => d.running && !this.down.has(d))
      if (this.down.size >= this.o.maxDown || up.length <= 1) continue
      const done = await this.o.progress().catch(() => -1)
      if (done < milestones[0]) continue
      milestones.shift()
      const victim = up[Math.floor(this.o.random() * up.length)]
      this.down.add(victim)
      await victim.kill('SIGKILL')
      const orphans = killWorkingUnder(victim.dataDir)
      const line = `${this.elapsed()}: ${done} done: killed ${victim.options.name ?? '?'} (and ${orphans} process(es) of its harness)`
      this.kills.push(line)
      this.o.onEvent?.(line)
      const restart = this.restartLater(victim).finally(() => {
        this.restarts.delete(restart)
      })
      this.restarts.add(restart)
    }
  }

  private async restartLater(d: AgentdProcess): Promise<void> {
    await sleep(this.between(this.o.downMs))
    try {
      for (let attempt = 1; ; attempt++) {
        // Bootstrap from whoever is up now: the addresses given at first start may be gone.
        d.options.peers = this.o.daemons
          .filter(x => x !== d && x.running && !this.down.has(x))
          .flatMap(x => {
            try {
              return [x.listenAddr]
            } catch {
              return []
            } // still starting: no address yet
          })
        try {
          await d.restart()
          break
        } catch (err) {
          // A machine too busy to start a daemon in time is not what this test is about; an exit is.
          if (!/not ready after/.test((err as Error).message) || attempt >= this.o.startAttempts) throw err
          const last = d.stderr.trim().split('\n').at(-1)?.slice(0, 300) ?? ''
          this.o.onEvent?.(
            `${this.elapsed()}: ${d.options.name ?? '?'} was not ready in time (its last log line: ${last}); starting it again`
          )
        }
      }
      this.o.onEvent?.(`${this.elapsed()}: restarted ${d.options.name ?? '?'}`)
    } catch (err) {
      this.failure ??= err as Error
    } finally {
      this.down.delete(d)
    }
  }

  private elapsed(): string {
    return `${((Date.now() - this.startedAt) / 1000).toFixed(1)}s`
  }
}
