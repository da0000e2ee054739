// A daemon killed while it appends, restarted, never forks its own feed at a
// peer: nothing it serves is ahead of its disk, and after a restart it learns
// its feed's head from its peers before it signs again. The hard case is
// forced once: the writer's data dir is rolled back to an older copy (what a
// restored backup or a lost volume does), so the peer holds entries the
// writer's disk lacks; the restarted writer takes them back before its next
// entry, and no acknowledged entry is lost.
import { cp, rm } from 'node:fs/promises'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, describe, expect, it } from 'vitest'
import { connectAgency, type Agency } from '../../src/client/agency.js'
import { loadOrCreateIdentity } from '../../src/daemon/identity.js'
import type { AgencyClient, LogInfoReply } from '../../src/gen/agency/v1/api.js'
import { PROCESS_TEST_TIMEOUT_MS, ProcessCluster, type AgentdProcess } from '../helpers/agentd-process.js'
import { waitFor } from '../helpers/wait-for.js'
import { seededRandom } from '../helpers/trust.js'
import { freePort } from '../helpers/free-port.js'

const cluster = new ProcessCluster()
const clients: Agency[] = []
afterAll(async () => {
  for (const c of clients) c.close()
  await cluster.cleanup()
}, PROCESS_TEST_TIMEOUT_MS)

const seed = Number(process.env.AGENCY_CRASH_SEED ?? Date.now() % 1_000_000)
const random = seededRandom(seed)
const addr = (port: number, peer: string): string => `/ip4/127.0.0.1/tcp/${port}/p2p/${peer}`

async function logInfo(c: Agency): Promise<LogInfoReply> {
  return await c.call((x: AgencyClient) => x.logInfo, {})
}

describe("the writer's own feed across SIGKILL and a lost disk", { timeout: 5 * 60_000 }, () => {
  it('never forks at the peer, and keeps every acknowledged entry', async () => {
    const [wDir, pDir] = [await cluster.tempDir(), await cluster.tempDir()]
    const [wId, pId] = [await loadOrCreateIdentity(wDir), await loadOrCreateIdentity(pDir)]
    const [wPort, pPort] = [await freePort(), await freePort()]
    const w = cluster.onDataDir(wDir, {
      name: 'writer',
      peers: [addr(pPort, pId.peerId)],
      extraArgs: ['--listen', `/ip4/127.0.0.1/tcp/${wPort}`]
    })
    const p = cluster.onDataDir(pDir, {
      name: 'peer',
      peers: [addr(wPort, wId.peerId)],
      extraArgs: ['--listen', `/ip4/127.0.0.1/tcp/${pPort}`]
    })
    await Promise.all([w.start(), p.start()])
    const peerApi = connectAgency(p.grpcAddr)
    clients.push(peerApi)

    let api: Agency | undefined = connectAgency(w.grpcAddr)
    clients.push(api)
    const acked: string[] = []
    let writing = true
    const writers = [0, 1, 2].map(async k => {
      for (let i = 0; writing; i++) {
        const c = api
        if (c == null) {
          await sleep(20)
          continue
        }
        try {
          const reply = await c.call(
            (x: AgencyClient) => x.recordFinding,
            { kind: 'note', text: `writer ${k} note ${i}`, paths: [], tags: [], refs: [], supersedes: '' },
            30_000
          )
          acked.push(reply.entry?.id as string)
        } catch {
          await sleep(20)
        }
      }
    })
    const kill = async (d: AgentdProcess): Promise<void> => {
      const old = api
      api = undefined
      await d.kill('SIGKILL')
      old?.close()
    }
    const restart = async (d: AgentdProcess): Promise<void> => {
      await d.restart()
      api = connectAgency(d.grpcAddr)
      clients.push(api)
    }
    const more = async (n: number): Promise<void> => {
      const start = acked.length
      await waitFor(() => acked.length >= start + n, {
        what: `${n} more acknowledged entries (seed ${seed})`,
        timeoutMs: 90_000,
        intervalMs: 20
      })
      await sleep(Math.floor(random() * 300))
    }

    // SIGKILL while three writers append and the peer syncs.
    for (let k = 0; k < 3; k++) {
      await more(20)
      await kill(w)
      await restart(w)
    }

    // A disk that loses what the peer already has: snapshot, write on, roll back.
    await more(10)
    await kill(w)
    const snapshot = await cluster.tempDir('agency-writer-snapshot-')
    await cp(wDir, snapshot, { recursive: true })
    const onDisk = acked.length
    await restart(w)
    await more(15)
    writing = false
    await Promise.all(writers)
    const seqOf = (i: LogInfoReply): number => i.authors.find(a => a.author === wId.peerId)?.seq ?? 0
    const lostSeq = seqOf(await logInfo(api))
    await waitFor(async () => seqOf(await logInfo(peerApi)) >= lostSeq, {
      what: 'the peer to hold the entries the writer is about to lose',
      timeoutMs: 60_000
    })
    await kill(w)
    await rm(wDir, { recursive: true, force: true })
    await cp(snapshot, wDir, { recursive: true })
    expect(acked.length).toBeGreaterThan(onDisk)
    // Restarted on the old disk, it is asked to write at once.
    writing = true
    const after = [0, 1].map(async k => {
      for (let i = 0; writing; i++) {
        const c = api
        if (c == null) {
          await sleep(20)
          continue
        }
        try {
          const reply = await c.call(
            (x: AgencyClient) => x.recordFinding,
            { kind: 'note', text: `after the loss ${k} note ${i}`, paths: [], tags: [], refs: [], supersedes: '' },
            30_000
          )
          acked.push(reply.entry?.id as string)
        } catch {
          await sleep(20)
        }
      }
    })
    await restart(w)
    await more(10)
    writing = false
    await Promise.all(after)

    // Both sides converge on one whole feed: the writer took back what its disk had lost.
    const c = api
    await waitFor(
      async () => {
        const [mine, theirs] = [await logInfo(c), await logInfo(peerApi)]
        if (seqOf(mine) === seqOf(theirs) && seqOf(mine) >= new Set(acked).size) return true
        // What the timeout message shows: a fork shows up as refusals at the peer.
        throw new Error(
          `writer at seq ${seqOf(mine)}, peer at ${seqOf(theirs)}; the peer refused ${JSON.stringify(theirs.rejected)}, holds ${theirs.forks} fork proofs`
        )
      },
      { what: `the writer and the peer to hold the same feed (seed ${seed})`, timeoutMs: 60_000, intervalMs: 300 }
    )
    const peerInfo = await logInfo(peerApi)
    expect(peerInfo.forks, `forks at the peer (seed ${seed})`).toBe(0)
    expect(peerInfo.rejected.fork ?? 0, `forks refused at the peer (seed ${seed})`).toBe(0)
    expect(peerInfo.rejected.bad_prev ?? 0, `broken chains refused at the peer (seed ${seed})`).toBe(0)
    expect(peerInfo.authors.find(a => a.author === wId.peerId)?.faulty).toBe(false)
    expect((await logInfo(c)).forks).toBe(0)
    const missing: string[] = []
    for (const id of acked) {
      for (const [who, api] of [
        ['writer', c],
        ['peer', peerApi]
      ] as const) {
        if (
          !(await api
            .call((x: AgencyClient) => x.getEntry, { id })
            .then(
              () => true,
              () => false
            ))
        )
          missing.push(`${id} at the ${who}`)
      }
    }
    expect(missing, `acknowledged entries missing (seed ${seed})`).toEqual([])
  })
})
