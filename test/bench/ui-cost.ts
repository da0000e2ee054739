// What an open dashboard costs its daemon. One agentd process serves the
// dashboard (--ui) in a swarm of N agents. The other agents' traffic is what
// that daemon would receive from them: each of them has its own key and
// sends signed heartbeats at the interval an N-agent swarm has, and signed log
// entries of its work (claims, releases, findings, integrations, test runs),
// all over real gossip through one relay daemon in this process (N daemons
// in one process would starve this 2-core machine before the watcher felt
// anything). The watcher's CPU time (/proc) is measured over windows with no
// page open, with headless Chromium on the overview, on the board, and with
// no page again.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { Daemon } from '../../src/daemon/daemon.js'
import { startLocalDaemon, type LocalDaemon } from '../../src/swarm/local-daemon.js'
import { connectAgency } from '../../src/client/agency.js'
import type { AgencyClient } from '../../src/gen/agency/v1/api.js'
import { signPresence } from '../../src/core/presence/signed-messages.js'
import { heartbeatIntervalMs, heartbeatPolicy } from '../../src/core/presence/heartbeat-interval.js'
import { launchChromium } from '../ui/browser.js'
import { childCpuSeconds } from './mesh-stats.js'
import { scriptAgents, SwarmScript } from './ui-swarm-script.js'

export interface CostOptions {
  agents: number
  windowMs: number
  warmupMs: number
  /** swarm-wide actions per second */
  opsPerSecond: number
  log: (line: string) => void
}

export interface CostWindow {
  phase: string
  cpuShare: number
  entries: number
  heartbeats: number
}
export interface CostResult {
  agents: number
  windows: CostWindow[]
  addedShare: number
  livePeers: number
  heartbeatMs: number
}

export async function runCost(o: CostOptions): Promise<CostResult> {
  const dirs: string[] = []
  let target: LocalDaemon | undefined
  let relay: Daemon | undefined
  let browser: Awaited<ReturnType<typeof launchChromium>> | undefined
  let stop = false
  let heartbeats = 0
  try {
    const dir = await mkdtemp(join(tmpdir(), 'agency-bench-uicost-'))
    dirs.push(dir)
    target = await startLocalDaemon({
      name: 'agent-1',
      dataDir: join(dir, 'watcher'),
      extraArgs: ['--ui', '127.0.0.1:0', '--swarm', 'bench']
    })
    if (target.ui == null) throw new Error('the daemon printed no dashboard address')
    const ui = target.ui
    o.log(`  agentd ${target.peerId.slice(-8)} serves the dashboard at ${ui}`)
    relay = new Daemon({
      dataDir: join(dir, 'relay'),
      name: 'agent-2',
      swarm: 'bench',
      listen: ['/ip4/127.0.0.1/tcp/0'],
      peers: target.addrs,
      grpc: null,
      metrics: null,
      processMetrics: false
    })
    await relay.start()
    const r = relay
    while (r.gossip.subscribers() < 1) await sleep(250)
    const agents = await scriptAgents(o.agents - 2, 3)
    const script = new SwarmScript(agents, 200, 64)
    const api = connectAgency(target.grpc)
    const status = async (): Promise<{ live: number; entries: number }> => {
      const s = await api.call((c: AgencyClient) => c.getStatus, {}, 30_000)
      return { live: s.peersLive, entries: s.logEntries }
    }
    // What every agent of an N-agent swarm does: beat at the interval that swarm size gives.
    const intervalMs = heartbeatIntervalMs(o.agents - 1, heartbeatPolicy(2000, 10_000))
    const nextBeat = agents.map((_, i) => Date.now() + (intervalMs * i) / agents.length)
    const seq = agents.map(() => Date.now())
    const beating = (async () => {
      while (!stop) {
        const now = Date.now()
        for (const [i, a] of agents.entries()) {
          if (nextBeat[i] > now) continue
          nextBeat[i] = now + intervalMs * (0.9 + Math.random() * 0.1)
          const held = script.heldBy(a)
          const p = signPresence(a.signer, {
            name: a.name,
            status: held.length > 0 ? `working on ${held[0].task}` : 'looking for a task',
            claims: held,
            time: now,
            seq: ++seq[i],
            addrs: [],
            intervalMs,
            harness: 'running',
            sandbox: 'bwrap'
          })
          r.gossip.publishPresence(p).then(
            () => {
              heartbeats++
            },
            () => {}
          )
        }
        await sleep(100)
      }
    })()
    const deadline = Date.now() + 300_000
    while ((await status()).live < o.agents - 1 && Date.now() < deadline) await sleep(1000)
    const livePeers = (await status()).live
    o.log(`  ${livePeers} of ${o.agents - 1} peers live at the watcher (heartbeat every ${intervalMs} ms each)`)
    for (const step of script.setup())
      await r.gossip.publishEntry(r.logService.state.append(step.agent.signer, step.kind, step.body, Date.now()).bytes)

    // The agents at work.
    const working = (async () => {
      while (!stop) {
        for (const step of script.next()) {
          await r.gossip
            .publishEntry(r.logService.state.append(step.agent.signer, step.kind, step.body as never, Date.now()).bytes)
            .catch(() => {})
        }
        await sleep(1000 / o.opsPerSecond)
      }
    })()
    await sleep(o.warmupMs)

    const windows: CostWindow[] = []
    const measure = async (phase: string): Promise<void> => {
      const c0 = await childCpuSeconds(target!.child.pid!)
      const e0 = (await status()).entries
      const h0 = heartbeats
      const t0 = performance.now()
      await sleep(o.windowMs)
      const c1 = await childCpuSeconds(target!.child.pid!)
      const seconds = (performance.now() - t0) / 1000
      const w = { phase, cpuShare: (c1 - c0) / seconds, entries: (await status()).entries - e0, heartbeats: heartbeats - h0 }
      windows.push(w)
      o.log(`  ${phase}: ${(w.cpuShare * 100).toFixed(1)} % of a core; ${w.entries} new entries, ${w.heartbeats} heartbeats sent`)
    }
    await measure('no page open')
    browser = await launchChromium()
    const page = await browser.context.newPage()
    await page.goto(ui)
    await page.waitForSelector('.cards', { timeout: 60_000 })
    await measure('overview open')
    await page.evaluate(() => {
      ;(globalThis as unknown as { location: { hash: string } }).location.hash = '#/board'
    })
    await page.waitForSelector('.columns', { timeout: 60_000 })
    await measure('board open')
    await browser.close()
    browser = undefined
    await sleep(2000)
    await measure('no page open again')
    stop = true
    await Promise.all([working, beating])
    api.close()
    const closed = windows.filter(w => w.phase.startsWith('no page'))
    const open = windows.filter(w => !w.phase.startsWith('no page'))
    const mean = (ws: CostWindow[]): number => ws.reduce((s, w) => s + w.cpuShare, 0) / ws.length
    return { agents: o.agents, windows, addedShare: mean(open) - mean(closed), livePeers, heartbeatMs: intervalMs }
  } finally {
    stop = true
    await browser?.close()
    await relay?.stop().catch(() => {})
    await target?.stop()
    await Promise.all(
      dirs.map(async d => {
        await rm(d, { recursive: true, force: true })
      })
    )
  }
}
