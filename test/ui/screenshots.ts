// Takes the dashboard screenshots in docs/ from a real run: `agency swarm up`
// with six scripted agents (--harness sim) building the calc example, the
// dashboard served by the first daemon, Debian's headless Chromium looking.
// Not a test; build first:
//
//   npm run build && npx tsx test/ui/screenshots.ts [--out docs] [-n 6]
import '../../src/polyfill.js'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import type { Page } from 'playwright-core'
import { swarmDown, swarmUp } from '../../src/swarm/swarm.js'
import { connectAgency } from '../../src/client/agency.js'
import type { AgencyClient } from '../../src/gen/agency/v1/api.js'
import { chromiumMissing, launchChromium } from './browser.js'

function arg(flag: string, fallback: string): string {
  const i = process.argv.indexOf(flag)
  return i >= 0 && process.argv[i + 1] != null ? process.argv[i + 1] : fallback
}

const out = resolve(arg('--out', 'docs'))
const agents = Number(arg('-n', '6'))

async function shot(page: Page, hash: string, file: string, ready: string): Promise<void> {
  await page.evaluate(h => {
    ;(globalThis as unknown as { location: { hash: string } }).location.hash = h
  }, hash)
  await page.waitForSelector(ready, { timeout: 30_000 })
  // Let the views fetch what the last notices named, and the plot draw.
  await page.waitForTimeout(1500)
  await page.screenshot({ path: join(out, file), fullPage: true })
  process.stdout.write(`wrote ${join(out, file)}\n`)
}

async function main(): Promise<void> {
  const missing = chromiumMissing()
  if (missing != null) throw new Error(`cannot take screenshots: ${missing}`)
  const dir = await mkdtemp(join(tmpdir(), 'agency-screens-'))
  const browser = await launchChromium({ width: 1280, height: 800 })
  let uiUrl: string | undefined
  let midRun: Promise<void> | undefined
  const watcher = await browser.context.newPage()
  const board = await browser.context.newPage()
  try {
    const run = swarmUp({
      n: agents,
      dir,
      example: 'calc',
      harness: 'sim',
      swarm: 'demo',
      downWhenDone: false,
      timeoutMs: 300_000,
      ui: '127.0.0.1:0',
      progress: line => {
        process.stdout.write(`${line}\n`)
        const m = /^dashboard (\S+)/.exec(line)
        if (m != null) {
          uiUrl = m[1]
          // Open from the start, so the live activity has the whole run.
          watcher.goto(uiUrl).catch(() => {})
          board.goto(`${uiUrl}#/board`).catch(() => {})
        }
        // The board while agents hold tasks.
        const pct = /\| tasks (\d+)\/(\d+) done/.exec(line)
        if (midRun == null && pct != null && Number(pct[1]) >= Math.ceil(Number(pct[2]) / 3)) {
          midRun = board.screenshot({ path: join(out, 'dashboard-board.png'), fullPage: true }).then(() => {
            process.stdout.write('wrote the board mid-run\n')
          })
        }
      }
    })
    const { finished, state } = await run
    if (!finished) throw new Error('the swarm did not finish the calc example')
    await midRun
    if (uiUrl == null) throw new Error('the first daemon printed no dashboard address')
    await shot(watcher, '#/', 'dashboard-overview.png', '.plot canvas')
    await shot(watcher, '#/tests', 'dashboard-tests.png', 'table.integrations')
    await shot(watcher, '#/findings', 'dashboard-findings.png', 'li.finding')
    await shot(watcher, '#/agents', 'dashboard-agents.png', 'table.agents')
    const second = await watcher.locator('table.agents tbody tr').nth(1).getAttribute('data-peer')
    await shot(watcher, `#/agent/${encodeURIComponent(second ?? '')}`, 'dashboard-agent.png', '.agent-page table.claims')
    // Overlaps are short-lived in the scripted run: three more tasks whose
    // scopes meet, claimed by three of the (now idle) daemons.
    const follow = [
      { id: 'ops-bigint', title: 'Big integers in the operators', scope: ['src/ops/**'] },
      { id: 'pow-fast', title: 'Faster power operator', scope: ['src/ops/pow.mjs'] },
      { id: 'eval-cache', title: 'Cache evaluated subtrees', scope: ['src/evaluate.mjs', 'src/ops/basic.mjs'] }
    ]
    const first = connectAgency(state.daemons[0].grpc)
    for (const t of follow)
      await first.call((c: AgencyClient) => c.addTask, { id: t.id, title: t.title, description: '', deps: [], scope: t.scope, priority: 0 })
    first.close()
    for (const [i, t] of follow.entries()) {
      const agency = connectAgency(state.daemons[i + 1].grpc)
      await agency.call((c: AgencyClient) => c.claim, { task: t.id, scope: t.scope, noWait: false }, 60_000)
      agency.close()
    }
    await watcher.evaluate(() => {
      ;(globalThis as unknown as { location: { hash: string } }).location.hash = '#/board'
    })
    await watcher.waitForSelector('svg.graph line', { timeout: 30_000 })
    await watcher.waitForTimeout(1500)
    await watcher.locator('section.panel', { hasText: 'Overlapping scopes' }).screenshot({ path: join(out, 'dashboard-overlaps.png') })
    process.stdout.write(`wrote ${join(out, 'dashboard-overlaps.png')}\n`)
  } finally {
    await browser.close()
    await swarmDown(dir).catch(() => {})
    await rm(dir, { recursive: true, force: true })
  }
}

main().then(
  () => {
    process.exit(0)
  },
  (err: Error) => {
    process.stderr.write(`screenshots: ${err.message}\n`)
    process.exit(1)
  }
)
