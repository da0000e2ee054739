// The operator's dashboard in a real browser (Debian's headless Chromium) on
// two agentd processes with an operator key. bo runs an ACP agent with
// --acp-permissions ...,ask; the agent process is the fake ACP agent of the
// ACP session tests (test/harness/acp/fake-acp-agent.mjs), standing in for
// an agent CLI: its first turn asks to write outside the workspace. The
// request shows on ada's dashboard; the operator signs in there with the key
// file and approves it, and the same turn goes on. Then the page pauses,
// resumes and broadcasts; a POST without the session, or from another
// Origin, is refused.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Page } from 'playwright-core'
import {
  PROCESS_TEST_TIMEOUT_MS,
  ProcessCluster,
  agencyJson,
  runAgency,
  unusedPort,
  type AgentdProcess
} from '../helpers/agentd-process.js'
import { waitFor } from '../helpers/wait-for.js'
import { chromiumMissing, launchChromium, type Browser } from './browser.js'
import { makeOperatorKey } from '../helpers/operator-key.js'

const missing = chromiumMissing()
if (missing != null) process.stderr.write(`operator browser test skipped: ${missing}\n`)

const SEEN_MS = 60_000
const FAKE_AGENT = fileURLToPath(new URL('../harness/acp/fake-acp-agent.mjs', import.meta.url))
const MARKUP = '<img src=x onerror="window.__injected = 1">'

describe.skipIf(missing != null)("the operator's dashboard in headless Chromium", { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  const cluster = new ProcessCluster()
  let ada: AgentdProcess
  let bo: AgentdProcess
  let browser: Browser
  let page: Page
  let url: string
  let keyFile: string
  let opKey: string
  const problems: string[] = []
  const harnessLog = async (): Promise<string> => await readFile(join(bo.dataDir, 'harness.log'), 'utf8').catch(() => '')

  beforeAll(async () => {
    const dir = await cluster.tempDir('agency-operator-ui-')
    ;({ keyFile, opKey } = await makeOperatorKey(dir))
    const port = await unusedPort()
    url = `http://127.0.0.1:${port}/`
    ada = await cluster.start({ name: 'ada', extraArgs: ['--operator', opKey, '--ui', `127.0.0.1:${port}`] })
    bo = await cluster.start({
      name: 'bo',
      peers: [ada.listenAddr],
      extraArgs: [
        '--operator',
        opKey,
        '--harness',
        `acp:"${process.execPath} ${FAKE_AGENT} ok"`,
        '--acp-permissions',
        'workspace,agency,shell,ask'
      ]
    })
    await waitFor(async () => (await ada.peers()).some(p => p.peerId === bo.peerId && p.live), {
      timeoutMs: SEEN_MS,
      what: 'ada to see bo live'
    })
    browser = await launchChromium()
    page = await browser.context.newPage()
    page.on('pageerror', err => {
      problems.push(`page error: ${err.message}`)
    })
    page.on('console', msg => {
      if (msg.type() === 'error' && !/status of 40[39]/.test(msg.text())) problems.push(`console error: ${msg.text()}`)
    })
    await page.goto(`${url}#/operator`)
  }, PROCESS_TEST_TIMEOUT_MS)

  afterAll(async () => {
    await browser?.close()
    await cluster.cleanup()
  })

  it("shows the agent's request on another daemon, and the operator's approval in the browser lets the same turn go on", async () => {
    const pending = await waitFor(
      async () => (await agencyJson(ada.grpcAddr, ['approvals'])).find((a: { state: string }) => a.state === 'pending'),
      { timeoutMs: SEEN_MS, what: "the request in ada's agency approvals" }
    )
    expect(pending).toMatchObject({ agent: bo.peerId, title: 'edit /outside/x.txt', grant: 'anywhere' })
    expect(await harnessLog()).toContain('permission asked of the operator: edit /outside/x.txt')
    // not signed in: the request is shown, nothing can be done
    await page.locator(`li[data-approval="${pending.id as string}"]`).waitFor({ timeout: SEEN_MS })
    expect(await page.locator('button[name="approve"]').count()).toBe(0)
    await page.setInputFiles('input[name="operator-key"]', keyFile)
    await page.getByText('Signed in as operator').waitFor({ timeout: SEEN_MS })
    await page.locator(`li[data-approval="${pending.id as string}"] button[name="approve"]`).click()
    await waitFor(async () => (await harnessLog()).includes('permission allowed: edit /outside/x.txt (approved by the operator)'), {
      timeoutMs: SEEN_MS,
      what: 'the turn to go on with the approval'
    })
    expect((await agencyJson(bo.grpcAddr, ['approvals', '--all'])).find((a: { id: string }) => a.id === pending.id)).toMatchObject({
      state: 'approved',
      answeredBy: opKey
    })
  })

  it('pauses, resumes and broadcasts from the page, with peer text shown as text', async () => {
    await page.fill('form[name="pause"] input[name="reason"]', 'reviewing the plan')
    await page.click('form[name="pause"] button[type="submit"]')
    await waitFor(async () => (await agencyJson(bo.grpcAddr, ['status'])).paused === true, { timeoutMs: SEEN_MS, what: 'bo paused' })
    await page.locator('#pause-state', { hasText: 'Paused: reviewing the plan' }).waitFor({ timeout: SEEN_MS })
    await page.click('button[name="resume"]')
    await waitFor(async () => (await agencyJson(bo.grpcAddr, ['status'])).paused === false, { timeoutMs: SEEN_MS, what: 'bo resumed' })
    await page.fill('form[name="broadcast"] input[name="text"]', `tests first ${MARKUP}`)
    await page.click('form[name="broadcast"] button[type="submit"]')
    await waitFor(async () => (await bo.inbox()).some(m => m.kind === 'operator' && m.text === `tests first ${MARKUP}`), {
      timeoutMs: SEEN_MS,
      what: "the broadcast in bo's inbox"
    })
    await page.locator('table.audit td', { hasText: 'tests first' }).first().waitFor({ timeout: SEEN_MS })
    expect(await page.locator('main img').count()).toBe(0)
    expect(await page.evaluate(() => (globalThis as { __injected?: number }).__injected)).toBeUndefined()
  })

  it("refuses a POST without the operator's session, from another Origin, or without the CSRF token, changing nothing", async () => {
    const action = { action: 'AA==', sig: 'AA==' }
    const post = async (headers: Record<string, string>): Promise<number> =>
      (
        await fetch(new URL('api/operator/action', url), {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...headers },
          body: JSON.stringify(action)
        })
      ).status
    expect(await post({ origin: url.replace(/\/$/, '') })).toBe(403) // no session
    const cookies = await browser.context.cookies(url)
    const cookie = cookies.map(c => `${c.name}=${c.value}`).join('; ')
    expect(cookie).toContain('agency_operator=')
    expect(await post({ origin: 'http://evil.example', cookie })).toBe(403)
    expect(await post({ origin: url.replace(/\/$/, ''), cookie })).toBe(403) // no CSRF token
    expect((await fetch(new URL('api/summary', url), { method: 'POST' })).status).toBe(405)
    expect((await agencyJson(ada.grpcAddr, ['status'])).paused).toBe(false)
    const unknown = await runAgency(['approve', 'no-such-request', '--operator-key', keyFile, '--addr', ada.grpcAddr])
    expect(unknown.stderr).toMatch(/no approval request "no-such-request"/)
  })

  it('loaded with no script error', () => {
    expect(problems).toEqual([])
  })
})
