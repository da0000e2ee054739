// Crashes: SIGKILL during heavy writes loses nothing that was acknowledged,
// neither log entries nor direct messages (which arrive exactly once); a data
// dir that cannot be opened, and a disk that fills up, give a clear error.
import { execFileSync } from 'node:child_process'
import { mkdir, writeFile, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, describe, expect, it } from 'vitest'
import { PROCESS_TEST_TIMEOUT_MS, ProcessCluster, type AgentdProcess } from '../helpers/agentd-process.js'
import { waitFor } from '../helpers/wait-for.js'
import { connectAgency, type Agency } from '../../src/client/agency.js'
import type { AgencyError } from '../../src/core/errors.js'
import { loadOrCreateIdentity } from '../../src/daemon/identity.js'
import type { AgencyClient } from '../../src/gen/agency/v1/api.js'
import { seededRandom } from '../helpers/trust.js'
import { freePort } from '../helpers/free-port.js'

const cluster = new ProcessCluster()
const clients: Agency[] = []
afterAll(async () => {
  for (const c of clients) c.close()
  await cluster.cleanup()
}, PROCESS_TEST_TIMEOUT_MS)

const KILLS = 4
const seed = Number(process.env.AGENCY_CRASH_SEED ?? Date.now() % 1_000_000)
const random = seededRandom(seed)

/** stderr lines that are not structured logs. */
function plainLines(stderr: string): string[] {
  return stderr.split('\n').filter(l => l.trim() !== '' && !l.startsWith('{'))
}

/** The API of a daemon that is killed and restarted: `client` follows the current run. */
class RestartingApi {
  client?: Agency
  constructor(readonly d: AgentdProcess) {
    this.attach()
  }
  attach(): void {
    this.client = connectAgency(this.d.grpcAddr)
    clients.push(this.client)
  }

  async killAndRestart(): Promise<void> {
    const old = this.client
    this.client = undefined
    await this.d.kill('SIGKILL')
    old?.close()
    await this.d.restart()
    this.attach()
  }
}

/** Waits until `count()` has grown by `n` and a random extra moment has passed, so the kill lands mid-stream. */
async function midStream(count: () => number, n: number): Promise<void> {
  const start = count()
  await waitFor(() => count() >= start + n, { what: `${n} more acknowledged writes (seed ${seed})`, timeoutMs: 90_000, intervalMs: 20 })
  await sleep(Math.floor(random() * 400))
}

describe('repeated SIGKILL during heavy writes', { timeout: 5 * 60_000 }, () => {
  it('loses no acknowledged log entry', async () => {
    const d = await cluster.start({ name: 'writer-target' })
    const api = new RestartingApi(d)
    const acked: string[] = []
    let writing = true
    const writer = async (k: number): Promise<void> => {
      for (let i = 0; writing; i++) {
        const c = api.client
        if (c == null) {
          await sleep(20)
          continue
        }
        try {
          const reply = await c.call(
            (x: AgencyClient) => x.recordFinding,
            { kind: 'note', text: `writer ${k} note ${i}`, paths: [], tags: [`w${k}`], refs: [], supersedes: '' },
            15_000
          )
          // The reply is the acknowledgement: from here on the entry must survive anything.
          acked.push(reply.entry?.id as string)
        } catch {
          await sleep(20)
        }
      }
    }
    const writers = [0, 1, 2, 3].map(writer)
    for (let k = 0; k < KILLS; k++) {
      await midStream(() => acked.length, 25)
      await api.killAndRestart()
    }
    await midStream(() => acked.length, 10)
    writing = false
    await Promise.all(writers)

    const c = api.client as Agency
    const missing: string[] = []
    for (let i = 0; i < acked.length; i += 50) {
      const found = await Promise.all(
        acked.slice(i, i + 50).map(
          async id =>
            await c
              .call((x: AgencyClient) => x.getEntry, { id })
              .then(
                () => true,
                () => false
              )
        )
      )
      found.forEach((ok, j) => {
        if (!ok) missing.push(acked[i + j])
      })
    }
    expect(missing, `acknowledged entries lost after ${KILLS} SIGKILLs (seed ${seed})`).toEqual([])
    expect(new Set(acked).size).toBe(acked.length)
    // The feed is whole: one author, seqs 1..n with no gap.
    const info = await c.call((x: AgencyClient) => x.logInfo, {})
    expect(info.authors).toHaveLength(1)
    expect(info.authors[0].seq).toBe(info.entries)
    expect(info.entries).toBeGreaterThanOrEqual(acked.length)
    expect(info.pending).toBe(0)
  })

  it('loses no acknowledged direct message, and delivers each exactly once', async () => {
    // Fixed ports and identities made up front, so that each side can always find the other after a restart.
    const [sDir, rDir] = [await cluster.tempDir(), await cluster.tempDir()]
    const [sId, rId] = [await loadOrCreateIdentity(sDir), await loadOrCreateIdentity(rDir)]
    const [sPort, rPort] = [await freePort(), await freePort()]
    const addr = (port: number, peer: string): string => `/ip4/127.0.0.1/tcp/${port}/p2p/${peer}`
    const sender = cluster.onDataDir(sDir, {
      name: 'dm-sender',
      peers: [addr(rPort, rId.peerId)],
      extraArgs: ['--listen', `/ip4/127.0.0.1/tcp/${sPort}`]
    })
    const receiver = cluster.onDataDir(rDir, {
      name: 'dm-receiver',
      peers: [addr(sPort, sId.peerId)],
      extraArgs: ['--listen', `/ip4/127.0.0.1/tcp/${rPort}`]
    })
    await Promise.all([sender.start(), receiver.start()])
    const s = new RestartingApi(sender)
    const r = new RestartingApi(receiver)
    await waitFor(
      async () =>
        (await s.client!.call((x: AgencyClient) => x.listPeers, { includeOffline: false })).peers.some(p => p.peerId === rId.peerId),
      { what: 'the sender to see the receiver', timeoutMs: 60_000 }
    )

    const acked: string[] = []
    let sending = true
    const send = async (k: number): Promise<void> => {
      for (let i = 0; sending; i++) {
        const c = s.client
        if (c == null) {
          await sleep(20)
          continue
        }
        try {
          const reply = await c.call(
            (x: AgencyClient) => x.sendMessage,
            { to: rId.peerId, text: `loop ${k} message ${i}`, thread: '', replyTo: '' },
            15_000
          )
          acked.push(reply.id)
        } catch {
          // Down, or just restarted and not yet told where the receiver is.
          await sleep(50)
        }
      }
    }
    const senders = [0, 1].map(send)
    // Kill both sides in turn: the sender with messages in its outbox, the receiver mid-delivery.
    for (let k = 0; k < KILLS; k++) {
      await midStream(() => acked.length, 15)
      await (k % 2 === 0 ? s : r).killAndRestart()
    }
    await midStream(() => acked.length, 10)
    sending = false
    await Promise.all(senders)

    const inbox = async (): Promise<string[]> =>
      (await r.client!.call((x: AgencyClient) => x.readInbox, { after: 0, limit: 10_000, all: true, peek: false })).messages.map(m => m.id)
    await waitFor(
      async () => {
        const have = new Set(await inbox())
        return acked.every(id => have.has(id))
      },
      { what: `every acknowledged message to reach the receiver (seed ${seed})`, timeoutMs: 120_000, intervalMs: 500 }
    )
    await waitFor(async () => (await s.client!.call((x: AgencyClient) => x.getStatus, {})).outboxPending === 0, {
      what: "the sender's outbox to drain",
      timeoutMs: 60_000
    })
    const ids = await inbox()
    const counts = new Map<string, number>()
    for (const id of ids) counts.set(id, (counts.get(id) ?? 0) + 1)
    expect(
      [...counts].filter(([, n]) => n > 1),
      'messages delivered more than once'
    ).toEqual([])
    expect(acked.length).toBeGreaterThan(0)
    expect(new Set(acked).size).toBe(acked.length)
  })
})

describe('a data dir that cannot be used', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  async function startFails(dataDir: string): Promise<{ message: string; lines: string[] }> {
    const d = cluster.onDataDir(dataDir, { name: 'bad-dir' })
    const err = await d.start().then(
      () => undefined,
      (e: Error) => e
    )
    expect(err, `agentd started on ${dataDir}`).toBeDefined()
    return { message: err?.message ?? '', lines: plainLines(d.stderr) }
  }

  it('exits 1 with one clear line when the data dir is below a regular file, or is one', async () => {
    const dir = await cluster.tempDir('agency-baddir-')
    const file = join(dir, 'a-file')
    await writeFile(file, 'not a directory\n')
    for (const dataDir of [join(file, 'data'), file]) {
      const { message, lines } = await startFails(dataDir)
      expect(message).toMatch(/exited \(1\) before ready/)
      expect(lines).toHaveLength(1)
      expect(lines[0]).toMatch(new RegExp(`^agentd: data dir ${dataDir} cannot be used: .*is not a directory$`))
    }
  })

  it('exits 1 with one clear line when another agentd holds the data dir', async () => {
    const first = await cluster.start({ name: 'holder' })
    const { message, lines } = await startFails(first.dataDir)
    expect(message).toMatch(/exited \(1\) before ready/)
    expect(lines).toEqual([`agentd: data dir ${first.dataDir} is in use by another agentd`])
    expect(first.running).toBe(true)
  })
})

describe('a disk that fills up', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  it('refuses writes with a clear error, keeps what was acknowledged, and writes again once there is room', async ctx => {
    const mnt = await cluster.tempDir('agency-fulldisk-')
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2M', 'tmpfs', mnt], { stdio: 'ignore' })
    } catch {
      ctx.skip('cannot mount a small tmpfs here (needs root): the full-disk case is not tested')
    }
    const d = cluster.onDataDir(join(mnt, 'data'), { name: 'full-disk' })
    try {
      await d.start()
      const c = connectAgency(d.grpcAddr)
      clients.push(c)
      // Leave the store a few dozen KiB: fill the rest with one file.
      const avail = Number(execFileSync('df', ['-k', '--output=avail', mnt], { encoding: 'utf8' }).trim().split('\n').at(-1))
      await mkdir(join(mnt, 'filler-dir'))
      execFileSync('dd', ['if=/dev/zero', `of=${join(mnt, 'filler-dir', 'filler')}`, 'bs=1k', `count=${avail - 48}`], { stdio: 'ignore' })

      const acked: string[] = []
      const errors: AgencyError[] = []
      const write = async (text: string): Promise<void> => {
        const reply = await c.call(
          (x: AgencyClient) => x.recordFinding,
          { kind: 'note', text, paths: [], tags: [], refs: [], supersedes: '' },
          15_000
        )
        acked.push(reply.entry?.id as string)
      }
      for (let i = 0; i < 5000 && errors.length === 0; i++) {
        await write(`${'x'.repeat(300)} ${i}`).catch((err: AgencyError) => {
          errors.push(err)
        })
      }
      expect(acked.length, 'no write succeeded before the disk filled').toBeGreaterThan(0)
      expect(errors.length, 'the disk never filled').toBeGreaterThan(0)
      // (Soft expectations: each of these says something different about how a full disk is handled.)
      // The first refusal names the problem and is not an "internal error".
      expect.soft(errors[0].message).toMatch(/no space left on device/i)
      expect.soft(errors[0].code).not.toBe('INTERNAL')
      // Then either the daemon stops with a non-zero exit and says why, or it stays up and refuses every write the same way.
      const later = await waitFor(
        async () => {
          if (!d.running) return { exited: true, message: '' }
          const err = await write('one more').then(
            () => undefined,
            (e: AgencyError) => e
          )
          if (!d.running) return { exited: true, message: '' }
          return err != null && err.code !== 'UNAVAILABLE' ? { exited: false, message: `${err.code}: ${err.message}` } : undefined
        },
        { what: 'the daemon to stop, or to refuse a write again', timeoutMs: 30_000 }
      )
      if (later.exited) {
        const exit = await d.kill('SIGKILL')
        expect.soft(exit.code).not.toBe(0)
        expect.soft(plainLines(d.stderr).join('\n')).toMatch(/no space left on device/i)
      } else {
        expect.soft(later.message).toMatch(/no space left on device/i)
      }

      // Room again: the daemon writes again (restarted if it had stopped), and nothing acknowledged is missing.
      await rm(join(mnt, 'filler-dir'), { recursive: true, force: true })
      let api = c
      if (!d.running) {
        await d.restart()
        api = connectAgency(d.grpcAddr)
        clients.push(api)
      }
      const after = await api
        .call(
          (x: AgencyClient) => x.recordFinding,
          { kind: 'note', text: 'there is room again', paths: [], tags: [], refs: [], supersedes: '' },
          15_000
        )
        .then(
          r => r.entry?.id,
          (err: AgencyError) => `${err.code}: ${err.message}`
        )
      expect.soft(after).toMatch(/^[0-9a-f]{64}$/)
      for (const id of acked)
        expect
          .soft(
            await api
              .call((x: AgencyClient) => x.getEntry, { id })
              .then(
                () => true,
                () => false
              ),
            `acknowledged ${id} is missing`
          )
          .toBe(true)
      // And what the daemon holds of its own feed is what it acknowledged (plus the last write): no entry the agent was told failed.
      const info = await api.call((x: AgencyClient) => x.logInfo, {})
      expect.soft(info.entries).toBe(acked.length + 1)
    } finally {
      if (d.running) await d.kill('SIGKILL')
      try {
        execFileSync('umount', [mnt], { stdio: 'ignore' })
      } catch {
        /* not mounted */
      }
    }
  })
})
