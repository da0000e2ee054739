// The dashboard at scale: one daemon whose data dir holds 100,000 signed
// entries from 1024 authors (tasks, claims, releases, dones, integrations,
// test runs, findings), restored at start like any daemon's, and heartbeats
// from all 1024 agents fed through its presence (signed, verified, as gossip
// hands them over). Measured: each endpoint's time and size, and in headless
// Chromium how long each view takes to show and the longest time the page's
// main thread was blocked (a frozen page is a long task).
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomUUID } from 'node:crypto'
import { LogState } from '../../src/core/log/log-state.js'
import { openStore } from '../../src/store/index.js'
import { Daemon } from '../../src/daemon/daemon.js'
import { signPresence } from '../../src/core/presence/signed-messages.js'
import { startUiServer } from '../../src/ui/ui-server.js'
import { launchChromium } from '../ui/browser.js'
import { percentile } from './mesh-stats.js'
import { scriptAgents, SwarmScript, type ScriptAgent } from './ui-swarm-script.js'

export interface ScaleOptions {
  agents: number
  entries: number
  log: (line: string) => void
}

export interface EndpointTiming {
  path: string
  p50Ms: number
  maxMs: number
  bytes: number
}
export interface ViewTiming {
  view: string
  shownMs: number
  longestTaskMs: number
  rows: number
}
export interface ScaleResult {
  agents: number
  entries: number
  findings: number
  tasks: number
  generateSeconds: number
  restoreSeconds: number
  endpoints: EndpointTiming[]
  views: ViewTiming[]
}

/** The swarm's history: the goal and tasks first, then the agents' work, two hours of it. */
function history(agents: ScriptAgent[], total: number): LogState {
  const log = new LogState()
  const script = new SwarmScript(agents, Math.max(20, Math.round(total / 50)), 1024)
  let clock = Date.now() - 2 * 3600_000
  const tick = (): number => {
    clock += (2 * 3600_000) / total
    return Math.round(clock)
  }
  for (const step of script.setup()) log.append(step.agent.signer, step.kind, step.body, tick())
  while (log.size < total) {
    for (const step of script.next()) log.append(step.agent.signer, step.kind, step.body, tick())
  }
  return log
}

async function timed<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const t0 = performance.now()
  const v = await fn()
  return [v, performance.now() - t0]
}

export async function runScale(o: ScaleOptions): Promise<ScaleResult> {
  const dataDir = await mkdtemp(join(tmpdir(), 'agency-bench-ui-'))
  let daemon: Daemon | undefined
  let ui: Awaited<ReturnType<typeof startUiServer>> | undefined
  let beats: NodeJS.Timeout | undefined
  let browser: Awaited<ReturnType<typeof launchChromium>> | undefined
  try {
    const t0 = performance.now()
    const agents = await scriptAgents(o.agents)
    const log = history(agents, o.entries)
    const store = await openStore(dataDir)
    const all = log.afterCursor(0)
    for (let i = 0; i < all.length; i += 5000) await store.log.putAccepted(all.slice(i, i + 5000), { sync: false })
    await store.close()
    const generateSeconds = (performance.now() - t0) / 1000
    o.log(`  ${all.length} entries from ${o.agents} authors written in ${generateSeconds.toFixed(1)} s`)

    const t1 = performance.now()
    daemon = new Daemon({
      dataDir,
      name: 'watcher',
      listen: [`/memory/agency-bench-ui-${randomUUID()}`],
      grpc: null,
      metrics: null,
      processMetrics: false,
      liveTimeoutMs: 60_000
    })
    await daemon.start()
    const restoreSeconds = (performance.now() - t1) / 1000
    o.log(
      `  daemon restored ${daemon.logService.state.size} entries (${daemon.logService.findings.size} findings) in ${restoreSeconds.toFixed(1)} s`
    )

    // Every agent's heartbeat, signed by it, through the daemon's presence, again and again.
    const d = daemon
    const held = new Map<string, Array<{ task: string; epoch: number }>>()
    for (const h of d.boardService.board.holders().values())
      held.set(h.holder, [...(held.get(h.holder) ?? []), { task: h.task, epoch: h.epoch }])
    let seq = 1
    const beat = (): void => {
      seq++
      for (const [i, a] of agents.entries()) {
        d.presence.receive(
          signPresence(a.signer, {
            name: a.name,
            status: `working on ${held.get(a.id)?.[0]?.task ?? 'nothing'}`,
            claims: held.get(a.id) ?? [],
            time: Date.now(),
            seq,
            addrs: [],
            intervalMs: 64_000,
            harness: i % 17 === 0 ? 'backing_off' : 'running',
            sandbox: 'bwrap'
          }),
          a.id
        )
      }
    }
    beat()
    beats = setInterval(beat, 20_000)
    o.log(`  ${d.presence.livePeers().length} agents live at the daemon`)

    ui = await startUiServer({ listen: '127.0.0.1:0', daemon: d })
    const somebody = agents[5].id
    const paths = [
      'api/summary',
      'api/agents?limit=100',
      'api/agents?limit=100&offset=900',
      'api/agents?q=agent-10',
      'api/board?limit=50',
      'api/tasks?state=open&offset=500&limit=50',
      'api/overlaps',
      'api/findings?limit=50',
      'api/findings?limit=50&offset=20000',
      'api/findings?q=parser%20nested&limit=50',
      'api/findings?kind=failure&path=src/parser&limit=50',
      `api/findings?author=${somebody}&limit=50`,
      'api/runs?points=2000',
      'api/integrations?limit=50',
      `api/agent?id=${somebody}`
    ]
    const endpoints: EndpointTiming[] = []
    for (const path of paths) {
      const times: number[] = []
      let bytes = 0
      for (let k = 0; k < 5; k++) {
        const [body, ms] = await timed(async () => {
          const res = await fetch(new URL(path, ui!.url))
          if (!res.ok) throw new Error(`GET ${path}: ${res.status} ${await res.text()}`)
          return await res.arrayBuffer()
        })
        bytes = body.byteLength
        times.push(ms)
      }
      endpoints.push({ path: path.replace(somebody, '<agent>'), p50Ms: percentile(times, 0.5), maxMs: Math.max(...times), bytes })
    }

    browser = await launchChromium()
    const page = await browser.context.newPage()
    await page.addInitScript(() => {
      const g = globalThis as unknown as { __longest: number; PerformanceObserver: typeof PerformanceObserver }
      g.__longest = 0
      new g.PerformanceObserver(list => {
        for (const e of list.getEntries()) g.__longest = Math.max(g.__longest, e.duration)
      }).observe({ type: 'longtask' as 'mark', buffered: true })
    })
    const views: Array<{ view: string; hash: string; ready: string; rows: string }> = [
      { view: 'overview', hash: '#/', ready: '.plot canvas', rows: 'table.agents tbody tr' },
      { view: `agents (${o.agents})`, hash: '#/agents', ready: 'table.agents tbody tr', rows: 'table.agents tbody tr' },
      { view: 'board', hash: '#/board', ready: '.column.open li.task', rows: 'li.task' },
      { view: 'findings', hash: '#/findings', ready: 'li.finding', rows: 'li.finding' },
      { view: 'tests', hash: '#/tests', ready: 'table.integrations tbody tr', rows: 'table.integrations tbody tr' },
      { view: 'agent page', hash: `#/agent/${encodeURIComponent(somebody)}`, ready: '.agent-page', rows: '.agent-page tr' }
    ]
    await page.goto(`${ui.url}#/`)
    const out: ViewTiming[] = []
    for (const v of views) {
      await page.evaluate(() => {
        ;(globalThis as unknown as { __longest: number }).__longest = 0
      })
      const t = performance.now()
      await page.evaluate(h => {
        ;(globalThis as unknown as { location: { hash: string } }).location.hash = h
      }, v.hash)
      await page.waitForSelector(v.ready, { timeout: 120_000 })
      const shownMs = performance.now() - t
      // Let the page settle (refetches on notices, the once-a-second clock) before reading the longest block.
      await page.waitForTimeout(3000)
      const longestTaskMs = await page.evaluate(() => (globalThis as unknown as { __longest: number }).__longest)
      out.push({ view: v.view, shownMs, longestTaskMs, rows: await page.locator(v.rows).count() })
    }
    // A search typed into the findings view.
    await page.evaluate(() => {
      ;(globalThis as unknown as { location: { hash: string } }).location.hash = '#/findings'
    })
    await page.waitForSelector('li.finding')
    await page.evaluate(() => {
      ;(globalThis as unknown as { __longest: number }).__longest = 0
    })
    const ts = performance.now()
    const answered = page.waitForResponse(res => res.url().includes('api/findings?q=parentheses'), { timeout: 120_000 })
    await page.fill('input[name="finding-q"]', 'parentheses overflow')
    await answered
    await page.waitForSelector('li.finding')
    const searchMs = performance.now() - ts
    await page.waitForTimeout(3000)
    out.push({
      view: 'findings search',
      shownMs: searchMs,
      longestTaskMs: await page.evaluate(() => (globalThis as unknown as { __longest: number }).__longest),
      rows: await page.locator('li.finding').count()
    })
    return {
      agents: o.agents,
      entries: d.logService.state.size,
      findings: d.logService.findings.size,
      tasks: d.boardService.board.tasks(performance.now()).length,
      generateSeconds,
      restoreSeconds,
      endpoints,
      views: out
    }
  } finally {
    clearInterval(beats)
    await browser?.close()
    await ui?.close()
    await daemon?.stop()
    await rm(dataDir, { recursive: true, force: true })
  }
}
