// The dashboard in a real browser (Debian's headless Chromium) on a live
// swarm of three agentd processes: the page lists the agents, shows a claim
// made on another daemon, finds a finding, opens an agent's page, and shows
// a peer's markup as text, never running it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { PROCESS_TEST_TIMEOUT_MS, ProcessCluster, unusedPort, type AgentdProcess } from '../helpers/agentd-process.js'
import { waitFor } from '../helpers/wait-for.js'
import { chromiumMissing, launchChromium, type Browser } from './browser.js'

const missing = chromiumMissing()
if (missing != null) process.stderr.write(`dashboard browser test skipped: ${missing}\n`)

/** Generous: two busy cores, three daemons and a browser. */
const SEEN_MS = 60_000
const MARKUP = '<script>window.__injected = 1</script><img src=x onerror="window.__injected = 2">'

describe.skipIf(missing != null)(
  'the dashboard in headless Chromium on a live 3-daemon swarm',
  { timeout: PROCESS_TEST_TIMEOUT_MS },
  () => {
    const cluster = new ProcessCluster()
    let ada: AgentdProcess
    let bo: AgentdProcess
    let cy: AgentdProcess
    let browser: Browser
    let page: Page
    let url: string
    const problems: string[] = []

    beforeAll(async () => {
      const port = await unusedPort()
      url = `http://127.0.0.1:${port}/`
      ada = await cluster.start({ name: 'ada', extraArgs: ['--ui', `127.0.0.1:${port}`] })
      bo = await cluster.start({ name: 'bo', peers: [ada.listenAddr] })
      // A peer's name is peer-written text too.
      cy = await cluster.start({ name: '<b>cy</b>', peers: [ada.listenAddr] })
      await waitFor(async () => (await ada.peers()).filter(p => p.live).length === 2, {
        timeoutMs: SEEN_MS,
        what: 'ada to see bo and cy live'
      })
      browser = await launchChromium()
      page = await browser.context.newPage()
      page.on('pageerror', err => {
        problems.push(`page error: ${err.message}`)
      })
      page.on('console', msg => {
        if (msg.type() === 'error') problems.push(`console error: ${msg.text()}`)
      })
      page.on('dialog', d => {
        problems.push(`dialog: ${d.message()}`)
        d.dismiss().catch(() => {})
      })
      await page.goto(url)
    }, PROCESS_TEST_TIMEOUT_MS)

    afterAll(async () => {
      await browser?.close()
      await cluster.cleanup()
    })

    it('lists the three agents, live, with the one with markup in its name shown as text', async () => {
      await page.click('nav.tabs a[href="#/agents"]')
      const rows = page.locator('table.agents tbody tr')
      await waitFor(async () => (await rows.count()) === 3 && (await page.locator('table.agents .dot.on').count()) === 3, {
        timeoutMs: SEEN_MS,
        what: 'three live agents on the page'
      })
      const cyRow = page.locator(`tr[data-peer="${cy.peerId}"]`)
      expect(await cyRow.locator('a.agent').textContent()).toBe('<b>cy</b>')
      expect(await cyRow.locator('b').count()).toBe(0)
      expect(await page.textContent('#connection')).toBe('live')
    })

    it('shows a claim made on another daemon without a reload', async () => {
      await page.click('nav.tabs a[href="#/board"]')
      await bo.agency('goal', 'set', 'build calc', '--test', 'node run-tests.mjs')
      await bo.agency('task', 'add', 'parser', 'Parser', '--scope', 'src/parser/**')
      // The daemon first (the mesh's part), then the page (the dashboard's).
      await waitFor(async () => (await ada.status()).tasks.some(t => t.id === 'parser'), { timeoutMs: SEEN_MS, what: 'the task at ada' })
      await page.waitForSelector('.column.open [data-task="parser"]', { timeout: SEEN_MS })
      const claim = await cy.agency<{ outcome: string }>('claim', 'parser')
      expect(claim.outcome).toMatch(/HELD/)
      await waitFor(async () => (await ada.status()).tasks.some(t => t.id === 'parser' && t.holder === cy.peerId), {
        timeoutMs: SEEN_MS,
        what: 'cy holding the task at ada'
      })
      const card = page.locator('.column.claimed [data-task="parser"]')
      await card.waitFor({ timeout: SEEN_MS })
      expect(await card.locator('.holder a.agent').textContent()).toBe('<b>cy</b>')
      expect(await card.locator('.epoch').textContent()).toBe('@1')
    })

    it('searches the findings and shows injected markup as text, never running it', async () => {
      await bo.agency('note', '--kind', 'failure', '--path', 'src/parser.mjs', `a regex parser breaks on nested parentheses ${MARKUP}`)
      await bo.agency('note', '--kind', 'discovery', 'the lexer must keep whitespace tokens')
      await page.click('nav.tabs a[href="#/findings"]')
      await page.fill('input[name="finding-q"]', 'parentheses')
      const hit = page.locator('li.finding.failure')
      await waitFor(async () => (await page.locator('li.finding').count()) === 1 && (await hit.count()) === 1, {
        timeoutMs: SEEN_MS,
        what: 'one hit for "parentheses"'
      })
      const text = await hit.locator('p.text').textContent()
      expect(text).toContain(MARKUP)
      expect(await page.locator('main script, main img').count()).toBe(0)
      expect(await page.evaluate(() => (globalThis as { __injected?: number }).__injected)).toBeUndefined()
      await page.fill('input[name="finding-q"]', '')
      await waitFor(async () => (await page.locator('li.finding').count()) === 2, { timeoutMs: SEEN_MS, what: 'both findings listed' })
      // Failures first.
      expect(await page.locator('li.finding').first().getAttribute('class')).toContain('failure')
    })

    it("shows an announcement's text as text", async () => {
      await cy.agency('announce', `hello from cy ${MARKUP}`)
      await page.click('nav.tabs a[href="#/messages"]')
      const item = page.locator('ul.announcements li', { hasText: 'hello from cy' })
      await item.waitFor({ timeout: SEEN_MS })
      expect(await item.locator('p.text').textContent()).toBe(`hello from cy ${MARKUP}`)
      expect(await page.evaluate(() => (globalThis as { __injected?: number }).__injected)).toBeUndefined()
    })

    it("opens an agent's page with its claims and findings", async () => {
      await page.click('nav.tabs a[href="#/agents"]')
      await page.click(`tr[data-peer="${bo.peerId}"] a.agent`)
      await page.waitForSelector(`.agent-page[data-peer="${bo.peerId}"]`, { timeout: SEEN_MS })
      expect(page.url()).toContain(`#/agent/${bo.peerId}`)
      expect(await page.textContent('.agent-name')).toBe('bo')
      await waitFor(async () => (await page.locator('.agent-page li.finding').count()) === 2, {
        timeoutMs: SEEN_MS,
        what: "bo's two findings on its page"
      })
      await page.goto(`${url}#/agent/${encodeURIComponent(cy.peerId)}`)
      const claims = page.locator('.agent-page table.claims tbody tr', { hasText: 'parser' })
      await claims.first().waitFor({ timeout: SEEN_MS })
      expect(await claims.first().textContent()).toContain('holds')
    })

    it('loaded with no script error and no blocked resource', () => {
      expect(problems).toEqual([])
    })
  }
)
