// The local API: a unix socket only its owner can use; a token that every
// call (unary and stream, gRPC client, CLI and MCP) must carry once
// --api-token-file is given; a bind beyond loopback refused without a token,
// before anything is bound; and /metrics that never shows a secret.
import { execFile } from 'node:child_process'
import { stat, readFile } from 'node:fs/promises'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import {
  AGENCY_BIN,
  PROCESS_TEST_TIMEOUT_MS,
  ProcessCluster,
  runAgency,
  type AgentdProcess,
  type CliResult
} from '../helpers/agentd-process.js'
import { waitFor } from '../helpers/wait-for.js'
import { connectAgency, type Agency } from '../../src/client/agency.js'
import { agencyHandlers, startGrpcServer } from '../../src/api/grpc-server.js'
import type { Daemon } from '../../src/daemon/daemon.js'
import type { AgencyClient, LogEntry } from '../../src/gen/agency/v1/api.js'
import { freePort } from '../helpers/free-port.js'
import { metricsText, rejection, writeSwarmKey, writeToken } from '../helpers/trust.js'
import { envWithoutAgency } from '../helpers/agency-free-env.js'

const cluster = new ProcessCluster()
const clients: Agency[] = []
/** The test process must not lend its own AGENCY_TOKEN to the clients under test. */
const savedToken = process.env.AGENCY_TOKEN
const savedTokenFile = process.env.AGENCY_TOKEN_FILE

beforeAll(() => {
  delete process.env.AGENCY_TOKEN
  delete process.env.AGENCY_TOKEN_FILE
})

afterAll(async () => {
  for (const c of clients) c.close()
  if (savedToken != null) process.env.AGENCY_TOKEN = savedToken
  if (savedTokenFile != null) process.env.AGENCY_TOKEN_FILE = savedTokenFile
  await cluster.cleanup()
}, PROCESS_TEST_TIMEOUT_MS)

function client(addr: string, opts: { tokenFile?: string; envToken?: string } = {}): Agency {
  const before = process.env.AGENCY_TOKEN
  if (opts.envToken != null) process.env.AGENCY_TOKEN = opts.envToken
  try {
    const c = connectAgency(addr, { tokenFile: opts.tokenFile })
    clients.push(c)
    return c
  } finally {
    if (before == null) delete process.env.AGENCY_TOKEN
    else process.env.AGENCY_TOKEN = before
  }
}

async function statusOf(c: Agency) {
  return await c.call((x: AgencyClient) => x.getStatus, {}, 20_000)
}

async function wholeLog(c: Agency): Promise<LogEntry[]> {
  const out: LogEntry[] = []
  for await (const e of c.stream((x: AgencyClient, m) => x.watchLog({ after: 0, follow: false }, m))) out.push(e)
  return out
}

/** `agency <args>` with the given extra environment (runAgency strips AGENCY_*). */
async function agencyWithEnv(args: string[], env: Record<string, string>): Promise<CliResult> {
  const base = envWithoutAgency()
  return await new Promise(resolve => {
    execFile(process.execPath, [AGENCY_BIN, ...args], { env: { ...base, ...env }, timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err == null ? 0 : typeof err.code === 'number' ? err.code : null, stdout, stderr })
    })
  })
}

/** stderr lines that are not the daemon's or client's structured logs. */
function plainLines(stderr: string): string[] {
  return stderr.split('\n').filter(l => l.trim() !== '' && !l.startsWith('{'))
}

describe('the default API address', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  let d: AgentdProcess
  let dataDir: string

  beforeAll(async () => {
    dataDir = await cluster.tempDir()
    d = cluster.onDataDir(dataDir, { name: 'by-default', grpc: null })
    await d.start()
  }, PROCESS_TEST_TIMEOUT_MS)

  it('is a unix socket in the data dir that only its owner may open', async () => {
    const socket = join(dataDir, 'agentd.sock')
    expect(d.grpcAddr).toBe(`unix:${socket}`)
    const s = await stat(socket)
    expect(s.isSocket()).toBe(true)
    expect((s.mode & 0o777).toString(8)).toBe('600')
    expect(((await stat(dataDir)).mode & 0o777).toString(8)).toBe('700')
  })

  it('is where `agency` looks, given only AGENCY_DATA_DIR', async () => {
    const res = await agencyWithEnv(['status', '--json'], { AGENCY_DATA_DIR: dataDir })
    expect(res.code, res.stderr).toBe(0)
    expect(JSON.parse(res.stdout).you.name).toBe('by-default')
    const none = await agencyWithEnv(['status'], { AGENCY_DATA_DIR: join(dataDir, 'elsewhere') })
    expect(none.code).toBe(3)
    expect(plainLines(none.stderr)).toEqual([expect.stringMatching(/no daemon answers at unix:.*elsewhere\/agentd\.sock/)])
  })

  it('is served again after a SIGKILL left the socket file behind', async () => {
    await d.kill('SIGKILL')
    expect((await stat(join(dataDir, 'agentd.sock'))).isSocket()).toBe(true)
    await d.restart()
    const res = await agencyWithEnv(['status', '--json'], { AGENCY_DATA_DIR: dataDir })
    expect(res.code, res.stderr).toBe(0)
  })
})

describe('--api-token-file naming a file that does not exist', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  it('makes a token only its owner can read, requires it, and `agency` reads it from AGENCY_TOKEN_FILE', async () => {
    const dir = await cluster.tempDir('agency-newtoken-')
    const tokenFile = join(dir, 'secret', 'api-token')
    const d = await cluster.start({ name: 'made-token', extraArgs: ['--api-token-file', tokenFile] })
    const s = await stat(tokenFile)
    expect((s.mode & 0o777).toString(8)).toBe('600')
    const token = (await readFile(tokenFile, 'utf8')).trim()
    expect(token.length).toBeGreaterThanOrEqual(32)
    expect((await rejection(statusOf(client(d.grpcAddr)))).code).toBe('PERMISSION_DENIED')
    const res = await agencyWithEnv(['status', '--json', '--addr', d.grpcAddr], { AGENCY_TOKEN_FILE: tokenFile })
    expect(res.code, res.stderr).toBe(0)
    // A restart keeps the token it made.
    await d.stop()
    await d.restart()
    expect((await readFile(tokenFile, 'utf8')).trim()).toBe(token)
  })
})

describe('--grpc unix:PATH', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  let d: AgentdProcess
  let socket: string

  beforeAll(async () => {
    const dataDir = await cluster.tempDir()
    socket = join(dataDir, 'api.sock')
    d = cluster.onDataDir(dataDir, { name: 'unix', extraArgs: ['--grpc', `unix:${socket}`] })
    await d.start()
  }, PROCESS_TEST_TIMEOUT_MS)

  it('serves on a socket that only its owner may open (mode 0600)', async () => {
    expect(d.grpcAddr).toBe(`unix:${socket}`)
    const s = await stat(socket)
    expect(s.isSocket()).toBe(true)
    expect((s.mode & 0o777).toString(8)).toBe('600')
  })

  it('answers the gRPC client and the CLI over the socket', async () => {
    const c = client(`unix:${socket}`)
    expect((await statusOf(c)).self?.name).toBe('unix')
    const res = await runAgency(['note', 'over the unix socket', '--addr', `unix:${socket}`, '--json'])
    expect(res.code, res.stderr).toBe(0)
    const id = JSON.parse(res.stdout).id as string
    expect((await c.call((x: AgencyClient) => x.getEntry, { id })).entry?.id).toBe(id)
  })
})

describe('--api-token-file', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  let d: AgentdProcess
  let tokenFile: string
  let token: string
  let wrongFile: string

  beforeAll(async () => {
    const dir = await cluster.tempDir('agency-token-')
    tokenFile = join(dir, 'token')
    token = await writeToken(tokenFile)
    wrongFile = join(dir, 'wrong')
    await writeToken(wrongFile)
    d = await cluster.start({ name: 'guarded', extraArgs: ['--api-token-file', tokenFile] })
  }, PROCESS_TEST_TIMEOUT_MS)

  it('refuses a call without a token, or with a wrong one, as PERMISSION_DENIED', async () => {
    for (const c of [
      client(d.grpcAddr),
      client(d.grpcAddr, { envToken: 'not-the-token-at-all' }),
      client(d.grpcAddr, { tokenFile: wrongFile })
    ]) {
      const err = await rejection(statusOf(c))
      expect(err.code).toBe('PERMISSION_DENIED')
      expect(err.message).toMatch(/API token/)
      // A write is refused the same way.
      expect(
        (
          await rejection(
            c.call((x: AgencyClient) => x.recordFinding, { kind: 'note', text: 'sneaky', paths: [], tags: [], refs: [], supersedes: '' })
          )
        ).code
      ).toBe('PERMISSION_DENIED')
    }
    // Nothing was written by the refused calls.
    const ok = client(d.grpcAddr, { tokenFile })
    expect((await wholeLog(ok)).filter(e => e.bodyJson.includes('sneaky'))).toEqual([])
  })

  it('ends a server stream without the token with PERMISSION_DENIED (instead of leaving it open)', async () => {
    const c = client(d.grpcAddr)
    // A refused stream that never ends is the failure; the bound only keeps the test from hanging.
    const outcome = await Promise.race([
      rejection(wholeLog(c)).then(e => e.code as string),
      new Promise<string>(resolve =>
        setTimeout(() => {
          resolve('no status within 30 s: the stream was left open')
        }, 30_000)
      )
    ])
    expect(outcome).toBe('PERMISSION_DENIED')
  })

  it('accepts the token from AGENCY_TOKEN and from --token-file', async () => {
    expect((await statusOf(client(d.grpcAddr, { envToken: token }))).self?.name).toBe('guarded')
    expect((await statusOf(client(d.grpcAddr, { tokenFile }))).self?.name).toBe('guarded')
    // Streams too: the whole log comes back (empty here, since every write so far was refused).
    await expect(wholeLog(client(d.grpcAddr, { tokenFile }))).resolves.toEqual([])
  })

  it('makes the CLI exit non-zero with one clear line without the token, and work with it', async () => {
    for (const res of [
      await runAgency(['status', '--addr', d.grpcAddr]),
      await runAgency(['status', '--addr', d.grpcAddr, '--token-file', wrongFile]),
      await agencyWithEnv(['note', 'no', '--addr', d.grpcAddr], { AGENCY_TOKEN: 'wrong-token-wrong-token' })
    ]) {
      expect(res.code).not.toBe(0)
      expect(res.code).not.toBeNull()
      expect(plainLines(res.stderr)).toEqual([
        "agency: missing or wrong API token: set AGENCY_TOKEN (or --token-file) to the daemon's token"
      ])
    }
    const viaFile = await runAgency(['note', 'with the token file', '--addr', d.grpcAddr, '--token-file', tokenFile, '--json'])
    expect(viaFile.code, viaFile.stderr).toBe(0)
    const viaEnv = await agencyWithEnv(['note', 'with the token env', '--addr', d.grpcAddr, '--json'], { AGENCY_TOKEN: token })
    expect(viaEnv.code, viaEnv.stderr).toBe(0)
    const viaEnvFile = await agencyWithEnv(['status', '--addr', d.grpcAddr, '--json'], { AGENCY_TOKEN_FILE: tokenFile })
    expect(viaEnvFile.code, viaEnvFile.stderr).toBe(0)
    const texts = (await wholeLog(client(d.grpcAddr, { tokenFile }))).map(e => JSON.parse(e.bodyJson).text)
    expect(texts).toEqual(expect.arrayContaining(['with the token file', 'with the token env']))
    expect(texts).not.toContain('no')
  })

  it('lets `agency mcp` through with AGENCY_TOKEN, and not without it', async () => {
    const callStatus = async (env: Record<string, string>): Promise<{ isError: boolean; text: string }> => {
      const base: Record<string, string> = {}
      for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('AGENCY_') && v != null) base[k] = v
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [AGENCY_BIN, 'mcp'],
        env: { ...base, AGENCY_ADDR: d.grpcAddr, ...env },
        stderr: 'ignore'
      })
      const mcp = new Client({ name: 'agency-trust-test', version: '0.0.0' })
      await mcp.connect(transport)
      try {
        const r = await mcp.callTool({ name: 'status', arguments: {} })
        const text = (r.content as Array<{ type: string; text?: string }>).map(c => c.text ?? '').join('\n')
        return { isError: r.isError === true, text }
      } finally {
        await mcp.close().catch(() => {})
      }
    }
    const denied = await callStatus({})
    expect(denied.isError).toBe(true)
    expect(denied.text).toMatch(/PERMISSION_DENIED/)
    const allowed = await callStatus({ AGENCY_TOKEN: token })
    expect(allowed.isError, allowed.text).toBe(false)
    expect(allowed.text).toContain('guarded')
  })
})

describe('a bind beyond loopback', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  it('is refused without a token: agentd exits non-zero with one clear line and never says ready', async () => {
    for (const addr of ['0.0.0.0:0', '[::]:0']) {
      const d = cluster.onDataDir(await cluster.tempDir(), { name: 'exposed', extraArgs: ['--grpc', addr] })
      const err = await d.start().then(
        () => undefined,
        (e: Error) => e
      )
      expect(err?.message, `agentd --grpc ${addr} started`).toMatch(/exited \(1\) before ready/)
      expect(plainLines(d.stderr)).toEqual([
        `agentd: refusing to serve the API on ${addr}, beyond loopback, without a token: pass --api-token-file`
      ])
    }
  })

  it('is refused before anything is bound (the port stays free)', async () => {
    const port = await freePort()
    // The handlers are never called: the refusal comes first.
    const handlers = agencyHandlers({} as unknown as Daemon)
    const err = await rejection(startGrpcServer(`0.0.0.0:${port}`, handlers))
    expect(err.code).toBe('FAILED_PRECONDITION')
    const free = await new Promise<boolean>(resolve => {
      const s = createServer()
      s.once('error', () => {
        resolve(false)
      })
      s.listen(port, '0.0.0.0', () => {
        s.close(() => {
          resolve(true)
        })
      })
    })
    expect(free).toBe(true)
  })
})

describe('/metrics', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  it('shows no token, no swarm key and no message, announcement or finding text', async () => {
    const dir = await cluster.tempDir('agency-secrets-')
    const keyFile = await writeSwarmKey(join(dir, 'swarm.key'))
    const tokenFile = join(dir, 'token')
    const token = await writeToken(tokenFile)
    const flags = ['--swarm-key', keyFile, '--api-token-file', tokenFile]
    const a = await cluster.start({ name: 'metrics-a', metrics: true, extraArgs: flags })
    const b = await cluster.start({ name: 'metrics-b', metrics: true, peers: [a.listenAddr], extraArgs: flags })
    const ca = client(a.grpcAddr, { tokenFile })
    const cb = client(b.grpcAddr, { tokenFile })
    await waitFor(async () => (await statusOf(cb)).livePeers.some(p => p.name === 'metrics-a'), { what: 'b to see a', timeoutMs: 60_000 })
    const dmText = `dm-secret-${Math.random().toString(36).slice(2)}`
    const noteText = `note-secret-${Math.random().toString(36).slice(2)}`
    const announceText = `announce-secret-${Math.random().toString(36).slice(2)}`
    const statusLine = `status-secret-${Math.random().toString(36).slice(2)}`
    await cb.call((x: AgencyClient) => x.sendMessage, { to: 'metrics-a', text: dmText, thread: '', replyTo: '' })
    await cb.call((x: AgencyClient) => x.recordFinding, { kind: 'note', text: noteText, paths: [], tags: [], refs: [], supersedes: '' })
    await cb.call((x: AgencyClient) => x.announce, { text: announceText })
    await cb.call((x: AgencyClient) => x.setStatusLine, { status: statusLine })
    await waitFor(
      async () =>
        (await ca.call((x: AgencyClient) => x.readInbox, { after: 0, limit: 100, all: true, peek: false })).messages.some(
          m => m.text === dmText
        ),
      { what: 'a to receive the message', timeoutMs: 60_000 }
    )
    await waitFor(
      async () =>
        (
          await ca.call((x: AgencyClient) => x.searchFindings, {
            query: noteText,
            kind: '',
            pathPrefix: '',
            tag: '',
            author: '',
            since: 0,
            until: 0,
            limit: 5
          })
        ).hits.length > 0,
      { what: 'a to hold the finding', timeoutMs: 60_000 }
    )
    const key = await readFile(keyFile, 'utf8')
    const keyHex = key.trim().split('\n').at(-1) as string
    expect(keyHex).toMatch(/^[0-9a-f]{64}$/)
    for (const d of [a, b]) {
      const text = await metricsText(d.metricsUrl)
      // The page is real: it counts the traffic that just happened.
      expect(text).toMatch(/agentd_direct_messages_(sent|received)_total [1-9]/)
      for (const secret of [token, keyHex, keyHex.slice(0, 16), dmText, noteText, announceText, statusLine]) {
        expect(text.includes(secret), `/metrics of ${d.name} contains ${secret}`).toBe(false)
      }
      const health = await (await fetch(d.metricsUrl.replace(/\/metrics$/, '/healthz'))).text()
      for (const secret of [token, keyHex, dmText, noteText, announceText, statusLine]) expect(health.includes(secret)).toBe(false)
    }
  })
})
