// The scripted agent of the real-process campaign: the loop of the fault
// simulator's agent (src/sim/faults/fault-agent.ts), through a daemon's gRPC
// API, every call and its answer recorded with the campaign's clock. It
// claims a ready task (now and then calling claim again while the first call
// waits, as a CLI or MCP client retries), works on a HELD task a while,
// commits to the task's branch in its workspace, integrates, marks it done
// and records a note; or releases it with notes. It stops working on a task
// its daemon says it lost, and sends direct messages. A call that ends in a
// refusal the daemon names completes as fail; one cut off (the daemon died,
// the deadline passed) as info: its outcome is unknown.
import { execFile } from 'node:child_process'
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { connectAgency, type Agency } from '../../src/client/agency.js'
import { AgencyError } from '../../src/core/errors.js'
import { ClaimOutcome, type AgencyClient } from '../../src/gen/agency/v1/api.js'
import type { History } from '../../src/sim/faults/history.js'

const run = promisify(execFile)
const sleep = async (ms: number): Promise<void> => {
  await new Promise(resolve => setTimeout(resolve, ms))
}

/** Refusals: the daemon answered, and nothing was done. */
const REFUSALS = new Set(['INVALID_ARGUMENT', 'FAILED_PRECONDITION', 'NOT_FOUND', 'ALREADY_EXISTS', 'PERMISSION_DENIED', 'OUT_OF_RANGE'])

export interface RealAgentInit {
  node: string
  /** the daemon's gRPC address (a unix socket) */
  grpc: string
  history: History
  now: () => number
  random: () => number
  /** every node's name, for messages */
  names: readonly string[]
  /** peer id -> node name */
  nameOf: (peer: string) => string
}

export class RealAgent {
  private api?: Agency
  private life = 0
  private frozen = false
  private holding: { task: string; epoch: number; until: number } | undefined
  /** the last integrate was refused by the remote's fence */
  private fencedAnswer: string | undefined
  private loopDone: Promise<void> = Promise.resolve()
  private watching?: { cancel: () => void }
  private readonly inFlight = new Set<Promise<unknown>>()
  /** why calls failed, by message: a summary for the report */
  readonly errors = new Map<string, number>()

  constructor(private readonly o: RealAgentInit) {}

  private get h(): History {
    return this.o.history
  }

  /** Starts (or, after a restart of its daemon, starts again) the loop and the notice stream. */
  start(): void {
    const life = ++this.life
    this.api = connectAgency(this.o.grpc)
    this.watch(life, this.api)
    this.loopDone = this.loop(life).catch(err => {
      this.count(`loop: ${(err as Error).message}`)
    })
  }

  /** Its daemon (and the agent with it) died: calls in flight end with an unknown outcome. */
  crash(): void {
    this.life++
    this.holding = undefined
    this.watching?.cancel()
    this.api?.close()
    this.api = undefined
    this.h.crashed(this.o.node, this.o.now())
  }

  /** No new calls; the answers of calls in flight are still recorded. */
  async freeze(): Promise<void> {
    this.frozen = true
    await this.loopDone
    await Promise.allSettled([...this.inFlight])
  }

  stop(): void {
    this.life++
    this.watching?.cancel()
    this.api?.close()
  }

  private alive(life: number): boolean {
    return life === this.life && !this.frozen
  }

  private count(why: string): void {
    const key = why.replace(/[0-9a-f]{12,}/g, '…').slice(0, 120)
    this.errors.set(key, (this.errors.get(key) ?? 0) + 1)
  }

  /** The daemon's notices that a claim is lost, as its agent hears them. */
  private watch(life: number, api: Agency): void {
    const stream = api.stream((c: AgencyClient, m) => c.watchEvents({}, m))
    this.watching = stream
    void (async () => {
      try {
        for await (const e of stream) {
          if (e.type !== 'claim_lost' && e.type !== 'claim_superseded') continue
          const d = JSON.parse(e.detailJson === '' ? '{}' : e.detailJson) as { epoch?: number; reason?: string; winner?: string | null }
          const epoch = Number(d.epoch ?? 0)
          const notice = { kind: 'notice' as const, time: this.o.now(), node: this.o.node, task: e.task, epoch, reason: d.reason ?? e.type }
          this.h.add(d.winner != null ? { ...notice, winner: this.o.nameOf(d.winner) } : notice)
          if (this.holding?.task === e.task && this.holding.epoch === epoch) this.holding = undefined
        }
      } catch {
        // the daemon went away: a restart opens a new stream
      }
      if (life === this.life && !this.frozen)
        setTimeout(() => {
          if (life === this.life && this.api != null) this.watch(life, this.api)
        }, 500)
    })()
  }

  private async loop(life: number): Promise<void> {
    const r = this.o.random
    // After a restart: ask again for what the daemon says this agent holds.
    await this.resume(life)
    while (this.alive(life)) {
      if (this.holding !== undefined) {
        if (this.o.now() >= this.holding.until) await this.finish(life)
        else await sleep(100 + r() * 200)
        continue
      }
      if (r() < 0.1) await this.send(life)
      const ready = await this.api!.call((c: AgencyClient) => c.ready, {}, 10_000).then(
        x => x.tasks,
        () => []
      )
      if (!this.alive(life)) break
      if (ready.length === 0) {
        await sleep(200 + r() * 300)
        continue
      }
      // Half the time the first ready task, as a herd reading the same board would: claims race.
      const pick = r() < 0.5 ? ready[0] : ready[Math.floor(r() * ready.length)]
      await this.claim(life, pick.id, r() < 0.15)
      await sleep(50 + r() * 200)
    }
  }

  private async resume(life: number): Promise<void> {
    const status = await this.api!.call((c: AgencyClient) => c.getStatus, {}, 10_000).catch(() => undefined)
    const held = status?.tasks.find(t => t.state === 'claimed' && t.holder === status.self?.peerId)
    if (held != null && this.alive(life)) await this.claim(life, held.id, false)
  }

  /** A recorded call: invoke, then ok with what `ok` makes of the reply, fail on a refusal, info otherwise. */
  private async call<T>(
    life: number,
    inv: Parameters<History['invoke']>[0],
    fn: (api: Agency) => Promise<T>,
    ok: (reply: T) => { outcome?: string; epoch?: number; winner?: string; id?: string; fail?: string }
  ): Promise<T | undefined> {
    const api = this.api
    if (api == null || life !== this.life) return undefined
    const op = this.h.invoke(inv)
    const p = fn(api)
    this.inFlight.add(p)
    try {
      const reply = await p
      const c = ok(reply)
      if (c.fail !== undefined) this.h.complete(op, this.o.now(), { type: 'fail', outcome: c.fail })
      else
        this.h.complete(op, this.o.now(), {
          type: 'ok',
          ...withoutUndefined({ outcome: c.outcome, epoch: c.epoch, winner: c.winner, id: c.id })
        })
      return reply
    } catch (err) {
      const code = err instanceof AgencyError ? err.code : ''
      this.count(`${inv.f}: ${code} ${(err as Error).message}`)
      const fenced = inv.f === 'merge' && / on the shared remote \(.*superseded/.test((err as Error).message)
      if (fenced) this.fencedAnswer = inv.task
      this.h.complete(op, this.o.now(), {
        type: REFUSALS.has(code) ? 'fail' : 'info',
        ...(fenced ? { outcome: 'fenced' } : {}),
        reason: `${code} ${(err as Error).message}`.slice(0, 200)
      })
      return undefined
    } finally {
      this.inFlight.delete(p)
    }
  }

  private async claim(life: number, task: string, retry: boolean): Promise<void> {
    const once = async (isRetry: boolean): Promise<void> => {
      const reply = await this.call(
        life,
        { time: this.o.now(), node: this.o.node, f: 'claim', task, retry: isRetry },
        async api => await api.call((c: AgencyClient) => c.claim, { task, scope: [], noWait: false }, 60_000),
        r => ({
          outcome: r.outcome === ClaimOutcome.CLAIM_HELD ? 'HELD' : r.outcome === ClaimOutcome.CLAIM_LOST ? 'LOST' : 'PENDING',
          epoch: Number(r.epoch),
          winner: r.winner !== '' ? this.o.nameOf(r.winner) : undefined
        })
      )
      if (reply?.outcome === ClaimOutcome.CLAIM_HELD && this.holding === undefined && life === this.life) {
        // Mostly a few seconds of work; now and then longer than a lease, so a holder cut off mid-work meets a takeover.
        const workMs = this.o.random() < 0.25 ? 6_000 + this.o.random() * 8_000 : 1_000 + this.o.random() * 5_000
        this.holding = { task, epoch: Number(reply.epoch), until: this.o.now() + workMs }
      }
    }
    const first = once(false)
    if (retry) {
      await sleep(100)
      await once(true)
    }
    await first
  }

  private async finish(life: number): Promise<void> {
    const { task, epoch } = this.holding!
    this.holding = undefined
    const node = this.o.node
    if (this.o.random() < 0.15) {
      await this.call(
        life,
        { time: this.o.now(), node, f: 'release', task, epoch },
        async api => await api.call((c: AgencyClient) => c.release, { task, note: `notes on ${task}`, branch: '' }),
        () => ({})
      )
      return
    }
    // The work: a file of this agent's on the task's branch in its workspace.
    try {
      const ws = await this.api!.call((c: AgencyClient) => c.getWorkspace, { task }, 60_000)
      const dir = join(ws.path, 'work', task)
      await mkdir(dir, { recursive: true })
      await writeFile(join(dir, `${node}-${epoch}.txt`), `${node}'s work on ${task}@${epoch}\n`)
      await run('git', ['add', '-A'], { cwd: ws.path })
      await run(
        'git',
        [
          '-c',
          `user.name=${node}`,
          '-c',
          'user.email=agent@example.invalid',
          'commit',
          '-q',
          '--allow-empty',
          '-m',
          `${task}: ${node}'s work at epoch ${epoch}`
        ],
        { cwd: ws.path }
      )
    } catch (err) {
      this.count(`work: ${(err as Error).message.split('\n')[0]}`)
      return
    }
    if (!this.alive(life)) return
    const merged = await this.call(
      life,
      { time: this.o.now(), node, f: 'merge', task, epoch },
      async api =>
        await api.call((c: AgencyClient) => c.integrate, { task, message: `${task}@${epoch} by ${node}`, background: false }, 120_000),
      r => (r.result === 'merged' ? { outcome: 'landed' } : { fail: r.result })
    )
    if (this.fencedAnswer !== undefined) {
      // The answer told the agent its claim is superseded (the daemon gave it back): a notice, as the checks read it.
      this.h.add({ kind: 'notice', time: this.o.now(), node, task, epoch, reason: 'fenced' })
      this.fencedAnswer = undefined
    }
    if (merged?.result !== 'merged' || !this.alive(life)) return
    const done = await this.call(
      life,
      { time: this.o.now(), node, f: 'done', task, epoch },
      async api => await api.call((c: AgencyClient) => c.done, { task, commit: merged.commit, paths: [], noChange: '' }),
      () => ({})
    )
    if (done === undefined) return
    await this.call(
      life,
      { time: this.o.now(), node, f: 'note', task, epoch },
      async api =>
        await api.call((c: AgencyClient) => c.recordFinding, {
          kind: 'discovery',
          text: `${task} done by ${node}`,
          paths: [],
          tags: [`task:${task}`],
          refs: [],
          supersedes: ''
        }),
      r => ({ id: r.entry?.id })
    )
  }

  private async send(life: number): Promise<void> {
    const others = this.o.names.filter(n => n !== this.o.node)
    const to = others[Math.floor(this.o.random() * others.length)]
    await this.call(
      life,
      { time: this.o.now(), node: this.o.node, f: 'send', to },
      async api =>
        await api.call((c: AgencyClient) => c.sendMessage, { to, text: `hello ${to} from ${this.o.node}`, thread: '', replyTo: '' }),
      r => ({ id: r.id })
    )
  }
}

function withoutUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>
}
