// What an open dashboard costs its daemon: one agentd process (the one with
// --ui) in a swarm of N agents, the other N-1 daemons in this process over
// TCP on loopback, all of them busy (claims, releases, dones, findings,
// integrations, test runs, status lines). The daemon's CPU time (/proc) is
// measured over windows with no page open, with headless Chromium on the
// overview, with it on the board, and with no page again.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { Daemon } from '../../src/daemon/daemon.js'
import { startLocalDaemon, type LocalDaemon } from '../../src/swarm/local-daemon.js'
import { connectAgency } from '../../src/api/client.js'
import type { AgencyClient } from '../../src/gen/agency/v1/api.js'
import { launchChromium } from '../ui/browser.js'
import { childCpuSeconds } from './mesh-stats.js'
import { inProcessHeartbeatRate } from './mesh-agency.js'

export interface CostOptions {
  agents: number
  windowMs: number
  warmupMs: number
  /** swarm-wide actions per second */
  opsPerSecond: number
  log: (line: string) => void
}

export interface CostWindow { phase: string, cpuShare: number, entries: number }
export interface CostResult { agents: number, windows: CostWindow[], addedShare: number, livePeers: number }

export async function runCost (o: CostOptions): Promise<CostResult> {
  const dirs: string[] = []
  const peers: Daemon[] = []
  let target: LocalDaemon | undefined
  let browser: Awaited<ReturnType<typeof launchChromium>> | undefined
  let stop = false
  try {
    const dir = await mkdtemp(join(tmpdir(), 'agency-bench-uicost-'))
    dirs.push(dir)
    target = await startLocalDaemon({ name: 'watcher', dataDir: join(dir, 'watcher'), extraArgs: ['--ui', '127.0.0.1:0', '--swarm', 'bench'] })
    if (target.ui == null) throw new Error('the daemon printed no dashboard address')
    const ui = target.ui
    o.log(`  agentd ${target.peerId.slice(-8)} serves the dashboard at ${ui}`)
    const rate = inProcessHeartbeatRate(o.agents - 1, {})
    for (let b = 1; b < o.agents; b += 8) {
      await Promise.all(Array.from({ length: Math.min(8, o.agents - b) }, async (_, k) => {
        const dataDir = await mkdtemp(join(tmpdir(), 'agency-bench-uicost-peer-'))
        dirs.push(dataDir)
        const d = new Daemon({ dataDir, name: `agent-${b + k + 1}`, swarm: 'bench', listen: ['/ip4/127.0.0.1/tcp/0'], peers: target!.addrs, grpc: null, metrics: null, processMetrics: false, heartbeatMaxRate: rate })
        await d.start()
        peers.push(d)
      }))
    }
    const api = connectAgency(target.grpc)
    const live = async (): Promise<number> => (await api.call((c: AgencyClient) => c.getStatus, {}, 30_000)).peersLive
    const deadline = Date.now() + 300_000
    while (await live() < o.agents - 1 && Date.now() < deadline) await sleep(1000)
    const livePeers = await live()
    o.log(`  ${livePeers} of ${o.agents - 1} peers live at the watcher`)
    const tasks = Array.from({ length: 200 }, (_, i) => `task-${i}`)
    await api.call((c: AgencyClient) => c.setGoal, { text: 'bench the dashboard', files: [], testCommand: 'true' })
    for (const id of tasks) await api.call((c: AgencyClient) => c.addTask, { id, title: `Task ${id}`, description: '', deps: [], scope: [`src/${id}/**`], priority: 0 })

    // The swarm at work: each action by a random agent.
    let passed = 0
    const work = async (): Promise<void> => {
      while (!stop) {
        const d = peers[Math.floor(Math.random() * peers.length)]
        try {
          const held = d.boardService.held()
          const roll = Math.random()
          if (held.length === 0) {
            const open = d.boardService.board.ready(d.boardService.now())
            if (open.length > 0) await d.boardService.claim(open[Math.floor(Math.random() * open.length)].id, [], true)
            await d.setStatusLine(`claiming (${randomUUID().slice(0, 4)})`)
          } else if (roll < 0.4) {
            await d.logService.append('finding', { kind: Math.random() < 0.3 ? 'failure' : 'discovery', text: `approach ${randomUUID().slice(0, 8)} for ${held[0].task} fails on nested input`, paths: [`src/${held[0].task}/x.ts`], tags: [], refs: [], supersedes: '' })
          } else if (roll < 0.6) {
            await d.boardService.release(held[0].task, 'handing over', '')
          } else {
            const commit = randomUUID().replace(/-/g, '').padEnd(40, '0')
            await d.logService.append('integration', { task: held[0].task, epoch: held[0].epoch, commit, result: 'merged', paths: [], request: '' })
            passed = Math.min(200, passed + 1)
            await d.logService.append('test_run', { commit, branch: 'main', passed, failed: 200 - passed, total: 200, durationMs: 1000, summary: '' })
            await d.boardService.done(held[0].task, commit, [])
          }
        } catch { /* a lost race: the next action */ }
        await sleep(1000 / o.opsPerSecond)
      }
    }
    const working = work()
    await sleep(o.warmupMs)

    const windows: CostWindow[] = []
    const measure = async (phase: string): Promise<void> => {
      const c0 = await childCpuSeconds(target!.child.pid!)
      const e0 = (await api.call((c: AgencyClient) => c.logInfo, {}, 30_000)).entries
      const t0 = performance.now()
      await sleep(o.windowMs)
      const c1 = await childCpuSeconds(target!.child.pid!)
      const e1 = (await api.call((c: AgencyClient) => c.logInfo, {}, 30_000)).entries
      const w = { phase, cpuShare: (c1 - c0) / ((performance.now() - t0) / 1000), entries: e1 - e0 }
      windows.push(w)
      o.log(`  ${phase}: ${(w.cpuShare * 100).toFixed(1)} % of a core, ${w.entries} new entries`)
    }
    await measure('no page open')
    browser = await launchChromium()
    const page = await browser.context.newPage()
    await page.goto(ui)
    await page.waitForSelector('.cards', { timeout: 60_000 })
    await measure('overview open')
    await page.evaluate(() => { (globalThis as unknown as { location: { hash: string } }).location.hash = '#/board' })
    await page.waitForSelector('.columns', { timeout: 60_000 })
    await measure('board open')
    await browser.close()
    browser = undefined
    await sleep(2000)
    await measure('no page open again')
    stop = true
    await working
    api.close()
    const closed = windows.filter(w => w.phase.startsWith('no page'))
    const open = windows.filter(w => !w.phase.startsWith('no page'))
    const mean = (ws: CostWindow[]): number => ws.reduce((s, w) => s + w.cpuShare, 0) / ws.length
    return { agents: o.agents, windows, addedShare: mean(open) - mean(closed), livePeers }
  } finally {
    stop = true
    await browser?.close()
    await Promise.allSettled(peers.map(async d => { await d.stop() }))
    await target?.stop()
    await Promise.all(dirs.map(async d => { await rm(d, { recursive: true, force: true }) }))
  }
}
