// agency status | peers | send | inbox | announce | events
import type { Command } from 'commander'
import { command, withAgency, printJson, line, ago, short, type CommonOpts } from '../output.js'
import type { AgencyClient, Event, InboxMessage, PeerInfo, StatusReply } from '../../gen/agency/v1/api.js'
import { digestLines, statusDigest } from '../../api/status-digest.js'
import { givenOperator, submitAction } from '../operator-client.js'

function peerLine(p: PeerInfo): string {
  const claims = p.claims.length > 0 ? ` holds ${p.claims.map(c => `${c.task}@${c.epoch}`).join(',')}` : ''
  const state = p.live ? 'live' : 'gone'
  return `${p.name.padEnd(12)} ${p.peerId}  ${state}${p.connected ? ' connected' : ''}  seen ${ago(p.lastSeenMsAgo)}${p.sandbox !== '' ? `  sandbox ${p.sandbox}` : ''}${claims}${p.status !== '' ? `  — ${p.status}` : ''}`
}

export function printStatus(s: StatusReply): void {
  line(`${s.self?.name ?? ''} ${s.self?.peerId ?? ''} swarm ${s.swarm}  agentd ${s.version}, up ${Math.round(s.uptimeSeconds)}s`)
  if (s.goal != null && s.goal.text !== '')
    line(`goal: ${s.goal.text}${s.goal.testCommand !== '' ? `  (tests: ${s.goal.testCommand})` : ''}`)
  const states = Object.entries(s.tasksByState)
  if (states.length > 0) line(`tasks: ${states.map(([k, v]) => `${v} ${k}`).join(', ')}`)
  for (const t of s.tasks) {
    if (t.state === 'claimed' || t.state === 'expired') line(`  ${t.id} [${t.state}] held by ${short(t.holder)}@${t.epoch}`)
  }
  line(
    `peers: ${s.peersLive} live, ${s.peersConnected} connected; inbox ${s.inboxCount}, outbox ${s.outboxPending}; log ${s.logEntries} entries`
  )
  for (const p of s.livePeers) line(`  ${peerLine(p)}`)
}

function messageLine(m: InboxMessage): string {
  if (m.kind !== '' && m.kind !== 'message')
    return `#${m.cursor} ${new Date(m.time).toISOString()} notice ${m.kind}${m.task !== '' ? ` (${m.task})` : ''}: ${m.text}`
  const reply = m.replyTo !== '' ? ` (re ${m.replyTo.slice(0, 8)})` : ''
  return `#${m.cursor} ${new Date(m.time).toISOString()} from ${m.fromName !== '' ? m.fromName : short(m.from)}${reply}: ${m.text}`
}

function eventLine(e: Event): string {
  const who = e.peerName !== '' ? e.peerName : short(e.peerId)
  return `${new Date(e.time).toISOString()} ${e.type}${who !== '' ? ` ${who}` : ''}${e.task !== '' ? ` task ${e.task}` : ''}${e.text !== '' ? `: ${e.text}` : ''}`
}

export function registerMeshCommands(program: Command): void {
  command(
    program,
    'status',
    'you (held tasks, unread), the goal, the tasks in play and their holders, live peers, the tests: compact; --full for everything'
  )
    .option('--set <text>', 'set your own status line ("what I am doing") first')
    .option('--full', 'every task and peer in full')
    .action(
      withAgency(async (agency, opts: CommonOpts & { set?: string; full?: boolean }) => {
        if (opts.set != null) await agency.call((c: AgencyClient) => c.setStatusLine, { status: opts.set })
        const s = await agency.call((c: AgencyClient) => c.getStatus, {})
        if (opts.full === true) {
          if (opts.json === true) printJson(s)
          else printStatus(s)
          return
        }
        const d = statusDigest(s)
        if (opts.json === true) printJson(d)
        else for (const l of digestLines(d)) line(l)
      })
    )

  command(program, 'peers', 'the peers this daemon knows, live or not')
    .option('--live', 'only live peers')
    .action(
      withAgency(async (agency, opts: CommonOpts & { live?: boolean }) => {
        const { peers } = await agency.call((c: AgencyClient) => c.listPeers, { includeOffline: opts.live !== true })
        if (opts.json === true) {
          printJson(peers)
          return
        }
        if (peers.length === 0) line('no peers seen yet')
        for (const p of peers) line(peerLine(p))
      })
    )

  command(program, 'send', 'send a direct message to a peer (by peer id or name); delivered exactly once, retried while the peer is away')
    .argument('<peer>', 'peer id or name')
    .argument('<text...>', 'the message')
    .option('--thread <id>', 'thread id (default: a new thread)')
    .option('--reply-to <id>', 'id of the message this answers')
    .action(
      withAgency(async (agency, peer: string, text: string[], opts: CommonOpts & { thread?: string; replyTo?: string }) => {
        const operator = await givenOperator(opts)
        if (operator !== undefined) {
          // signed as the operator, the recipient must be a peer id: a name is looked up here
          const { peers } = await agency.call((c: AgencyClient) => c.listPeers, { includeOffline: true })
          const to = peers.find(p => p.peerId === peer) ?? peers.find(p => p.name === peer)
          if (to === undefined) throw new Error(`no peer ${JSON.stringify(peer)} known to this daemon (agency peers)`)
          const r = await submitAction(agency, operator, { kind: 'message', to: to.peerId, text: text.join(' ') })
          if (opts.json === true) printJson(r)
          else line(`sent to ${to.peerId} as the operator`)
          return
        }
        const res = await agency.call((c: AgencyClient) => c.sendMessage, {
          to: peer,
          text: text.join(' '),
          thread: opts.thread ?? '',
          replyTo: opts.replyTo ?? ''
        })
        if (opts.json === true) printJson(res)
        else line(`queued ${res.id} to ${res.to}`)
      })
    )

  command(
    program,
    'inbox',
    "what you have not read yet: peers' messages and your daemon's notices (claim lost, overlap, review asked, integration result, goal changed); marks them read"
  )
    .option('--all', 'the history too (from --after), without marking anything read')
    .option('--peek', 'unread items, without marking them read')
    .option('--after <cursor>', 'with --all or --follow: only items after this cursor', '0')
    .option('--limit <n>', 'at most this many', '100')
    .option('--follow', 'keep printing new items as they arrive')
    .action(
      withAgency(async (agency, opts: CommonOpts & { after: string; limit: string; follow?: boolean; all?: boolean; peek?: boolean }) => {
        const after = Number(opts.after)
        if (!Number.isSafeInteger(after) || after < 0) throw new Error(`--after must be a cursor (a whole number), got "${opts.after}"`)
        if (opts.follow === true) {
          for await (const m of agency.stream((c: AgencyClient, m) => c.watchInbox({ after }, m))) {
            if (opts.json === true) process.stdout.write(JSON.stringify(m) + '\n')
            else line(messageLine(m))
          }
          return
        }
        const { messages, unread } = await agency.call((c: AgencyClient) => c.readInbox, {
          after,
          limit: Number(opts.limit),
          all: opts.all === true,
          peek: opts.peek === true
        })
        if (opts.json === true) {
          printJson(messages)
          return
        }
        if (messages.length === 0) line(opts.all === true ? 'inbox empty' : 'nothing unread')
        for (const m of messages) line(messageLine(m))
        if (unread > 0) line(`(${unread} more unread: agency inbox again)`)
      })
    )

  command(program, 'announce', 'broadcast a message to the whole swarm')
    .argument('<text...>', 'the announcement')
    .action(
      withAgency(async (agency, text: string[], opts: CommonOpts) => {
        const res = await agency.call((c: AgencyClient) => c.announce, { text: text.join(' ') })
        if (opts.json === true) printJson(res)
        else line(`announced ${res.id}`)
      })
    )

  command(program, 'events', 'stream events: peers joining and leaving, announcements, messages, claims, overlaps')
    .option('--follow', 'keep streaming (the default; events are live only)')
    .action(
      withAgency(async (agency, opts: CommonOpts) => {
        for await (const e of agency.stream((c: AgencyClient, m) => c.watchEvents({}, m))) {
          if (opts.json === true) process.stdout.write(JSON.stringify(e) + '\n')
          else line(eventLine(e))
        }
      })
    )
}
