#!/usr/bin/env node
// `npm start`: a local demo. Part 1: three agentd processes on loopback find
// each other, exchange direct messages and share a finding. Part 2: a swarm of
// four scripted agents builds the calc example from 0% to 100% pass rate.
import '../polyfill.js'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startLocalDaemon, type LocalDaemon } from '../swarm/local-daemon.js'
import { connectAgency, type Agency } from '../client/agency.js'
import type { AgencyClient } from '../gen/agency/v1/api.js'
import { swarmUp } from '../swarm/swarm.js'

const say = (text: string): void => {
  process.stdout.write(text + '\n')
}

async function waitFor<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    const v = await fn().catch(() => undefined)
    if (v !== undefined) return v
    await new Promise(resolve => setTimeout(resolve, 200))
  }
  throw new Error(`timed out waiting for ${what}`)
}

async function meshDemo(): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'agency-demo-'))
  const daemons: LocalDaemon[] = []
  const clients: Agency[] = []
  try {
    say('agency demo: three agentd daemons on 127.0.0.1\n')
    const names = ['ada', 'brook', 'cyd']
    const first = await startLocalDaemon({ name: names[0], dataDir: join(root, names[0]), extraArgs: ['--heartbeat-ms', '500'] })
    daemons.push(first)
    for (const name of names.slice(1)) {
      daemons.push(await startLocalDaemon({ name, dataDir: join(root, name), peers: first.addrs, extraArgs: ['--heartbeat-ms', '500'] }))
    }
    for (const d of daemons) {
      say(`  ${d.name.padEnd(6)} peer ${d.peerId}  gRPC ${d.grpc}`)
      clients.push(connectAgency(d.grpc))
    }
    const [a, b, c] = clients

    say('\n1. they find each other through the first one (agency peers):')
    for (const [i, client] of clients.entries()) {
      const peers = await waitFor('peers', async () => {
        const { peers } = await client.call((x: AgencyClient) => x.listPeers, { includeOffline: false })
        return peers.length >= 2 ? peers : undefined
      })
      say(`  ${names[i]} sees ${peers.map(p => p.name).join(', ')}`)
    }

    say('\n2. brook sends cyd a direct message (agency send cyd ...):')
    const sent = await b.call((x: AgencyClient) => x.sendMessage, {
      to: 'cyd',
      text: 'hi cyd, I am taking the parser; can you take the CLI?',
      thread: '',
      replyTo: ''
    })
    const inbox = await waitFor('the message', async () => {
      const { messages } = await c.call((x: AgencyClient) => x.readInbox, { after: 0, limit: 10, all: true, peek: false })
      return messages.length > 0 ? messages : undefined
    })
    say(`  cyd's inbox: from ${inbox[0].fromName}: "${inbox[0].text}" (id ${sent.id.slice(0, 8)}, delivered once)`)

    say('\n3. cyd replies in the same thread:')
    await c.call((x: AgencyClient) => x.sendMessage, {
      to: 'brook',
      text: 'deal, CLI is mine',
      thread: inbox[0].thread,
      replyTo: inbox[0].id
    })
    const reply = await waitFor('the reply', async () => {
      const { messages } = await b.call((x: AgencyClient) => x.readInbox, { after: 0, limit: 10, all: true, peek: false })
      return messages.length > 0 ? messages[0] : undefined
    })
    say(`  brook's inbox: from ${reply.fromName}: "${reply.text}"`)

    say('\n4. ada records a failed approach (agency note --kind failure ...); the others can find it:')
    await a.call((x: AgencyClient) => x.recordFinding, {
      kind: 'failure',
      text: 'parsing the config with a regex breaks on nested braces; use a real parser',
      paths: ['src/config.ts'],
      tags: ['parser'],
      refs: [],
      supersedes: ''
    })
    const hit = await waitFor('the finding', async () => {
      const { hits } = await c.call((x: AgencyClient) => x.searchFindings, {
        query: 'regex config',
        kind: '',
        pathPrefix: '',
        tag: '',
        author: '',
        since: 0,
        until: 0,
        limit: 5
      })
      return hits.length > 0 ? hits[0] : undefined
    })
    say(`  cyd: agency find "regex config" -> [${hit.finding?.kind}] ${hit.finding?.text}`)

    say('\n5. the shared record is the same everywhere (agency log info):')
    for (const [i, client] of clients.entries()) {
      const info = await waitFor('log', async () => {
        const r = await client.call((x: AgencyClient) => x.logInfo, {})
        return r.entries >= 1 ? r : undefined
      })
      say(`  ${names[i].padEnd(6)} ${info.entries} entries, digest ${info.vectorDigest.slice(0, 16)}`)
    }
    say('\npart 1 finished; stopping the three daemons.\n')
  } finally {
    for (const c of clients) c.close()
    await Promise.all(daemons.map(async d => await d.stop()))
    await rm(root, { recursive: true, force: true })
  }
}

async function swarmDemo(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'agency-swarm-demo-'))
  try {
    say('part 2: `agency swarm up -n 4 --harness sim --example calc`: four scripted agents build the calc example.')
    say('Each agent reads the board, claims a task, searches the findings, writes code, runs the tests and integrates;')
    say('a failed approach is recorded, and peers skip it.\n')
    const { finished } = await swarmUp({
      n: 4,
      dir,
      example: 'calc',
      harness: 'sim',
      swarm: 'demo',
      downWhenDone: true,
      timeoutMs: 10 * 60_000,
      progress: say
    })
    say(
      finished ? '\nthe goal is met: every task is done and every test passes on the shared branch.' : '\nthe swarm did not finish in time.'
    )
    if (!finished) process.exitCode = 1
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

async function main(): Promise<void> {
  await meshDemo()
  await swarmDemo()
}

main().catch(err => {
  process.stderr.write(`demo failed: ${(err as Error).message}\n`)
  process.exit(1)
})
