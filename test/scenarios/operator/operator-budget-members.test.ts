// The operator's budget and membership in a swarm of three agentd processes:
// the operator's budget lands on every daemon and an agent's own is refused
// by its API; a member the operator removes is removed on every daemon (gone
// from status, its connections refused, its task up for takeover) and an
// agent cannot remove one; the operator's allow-list admits the peers on it
// and no other; bad input (a negative cap, an unknown peer id, a swarm
// without an operator) is refused with nothing changed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { privateKeyToProtobuf } from '@libp2p/crypto/keys'
import { makeIdentity } from '../../helpers/identity.js'
import { PROCESS_TEST_TIMEOUT_MS, ProcessCluster, agencyJson, runAgency, type AgentdProcess } from '../../helpers/agentd-process.js'
import { waitFor } from '../../helpers/wait-for.js'
import type { AgencyClient, ListMembersReply, TaskView } from '../../../src/gen/agency/v1/api.js'
import { makeOperatorKey } from '../../helpers/operator-key.js'

const SEEN_MS = 60_000

describe("the operator's budget and members", { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  const cluster = new ProcessCluster()
  let ada: AgentdProcess
  let bo: AgentdProcess
  let cy: AgentdProcess
  let keyFile: string
  let opKey: string

  beforeAll(async () => {
    const dir = await cluster.tempDir('agency-operator-')
    ;({ keyFile, opKey } = await makeOperatorKey(dir))
    ada = await cluster.start({ name: 'ada', extraArgs: ['--operator', opKey] })
    bo = await cluster.start({ name: 'bo', peers: [ada.listenAddr], extraArgs: ['--operator', opKey] })
    cy = await cluster.start({ name: 'cy', peers: [ada.listenAddr], extraArgs: ['--operator', opKey] })
    await waitFor(async () => (await ada.peers()).filter(p => p.live).length === 2, {
      timeoutMs: SEEN_MS,
      what: 'ada to see bo and cy live'
    })
  }, PROCESS_TEST_TIMEOUT_MS)

  afterAll(async () => {
    await cluster.cleanup()
  })

  const agency = async (d: AgentdProcess, ...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> =>
    await runAgency([...args, '--addr', d.grpcAddr])
  // polled over gRPC: cheaper than a CLI process per try
  const task = async (d: AgentdProcess, id: string): Promise<TaskView | undefined> => {
    try {
      return (await d.api.call((c: AgencyClient) => c.getTask, { id })).task
    } catch {
      return undefined
    }
  }
  const membersOf = async (d: AgentdProcess): Promise<ListMembersReply> => await d.api.call((c: AgencyClient) => c.listMembers, {})
  const budgetOf = async (
    d: AgentdProcess
  ): Promise<{ usd: number; tokens: number; hours: number; per_agent_usd: number; set_by: string }> =>
    (await agencyJson(d.grpcAddr, ['budget'])).budget

  it("refuses an agent's budget set through its own API, saying the operator must do it", async () => {
    const set = await agency(bo, 'budget', 'set', '--usd', '1000')
    expect(set.code).not.toBe(0)
    expect(set.stderr).toMatch(/setting the budget is the operator's to do/)
    for (const d of [ada, bo, cy]) expect((await budgetOf(d)).usd).toBe(0)
  })

  it("lands the operator's budget on every daemon; a cap left out keeps the operator's last", async () => {
    expect((await agency(ada, 'budget', 'set', '--usd', '50', '--tokens', '20000', '--operator-key', keyFile)).code).toBe(0)
    expect((await agency(cy, 'budget', 'set', '--hours', '2', '--operator-key', keyFile)).code).toBe(0)
    for (const d of [ada, bo, cy]) {
      await waitFor(async () => (await d.api.call((c: AgencyClient) => c.getBudget, {})).budget?.hours === 2, {
        timeoutMs: SEEN_MS,
        what: `the operator's budget at ${d.name}`
      })
      expect(await budgetOf(d)).toEqual({ usd: 50, tokens: 20000, hours: 2, per_agent_usd: 0, set_by: opKey })
    }
    const audit = await agencyJson(bo.grpcAddr, ['log', '--kind', 'operator'])
    expect(audit.actions.map((a: { summary: string }) => a.summary)).toEqual([
      'budget: $50, 20000 tokens',
      'budget: $50, 20000 tokens, 2 agent-h'
    ])
  })

  it('refuses a negative cap before signing, changing nothing', async () => {
    const neg = await agency(ada, 'budget', 'set', '--usd', '-5', '--operator-key', keyFile)
    expect(neg.code).not.toBe(0)
    expect(neg.stderr).toMatch(/--usd: must not be negative/)
    expect((await budgetOf(ada)).usd).toBe(50)
  })

  it("refuses an agent's membership change through its own API, saying the operator must do it", async () => {
    const bare = await agency(bo, 'member', 'remove', cy.peerId)
    expect(bare.code).not.toBe(0)
    expect(bare.stderr).toMatch(/removing a member is the operator's to do: pass --operator-key/)
    // what an agent beside bo can read: its daemon's identity key, made into an "operator key" file
    const memberKeyFile = join(await cluster.tempDir('agency-member-key-'), 'member.key')
    const identity = await readFile(join(bo.dataDir, 'identity.key'))
    await writeFile(
      memberKeyFile,
      JSON.stringify({ kind: 'agency operator key', operator: bo.peerId, privateKey: identity.toString('base64') }),
      { mode: 0o600 }
    )
    const forged = await agency(bo, 'member', 'remove', cy.peerId, '--operator-key', memberKeyFile)
    expect(forged.code).not.toBe(0)
    expect(forged.stderr).toMatch(new RegExp(`the key ${bo.peerId} is not an operator of this swarm.*only the operator may do it`))
    for (const d of [ada, bo, cy]) expect((await membersOf(d)).removed).toEqual([])
  })

  it('refuses removing an unknown peer id, changing nothing', async () => {
    const stranger = (await makeIdentity()).id
    const res = await agency(ada, 'member', 'remove', stranger, '--operator-key', keyFile)
    expect(res.code).not.toBe(0)
    expect(res.stderr).toMatch(/unknown peer id/)
    const bad = await agency(ada, 'member', 'allow', 'not-a-peer-id', '--operator-key', keyFile)
    expect(bad.stderr).toMatch(/neither a peer id/)
    const members = await agencyJson(ada.grpcAddr, ['members'])
    expect(members.removed).toEqual([])
    expect(members.members.map((m: { peerId: string }) => m.peerId)).not.toContain(stranger)
    expect(members.allowed).toEqual([])
  })

  it('removes a member on every daemon: gone from status, its connections refused, its task up for takeover', async () => {
    expect((await agency(ada, 'task', 'add', 'parser', 'the parser', '--operator-key', keyFile)).code).toBe(0)
    await waitFor(async () => (await task(cy, 'parser')) !== undefined, { timeoutMs: SEEN_MS, what: 'the task at cy' })
    expect((await agency(cy, 'claim', 'parser')).code).toBe(0)
    for (const d of [ada, bo]) {
      await waitFor(async () => (await task(d, 'parser'))?.holder === cy.peerId, { timeoutMs: SEEN_MS, what: `cy's claim at ${d.name}` })
    }
    const removed = await agency(bo, 'member', 'remove', 'cy', '--operator-key', keyFile)
    expect(removed.code).toBe(0)
    expect(removed.stdout).toMatch(new RegExp(`removed cy ${cy.peerId}: its entries after seq \\d+ count for nothing`))
    for (const d of [ada, bo]) {
      await waitFor(async () => (await membersOf(d)).removed.some(r => r.peerId === cy.peerId), {
        timeoutMs: SEEN_MS,
        what: `the removal at ${d.name}`
      })
      await waitFor(async () => !(await d.peers()).some(p => p.peerId === cy.peerId), {
        timeoutMs: SEEN_MS,
        what: `cy gone from ${d.name}'s peers`
      })
      await waitFor(async () => (await task(d, 'parser'))?.state === 'expired', {
        timeoutMs: SEEN_MS,
        what: `cy's task up for takeover at ${d.name}`
      })
    }
    // cy is cut off: it hears from nobody, and the others take its task over
    await waitFor(async () => (await cy.peers()).every(p => !p.live && !p.connected), { timeoutMs: SEEN_MS, what: 'cy cut off' })
    expect((await agency(bo, 'claim', 'parser')).code).toBe(0)
    await waitFor(async () => (await task(ada, 'parser'))?.holder === bo.peerId, { timeoutMs: SEEN_MS, what: "bo's takeover at ada" })
    const audit = await agencyJson(ada.grpcAddr, ['log', '--kind', 'operator'])
    expect(audit.actions.filter((a: { verdict: string }) => a.verdict === 'accepted').at(-1).summary).toMatch(
      new RegExp(`^remove member ${cy.peerId}`)
    )
  })

  it('admits, once the operator keeps an allow-list, only the peers on it', async () => {
    const dee = await makeIdentity()
    const allowed = await agency(ada, 'member', 'allow', dee.id, '--operator-key', keyFile)
    expect(allowed.code).toBe(0)
    expect(allowed.stdout).toMatch(/and the \d+ other members this daemon knows \(the first allow-list\)/)
    await waitFor(async () => (await membersOf(bo)).allowed.includes(dee.id), { timeoutMs: SEEN_MS, what: 'the allow-list at bo' })
    const list = (await membersOf(bo)).allowed
    expect(list).toEqual(expect.arrayContaining([ada.peerId, bo.peerId, dee.id]))
    expect(list).not.toContain(cy.peerId)
    // eve, on no list, starts first; dee, on the operator's, joins
    const eve = await cluster.start({ name: 'eve', peers: [ada.listenAddr, bo.listenAddr] })
    const deeDir = await cluster.tempDir('agency-dee-')
    await writeFile(join(deeDir, 'identity.key'), privateKeyToProtobuf(dee.privateKey), { mode: 0o600 })
    const deeProcess = cluster.onDataDir(deeDir, { name: 'dee', peers: [ada.listenAddr, bo.listenAddr] })
    await deeProcess.start()
    expect(deeProcess.peerId).toBe(dee.id)
    await waitFor(async () => (await ada.peers()).some(p => p.peerId === dee.id && p.live), { timeoutMs: SEEN_MS, what: 'dee live at ada' })
    await waitFor(async () => (await bo.peers()).some(p => p.peerId === dee.id && p.live), { timeoutMs: SEEN_MS, what: 'dee live at bo' })
    for (const d of [ada, bo]) expect((await d.peers()).some(p => p.peerId === eve.peerId)).toBe(false)
    expect((await eve.peers()).filter(p => p.connected)).toEqual([])
  })

  it('refuses membership changes on a swarm without an operator, changing nothing', async () => {
    const lone = await cluster.start({ name: 'lone' })
    const res = await agency(lone, 'member', 'remove', lone.peerId, '--operator-key', keyFile)
    expect(res.code).not.toBe(0)
    expect(res.stderr).toMatch(/needs an operator, and this swarm has none/)
    const allow = await agency(lone, 'member', 'allow', ada.peerId, '--operator-key', keyFile)
    expect(allow.stderr).toMatch(/needs an operator, and this swarm has none/)
    expect((await agencyJson(lone.grpcAddr, ['members'])).allowed).toEqual([])
  })
})
