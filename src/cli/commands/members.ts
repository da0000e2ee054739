// agency members | member allow | member remove: who may be a member of a
// swarm with an operator (docs/operator.md). The changes are the operator's
// signed actions; the daemon only carries them.
import { Option, type Command } from 'commander'
import type { Agency } from '../../client/agency.js'
import { InvalidArgumentError } from '../../core/errors.js'
import { NoOperatorError } from '../../core/operator/index.js'
import { authorKey } from '../../core/log/crypto.js'
import type { AgencyClient, ListMembersReply, MemberInfo } from '../../gen/agency/v1/api.js'
import { requireOperator, submitAction } from '../operator-client.js'
import { command, line, printJson, short, withAgency, type CommonOpts } from '../output.js'

async function members(agency: Agency): Promise<ListMembersReply> {
  return await agency.call((c: AgencyClient) => c.listMembers, {})
}

/** A member by peer id or by the name its heartbeats give; undefined when this daemon knows none such. */
function find(reply: ListMembersReply, who: string): MemberInfo | undefined {
  return reply.members.find(m => m.peerId === who) ?? reply.members.find(m => m.name !== '' && m.name === who)
}

/** The swarm must have an operator for `what`: a clear refusal otherwise, before anything is signed. */
function needOperator(reply: ListMembersReply, what: string): void {
  if (reply.operators.length === 0) throw new NoOperatorError(what)
}

function memberLine(m: MemberInfo): string {
  const marks = [m.self ? 'this daemon' : '', m.live ? 'live' : '', m.allowed ? 'allowed' : '', m.removed ? 'REMOVED' : ''].filter(
    x => x !== ''
  )
  return `${(m.name !== '' ? m.name : short(m.peerId)).padEnd(12)} ${m.peerId}  seq ${m.headSeq}${marks.length > 0 ? `  (${marks.join(', ')})` : ''}`
}

export function registerMemberCommands(program: Command): void {
  command(
    program,
    'members',
    "the swarm's members as this daemon knows them, the operator's allow-list and the members the operator removed"
  ).action(
    withAgency(async (agency, opts: CommonOpts) => {
      const r = await members(agency)
      if (opts.json === true) {
        printJson(r)
        return
      }
      line(
        r.operators.length === 0
          ? 'operator: none (membership is --allow-peers alone)'
          : `allow-list: ${r.allowed.length === 0 ? 'none (any peer may join, --allow-peers aside)' : r.allowed.join(', ')}`
      )
      for (const x of r.removed)
        line(
          `removed: ${x.peerId} (its entries after seq ${x.afterSeq} count for nothing; by ${short(x.by)} at ${new Date(x.time).toISOString()})`
        )
      for (const m of r.members) line(memberLine(m))
    })
  )

  const member = program.command('member').description('as the operator: let peers into the swarm, or remove a member (docs/operator.md)')
  command(
    member,
    'allow',
    "as the operator: add peers to the swarm's allow-list; once there is one, only peers on it (or on a daemon's --allow-peers) may connect"
  )
    .argument('<peer...>', 'peer ids (or names of members this daemon knows)')
    .addOption(
      new Option(
        '--only',
        'the first allow-list holds only these peers (by default it also holds every member this daemon knows, so that none is cut off)'
      )
    )
    .action(
      withAgency(async (agency, who: string[], opts: CommonOpts & { only?: boolean }) => {
        const signer = await requireOperator(opts, "changing the swarm's members")
        const r = await members(agency)
        needOperator(r, 'an allow-list')
        const peers = who.map(w => {
          const m = find(r, w)
          if (m !== undefined) return m.peerId
          if (authorKey(w) === null)
            throw new InvalidArgumentError(
              `"${w}" is neither a peer id (12D3KooW...) nor the name of a member this daemon knows (agency members lists them)`
            )
          return w
        })
        const removed = peers.filter(p => r.removed.some(x => x.peerId === p))
        if (removed.length > 0)
          throw new InvalidArgumentError(
            `${removed.join(', ')} was removed by the operator, for good: a removed member cannot be let in again (a new identity can)`
          )
        const first = r.allowed.length === 0 && opts.only !== true
        const known = first ? r.members.filter(m => !m.removed).map(m => m.peerId) : []
        const all = [...new Set([...peers, ...known])].sort()
        const reply = await submitAction(agency, signer, { kind: 'member_allow', peers: all })
        if (opts.json === true) {
          printJson({ ...reply, allowed: all })
          return
        }
        line(
          `allowed ${peers.join(', ')}${known.length > 0 ? `, and the ${known.filter(p => !peers.includes(p)).length} other members this daemon knows (the first allow-list)` : ''}`
        )
      })
    )
  command(
    member,
    'remove',
    'as the operator: remove a member; every daemon refuses its connections, ignores what it writes from now on and hands its tasks to others'
  )
    .argument('<peer>', 'its peer id (or its name)')
    .action(
      withAgency(async (agency, who: string, opts: CommonOpts) => {
        const signer = await requireOperator(opts, 'removing a member')
        const r = await members(agency)
        needOperator(r, 'removing a member')
        const m = find(r, who)
        if (m === undefined)
          throw new InvalidArgumentError(`unknown peer id "${who}": this daemon knows no such member (agency members lists them)`)
        if (m.removed) throw new InvalidArgumentError(`${m.peerId} is removed already`)
        // what counts of its feed: what this daemon holds of it now
        const reply = await submitAction(agency, signer, { kind: 'member_remove', peers: [m.peerId], afterSeq: m.headSeq })
        if (opts.json === true) {
          printJson({ ...reply, afterSeq: m.headSeq })
          return
        }
        line(`removed ${m.name !== '' ? `${m.name} ` : ''}${m.peerId}: its entries after seq ${m.headSeq} count for nothing`)
      })
    )
}
