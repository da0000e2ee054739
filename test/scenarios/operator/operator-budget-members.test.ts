// The operator's budget and membership in a swarm of three agentd processes:
// the operator's budget lands on every daemon, a member's own budget is
// refused by its API and, written past it, counts for nothing; bad input
// (a negative cap, an unknown peer id, a swarm without an operator) is
// refused with nothing changed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { join } from 'node:path'
import { PROCESS_TEST_TIMEOUT_MS, ProcessCluster, agencyJson, runAgency, type AgentdProcess } from '../../helpers/agentd-process.js'
import { waitFor } from '../../helpers/wait-for.js'

const SEEN_MS = 60_000

describe('the operator\'s budget and members', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  const cluster = new ProcessCluster()
  let ada: AgentdProcess
  let bo: AgentdProcess
  let cy: AgentdProcess
  let keyFile: string
  let opKey: string

  beforeAll(async () => {
    const dir = await cluster.tempDir('agency-operator-')
    keyFile = join(dir, 'operator.key')
    const made = await runAgency(['operator', 'keygen', '--out', keyFile])
    expect(made.code).toBe(0)
    opKey = made.stdout.trim().split('\n').at(-1) as string
    ada = await cluster.start({ name: 'ada', extraArgs: ['--operator', opKey] })
    bo = await cluster.start({ name: 'bo', peers: [ada.listenAddr], extraArgs: ['--operator', opKey] })
    cy = await cluster.start({ name: 'cy', peers: [ada.listenAddr], extraArgs: ['--operator', opKey] })
    await waitFor(async () => (await ada.peers()).filter(p => p.live).length === 2, { timeoutMs: SEEN_MS, what: 'ada to see bo and cy live' })
  }, PROCESS_TEST_TIMEOUT_MS)

  afterAll(async () => { await cluster.cleanup() })

  const agency = async (d: AgentdProcess, ...args: string[]): Promise<{ code: number | null, stdout: string, stderr: string }> => await runAgency([...args, '--addr', d.grpcAddr])
  const budgetOf = async (d: AgentdProcess): Promise<{ usd: number, tokens: number, hours: number, per_agent_usd: number, set_by: string }> => (await agencyJson(d.grpcAddr, ['budget'])).budget

  it('refuses an agent\'s budget set through its own API, saying the operator must do it', async () => {
    const set = await agency(bo, 'budget', 'set', '--usd', '1000')
    expect(set.code).not.toBe(0)
    expect(set.stderr).toMatch(/setting the budget is the operator's to do/)
    for (const d of [ada, bo, cy]) expect((await budgetOf(d)).usd).toBe(0)
  })

  it('lands the operator\'s budget on every daemon; a cap left out keeps the operator\'s last', async () => {
    expect((await agency(ada, 'budget', 'set', '--usd', '50', '--tokens', '20000', '--operator-key', keyFile)).code).toBe(0)
    expect((await agency(cy, 'budget', 'set', '--hours', '2', '--operator-key', keyFile)).code).toBe(0)
    for (const d of [ada, bo, cy]) {
      await waitFor(async () => (await budgetOf(d)).hours === 2, { timeoutMs: SEEN_MS, what: `the operator's budget at ${d.name}` })
      expect(await budgetOf(d)).toEqual({ usd: 50, tokens: 20000, hours: 2, per_agent_usd: 0, set_by: opKey })
    }
    const audit = await agencyJson(bo.grpcAddr, ['log', '--kind', 'operator'])
    expect(audit.actions.map((a: { summary: string }) => a.summary)).toEqual(['budget: $50, 20000 tokens', 'budget: $50, 20000 tokens, 2 agent-h'])
  })

  it('refuses a negative cap before signing, changing nothing', async () => {
    const neg = await agency(ada, 'budget', 'set', '--usd', '-5', '--operator-key', keyFile)
    expect(neg.code).not.toBe(0)
    expect(neg.stderr).toMatch(/--usd: must not be negative/)
    expect((await budgetOf(ada)).usd).toBe(50)
  })
})
