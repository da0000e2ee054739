// The dashboard's server over real in-process daemons: what it serves, who it
// answers, how it pages, what its event stream says, and that a peer's
// markup reaches the page only as data.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { peerInfo } from '../../src/api/mesh-handlers.js'
import { digestLines, statusDigest } from '../../src/api/status-digest.js'
import { StatusReply } from '../../src/gen/agency/v1/api.js'
import { request } from 'node:http'
import { InProcessDaemons } from '../helpers/in-process-daemons.js'
import { waitFor } from '../helpers/wait-for.js'
import { startUiServer, type UiServer } from '../../src/ui/ui-server.js'
import { sessionValue } from '../../src/ui/ui-access.js'
import type { Daemon } from '../../src/daemon/daemon.js'

const nodes = new InProcessDaemons()
let a: Daemon
let b: Daemon
let ui: UiServer
const TOKEN = 'a-token-of-at-least-sixteen-chars'

beforeAll(async () => {
  a = await nodes.start({ name: 'ada' })
  b = await nodes.start({ name: 'bo', peers: a.listenAddrs() })
  ui = await startUiServer({ listen: '127.0.0.1:0', daemon: a, noticeIntervalMs: 100 })
  await waitFor(() => a.peers(false).some(p => p.peerId === b.peerId), { timeoutMs: 60_000, what: 'ada to see bo live' })
})

afterAll(async () => {
  await ui?.close()
  await nodes.stopAll()
})

async function getJson(path: string, init: RequestInit = {}): Promise<{ status: number; body: any; text: string }> {
  const res = await fetch(new URL(path, ui.url), init)
  const text = await res.text()
  let body: any
  try {
    body = JSON.parse(text)
  } catch {
    body = undefined
  }
  return { status: res.status, body, text }
}

/** A GET with a Host header of our choosing (fetch does not let one set it). */
async function getWithHost(url: string, host: string): Promise<number> {
  return await new Promise((resolve, reject) => {
    const req = request(url, { headers: { host } }, res => {
      res.resume()
      resolve(res.statusCode ?? 0)
    })
    req.on('error', reject)
    req.end()
  })
}

describe('the dashboard server', () => {
  it('serves the built page with a strict content security policy, and only GET', async () => {
    const res = await fetch(ui.url)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-security-policy')).toContain("script-src 'self'")
    expect(res.headers.get('x-content-type-options')).toBe('nosniff')
    const html = await res.text()
    const script = /src="\.\/(assets\/[^"]+\.js)"/.exec(html)?.[1]
    expect(script).toBeDefined()
    const js = await fetch(new URL(script!, ui.url))
    expect(js.status).toBe(200)
    expect(js.headers.get('content-type')).toContain('javascript')
    expect((await fetch(new URL('nothing-here', ui.url))).status).toBe(404)
    expect((await fetch(new URL('api/summary', ui.url), { method: 'POST' })).status).toBe(405)
  })

  it('answers only requests addressed to a loopback name (no DNS rebinding)', async () => {
    const port = new URL(ui.url).port
    expect(await getWithHost(new URL('api/summary', ui.url).href, `localhost:${port}`)).toBe(200)
    expect(await getWithHost(new URL('api/summary', ui.url).href, `attacker.example:${port}`)).toBe(421)
  })

  it('refuses to serve beyond loopback without the API token', async () => {
    await expect(startUiServer({ listen: '0.0.0.0:0', daemon: a })).rejects.toThrow(/beyond loopback, without a token/)
  })

  it('with a token, trades it for a session cookie and answers nothing without one', async () => {
    const guarded = await startUiServer({ listen: '127.0.0.1:0', daemon: a, token: TOKEN })
    try {
      const at = (p: string): URL => new URL(p, guarded.url)
      expect((await fetch(at('api/summary'))).status).toBe(401)
      expect((await fetch(at('events'))).status).toBe(401)
      const page = await fetch(at('/'))
      expect(page.status).toBe(401)
      expect(await page.text()).not.toContain(TOKEN)
      expect((await fetch(at('/?token=wrong-token-wrong-token'), { redirect: 'manual' })).status).toBe(401)
      const login = await fetch(at(`/?token=${TOKEN}`), { redirect: 'manual' })
      expect(login.status).toBe(303)
      expect(login.headers.get('location')).toBe('/')
      const cookie = login.headers.get('set-cookie') ?? ''
      expect(cookie).toContain('HttpOnly')
      expect(cookie).toContain('SameSite=Strict')
      expect(cookie).not.toContain(TOKEN)
      const session = cookie.split(';')[0]
      expect(session).toBe(`agency_ui=${sessionValue(TOKEN)}`)
      expect((await fetch(at('api/summary'), { headers: { cookie: session } })).status).toBe(200)
      expect((await fetch(at('api/summary'), { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(200)
      expect((await fetch(at('api/summary'), { headers: { cookie: 'agency_ui=forged' } })).status).toBe(401)
    } finally {
      await guarded.close()
    }
  })

  it("passes a peer's markup on as data, escaped even inside the JSON", async () => {
    const text = 'the parser breaks on <script>alert("x")</script> & <img src=x onerror=alert(1)>'
    await b.logService.append('finding', { kind: 'failure', text, paths: ['src/<b>.ts'], tags: [], refs: [], supersedes: '' })
    const r = await waitFor(
      async () => {
        const got = await getJson('api/findings?q=parser')
        return got.body?.items?.length > 0 ? got : undefined
      },
      { what: "bo's finding at ada" }
    )
    expect(r.text).not.toContain('<script>')
    expect(r.text).not.toContain('<img')
    expect(r.text).toContain('\\u003cscript\\u003e')
    expect(r.body.items[0].text).toBe(text)
    expect(r.body.items[0].authorName).toBe('bo')
  })

  it('pages lists and refuses pages it will not serve', async () => {
    for (let i = 0; i < 12; i++)
      await a.boardService.addTask({
        id: `t${String(i).padStart(2, '0')}`,
        title: `task ${i}`,
        description: '',
        deps: [],
        scope: [],
        priority: 0
      })
    const first = await getJson('api/tasks?state=open&limit=5')
    expect(first.status).toBe(200)
    expect(first.body.total).toBe(12)
    expect(first.body.items.map((t: { id: string }) => t.id)).toEqual(['t00', 't01', 't02', 't03', 't04'])
    const last = await getJson('api/tasks?state=open&limit=5&offset=10')
    expect(last.body.items.map((t: { id: string }) => t.id)).toEqual(['t10', 't11'])
    const board = await getJson('api/board?limit=3')
    expect(board.body.columns.open.total).toBe(12)
    expect(board.body.columns.open.items.length).toBe(3)
    expect((await getJson('api/agents?limit=100000')).status).toBe(400)
    expect((await getJson('api/findings?offset=-1')).status).toBe(400)
    expect((await getJson('api/tasks?state=nonsense')).status).toBe(400)
    const unknown = await getJson(`api/agent?id=${encodeURIComponent('<nobody>')}`)
    expect(unknown.status).toBe(404)
    expect(unknown.text).not.toContain('<nobody>')
    expect((await getJson('api/no-such-endpoint')).status).toBe(404)
  })

  it('streams a change notice, with the activity line, when a peer claims a task', async () => {
    await a.boardService.addTask({ id: 'parser', title: 'Parser', description: '', deps: [], scope: ['src/parser/**'], priority: 1 })
    await waitFor(() => b.boardService.board.task('parser', b.boardService.now()) != null, { what: 'the task at bo' })
    const controller = new AbortController()
    const res = await fetch(new URL('events', ui.url), { signal: controller.signal })
    expect(res.headers.get('content-type')).toContain('text/event-stream')
    const reader = res.body!.getReader()
    const decoder = new TextDecoder()
    let received = ''
    const reading = (async () => {
      while (true) {
        const { value, done } = await reader.read()
        if (done) return
        received += decoder.decode(value)
      }
    })().catch(() => {})
    try {
      await waitFor(() => received.includes('event: hello'), { what: 'the hello event' })
      await b.boardService.claim('parser', [], true)
      const notice = await waitFor(
        () => {
          for (const block of received.split('\n\n')) {
            if (!block.startsWith('event: change')) continue
            const n = JSON.parse(block.slice(block.indexOf('data: ') + 6)) as {
              topics: string[]
              activity: Array<{ kind: string; task?: string; name: string }>
            }
            if (n.activity.some(x => x.kind === 'claim' && x.task === 'parser')) return n
          }
          return undefined
        },
        { what: 'a change notice for the claim' }
      )
      expect(notice.topics).toContain('board')
      expect(notice.topics).toContain('agents')
      expect(notice.activity.find(x => x.kind === 'claim')?.name).toBe('bo')
      // The notice names what changed; the state is fetched.
      const agents = await waitFor(
        async () => {
          const r = await getJson('api/agents')
          const row = r.body.items.find((x: { peerId: string }) => x.peerId === b.peerId)
          return row?.held?.some((h: { task: string }) => h.task === 'parser') === true ? row : undefined
        },
        { what: 'bo holding parser in the agents list' }
      )
      expect(agents.live).toBe(true)
    } finally {
      controller.abort()
      await reading
    }
  })

  it("shows a peer's harness state from its heartbeat, and the agent page", async () => {
    b.presence.harnessState = () => 'backing_off'
    await b.presence.beat()
    const row = await waitFor(
      async () => {
        const r = await getJson('api/agents?q=bo')
        const x = r.body.items.find((i: { peerId: string }) => i.peerId === b.peerId)
        return x?.harness === 'backing_off' ? x : undefined
      },
      { what: "bo's harness state at ada" }
    )
    expect(row.name).toBe('bo')
    const page = await getJson(`api/agent?id=bo`)
    expect(page.status).toBe(200)
    expect(page.body.agent.peerId).toBe(b.peerId)
    expect(page.body.claims.items.some((c: { task: string; status: string }) => c.task === 'parser' && c.status === 'holds')).toBe(true)
    expect(page.body.findings.total).toBeGreaterThanOrEqual(1)
  })

  it("shows each agent's sandbox, a peer's from its heartbeats: in the agents list, the peers and agency status", async () => {
    b.presence.reportHarness(() => 'running', 'bwrap')
    await b.presence.beat()
    const row = await waitFor(
      async () => {
        const r = await getJson('api/agents?q=bo')
        const x = r.body.items.find((i: { peerId: string }) => i.peerId === b.peerId)
        return x?.sandbox === 'bwrap' ? x : undefined
      },
      { what: "bo's sandbox at ada" }
    )
    expect(row.self).toBe(false)
    const peer = a.peers(false).find(p => p.peerId === b.peerId)
    expect(peer).toMatchObject({ sandbox: 'bwrap' })
    const info = peerInfo(peer!)
    expect(info.sandbox).toBe('bwrap')
    const status = statusDigest(StatusReply.fromPartial({ livePeers: [info], peersLive: 1 }))
    expect(status.peers.shown[0]).toMatchObject({ name: 'bo', sandbox: 'bwrap' })
    expect(digestLines(status).some(l => l.startsWith('  bo (sandbox bwrap)'))).toBe(true)
  })
})
