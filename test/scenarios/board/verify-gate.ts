// A gate the swarm's verify command waits on, so a test decides when a
// verify may finish: what lands, lands after the answers the test checks.
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Daemon } from '../../../src/daemon/daemon.js'

export class VerifyGate {
  private constructor(private readonly dir: string) {}

  static async make(): Promise<VerifyGate> {
    return new VerifyGate(await mkdtemp(join(tmpdir(), 'agency-gate-')))
  }

  /** the file whose presence opens the gate */
  get path(): string {
    return join(this.dir, 'open')
  }

  /** A verify command that waits for the gate, then runs `then`. */
  command(then = 'true'): string {
    return `while [ ! -e '${this.path}' ]; do sleep 0.05; done; ${then}`
  }

  async open(): Promise<void> {
    await writeFile(this.path, '')
  }
  async close(): Promise<void> {
    await rm(this.path, { force: true })
  }
  /**
   * A gated swarm's teardown, in the order it needs: the gate opened, so no
   * verify is left waiting; the background work of `daemons` finished; the
   * swarm stopped (`cleanup`); the gate removed.
   */
  async teardown(daemons: Array<Daemon | undefined>, cleanup: () => Promise<void>): Promise<void> {
    await this.open().catch(() => {})
    for (const d of daemons) await d?.repo().backgroundSettled()
    await cleanup()
    await this.remove()
  }

  /** Opens the gate for good (no verify is left waiting) and removes its directory. */
  async remove(): Promise<void> {
    await this.open().catch(() => {})
    await rm(this.dir, { recursive: true, force: true })
  }
}
