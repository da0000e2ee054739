// A swarm across separate network hosts (network namespaces on a bridge),
// with links cut and restored, and the shared repository served by one host
// over git://. Needs root and iproute2; without them it skips, saying why.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { Testbed, testbedUnavailable, type HostDaemon } from './testbed.js'
import { connectAgency, type Agency } from '../../../src/client/agency.js'
import { ClaimOutcome, type AgencyClient, type Event } from '../../../src/gen/agency/v1/api.js'
import { waitFor } from '../../helpers/wait-for.js'

const run = promisify(execFile)
const why = await testbedUnavailable()
if (why != null) process.stderr.write(`multi-host tests skipped: ${why}\n`)

const FLAGS = ['--heartbeat-ms', '400', '--live-timeout-ms', '3000', '--settle-ms', '600']

describe.skipIf(why != null)('a swarm across four hosts', () => {
  let bed: Testbed
  const hosts: HostDaemon[] = []
  const clients = new Map<number, Agency>()
  const c = (k: number): Agency => clients.get(k) as Agency

  beforeAll(async () => {
    bed = await Testbed.create()
    for (const k of [1, 2, 3, 4, 5]) await bed.addHost(k)
    // Host 1 serves the shared repository over git:// with push enabled.
    const repos = join(bed.root, 'served')
    await mkdir(repos, { recursive: true })
    const seed = join(bed.root, 'seed')
    await mkdir(seed, { recursive: true })
    await run('git', ['init', '-q', '-b', 'main'], { cwd: seed })
    await writeFile(join(seed, 'README.md'), 'shared\n')
    await run('git', ['add', '-A'], { cwd: seed })
    await run('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', 'seed'], { cwd: seed })
    await run('git', ['init', '-q', '--bare', '-b', 'main', join(repos, 'shared.git')])
    await run('git', ['push', '-q', join(repos, 'shared.git'), 'main'], { cwd: seed })
    bed.spawnIn(
      1,
      'git',
      [
        'daemon',
        '--reuseaddr',
        `--base-path=${repos}`,
        '--export-all',
        '--enable=receive-pack',
        `--listen=${bed.ip(1)}`,
        '--port=9418',
        repos
      ],
      { stdout: 'ignore' }
    )
    const remote = `git://${bed.ip(1)}/shared.git`
    const repoFlags = (k: number): string[] => ['--repo', remote, '--verify', 'true', '--mirror-dir', join(bed.root, `mirror${k}`)]
    hosts.push(await bed.startAgentd(1, { extraArgs: [...FLAGS, ...repoFlags(1)] }))
    for (const k of [2, 3, 4]) {
      // Host 2..4 bootstrap from host 1 only; they must find each other through it.
      hosts.push(await bed.startAgentd(k, { peers: hosts[0].addrs, extraArgs: [...FLAGS, ...repoFlags(k)] }))
    }
    for (const h of hosts) clients.set(h.host, connectAgency(h.grpc))
  }, 600_000)

  afterAll(async () => {
    for (const a of clients.values()) a.close()
    await bed?.teardown()
  }, 60_000)

  it('every host sees the others, and a claim, a finding and a message from each reach the others', async () => {
    for (const h of hosts) {
      await waitFor(
        async () => {
          const { peers } = await c(h.host).call((x: AgencyClient) => x.listPeers, { includeOffline: false })
          return peers.length >= 3
        },
        { what: `host ${h.host} to see three live peers` }
      )
    }
    for (const h of hosts) {
      // Advertised addresses are the host's own, never loopback only.
      expect(h.addrs.some(a => a.includes(`/ip4/${h.ip}/`))).toBe(true)
      await c(h.host).call((x: AgencyClient) => x.addTask, {
        id: `t${h.host}`,
        title: `task of host ${h.host}`,
        description: '',
        deps: [],
        scope: [`h${h.host}/**`],
        priority: 0
      })
      await c(h.host).call((x: AgencyClient) => x.recordFinding, {
        kind: 'discovery',
        text: `finding from host ${h.host}`,
        paths: [],
        tags: [`host${h.host}`],
        refs: [],
        supersedes: ''
      })
    }
    for (const h of hosts) {
      const claim = await waitFor(
        async () => await c(h.host).call((x: AgencyClient) => x.claim, { task: `t${h.host}`, scope: [], noWait: false }),
        { what: 'claim' }
      )
      expect(claim.outcome).toBe(ClaimOutcome.CLAIM_HELD)
      for (const o of hosts)
        if (o !== h)
          await c(h.host).call((x: AgencyClient) => x.sendMessage, {
            to: o.name,
            text: `hello ${o.name} from ${h.name}`,
            thread: '',
            replyTo: ''
          })
    }
    for (const h of hosts) {
      await waitFor(
        async () => {
          const { tasks } = await c(h.host).call((x: AgencyClient) => x.listTasks, { state: '' })
          const { hits } = await c(h.host).call((x: AgencyClient) => x.searchFindings, {
            query: 'finding from host',
            kind: 'discovery',
            pathPrefix: '',
            tag: '',
            author: '',
            since: 0,
            until: 0,
            limit: 50
          })
          return tasks.filter(t => t.state === 'claimed').length === 4 && hits.length === 4
        },
        { what: `host ${h.host} to have every claim and finding` }
      )
      const messages = await waitFor(
        async () => {
          const { messages } = await c(h.host).call((x: AgencyClient) => x.readInbox, { after: 0, limit: 50, all: true, peek: false })
          return messages.length >= 3 ? messages : undefined
        },
        { what: `host ${h.host} to receive three messages` }
      )
      expect(new Set(messages.map(m => m.fromName)).size).toBe(3)
    }
  }, 120_000)

  it('agents on three hosts integrate at once into the repository host 1 serves, and every commit lands', async () => {
    const work = async (k: number): Promise<void> => {
      const a = c(k)
      const ws = await a.call((x: AgencyClient) => x.getWorkspace, { task: `t${k}` })
      await mkdir(join(ws.path, `h${k}`), { recursive: true })
      await writeFile(join(ws.path, `h${k}`, 'work.txt'), `work of host ${k}\n`)
      await run('git', ['add', '-A'], { cwd: ws.path })
      await run('git', ['commit', '-q', '-m', `work of host ${k}`], { cwd: ws.path })
      const r = await a.call((x: AgencyClient) => x.integrate, { task: `t${k}`, message: '', background: false }, 300_000)
      expect(r.result).toBe('merged')
    }
    await Promise.all([2, 3, 4].map(work))
    const served = join(bed.root, 'served', 'shared.git')
    const files = (await run('git', ['--git-dir', served, 'ls-tree', '-r', '--name-only', 'main'])).stdout.split('\n')
    for (const k of [2, 3, 4]) expect(files).toContain(`h${k}/work.txt`)
    await run('git', ['--git-dir', served, 'fsck', '--no-dangling'])
  }, 300_000)

  it('a host cut off is given up after the lease, keeps working alone, and converges when its link returns', async () => {
    const events: Event[] = []
    const watch = c(4).stream((x: AgencyClient, m) => x.watchEvents({}, m))
    const collecting = (async () => {
      try {
        for await (const e of watch) events.push(e)
      } catch {
        /* the stream ends with the test */
      }
    })()

    await bed.cut(4)
    // The others stop seeing host 4 after the lease period...
    await waitFor(
      async () => {
        const { peers } = await c(1).call((x: AgencyClient) => x.listPeers, { includeOffline: true })
        return peers.find(p => p.name === 'host4')?.live === false
      },
      { what: 'host 1 to mark host 4 not live' }
    )
    // ...and can take over its task at the next epoch.
    const takeover = await waitFor(async () => await c(1).call((x: AgencyClient) => x.claim, { task: 't4', scope: [], noWait: false }), {
      what: 'the takeover'
    })
    expect(takeover.outcome).toBe(ClaimOutcome.CLAIM_HELD)
    expect(takeover.epoch).toBe(2)

    // Host 4 keeps working locally: a finding and messages queue up.
    await c(4).call((x: AgencyClient) => x.recordFinding, {
      kind: 'note',
      text: 'written while cut off',
      paths: [],
      tags: ['cut'],
      refs: [],
      supersedes: ''
    })
    await c(4).call((x: AgencyClient) => x.sendMessage, { to: 'host2', text: 'queued while cut off', thread: '', replyTo: '' })
    const before = await c(2).call((x: AgencyClient) => x.readInbox, { after: 0, limit: 100, all: true, peek: false })

    await bed.restore(4)
    // Every log converges.
    await waitFor(
      async () => {
        const digests = await Promise.all(hosts.map(async h => (await c(h.host).call((x: AgencyClient) => x.logInfo, {})).vectorDigest))
        return new Set(digests).size === 1
      },
      { what: 'every log to converge', timeoutMs: 60_000 }
    )
    // The queued message arrives exactly once.
    const after = await waitFor(
      async () => {
        const { messages } = await c(2).call((x: AgencyClient) => x.readInbox, { after: 0, limit: 100, all: true, peek: false })
        return messages.some(m => m.text === 'queued while cut off') ? messages : undefined
      },
      { what: 'the queued message' }
    )
    // Retries are over once host 4's outbox is empty. A copy still on its way
    // was written before the ack emptied it; a later message from host 4 (one
    // delivery attempt per peer at a time) lands after it.
    await waitFor(async () => (await c(4).call((x: AgencyClient) => x.getStatus, {})).outboxPending === 0, {
      what: "host 4's outbox to drain"
    })
    await c(4).call((x: AgencyClient) => x.sendMessage, { to: 'host2', text: 'sent after the queue drained', thread: '', replyTo: '' })
    const final = await waitFor(
      async () => {
        const { messages } = await c(2).call((x: AgencyClient) => x.readInbox, { after: 0, limit: 100, all: true, peek: false })
        return messages.some(m => m.text === 'sent after the queue drained') ? messages : undefined
      },
      { what: 'the later message' }
    )
    expect(final.filter(m => m.text === 'queued while cut off')).toHaveLength(1)
    expect(after.length).toBe(before.messages.length + 1)
    // Host 4 learns its task was taken over.
    await waitFor(async () => events.some(e => (e.type === 'claim_lost' || e.type === 'claim_superseded') && e.task === 't4'), {
      what: 'host 4 to hear that its claim was lost'
    })
    const t4 = (await c(4).call((x: AgencyClient) => x.getTask, { id: 't4' })).task
    expect(t4?.holder).toBe(hosts[0].peerId)
    watch.cancel()
    await collecting
  }, 180_000)

  it('when the bootstrap host is cut, the others keep their mesh, and a new host joins through host 2', async () => {
    await bed.cut(1)
    const host5 = await bed.startAgentd(5, { peers: [...hosts[0].addrs, ...hosts[1].addrs], extraArgs: FLAGS })
    hosts.push(host5)
    clients.set(5, connectAgency(host5.grpc))
    await c(2).call((x: AgencyClient) => x.recordFinding, {
      kind: 'note',
      text: 'while host 1 is away',
      paths: [],
      tags: [],
      refs: [],
      supersedes: ''
    })
    for (const k of [2, 3, 4, 5]) {
      await waitFor(
        async () => {
          const { peers } = await c(k).call((x: AgencyClient) => x.listPeers, { includeOffline: false })
          const names = new Set(peers.map(p => p.name))
          return [2, 3, 4, 5].filter(j => j !== k).every(j => names.has(`host${j}`))
        },
        { what: `host ${k} to see hosts 2-5 live`, timeoutMs: 60_000 }
      )
    }
    await waitFor(
      async () => {
        const infos = await Promise.all([2, 3, 4, 5].map(async k => await c(k).call((x: AgencyClient) => x.logInfo, {})))
        return new Set(infos.map(i => i.vectorDigest)).size === 1
      },
      { what: 'host 5 to catch up with the log', timeoutMs: 60_000 }
    )
    const { hits } = await c(5).call((x: AgencyClient) => x.searchFindings, {
      query: 'while host 1 is away',
      kind: '',
      pathPrefix: '',
      tag: '',
      author: '',
      since: 0,
      until: 0,
      limit: 5
    })
    // The finding written while host 1 was away ranks first for its own words.
    expect(hits[0]?.finding?.text).toBe('while host 1 is away')
    await bed.restore(1)
  }, 180_000)
})
