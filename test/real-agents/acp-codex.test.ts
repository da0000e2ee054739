// `agentd --harness acp:codex`: agentd drives the real Codex ACP agent
// (@zed-industries/codex-acp) as one persistent session, against a scripted
// Responses endpoint (models/openai-responses.ts, the only stand-in) set up
// the way a user sets up any provider ($HOME/.codex/config.toml, no login).
// The swarm is real: a peer daemon takes the task from the agent mid-turn
// (a claim race after a partition), writes to it and gives the task back.
//
// What is pinned: the first turn claims through MCP; the lost claim cancels the
// running turn (Codex aborts the model request) and the next turn tells the
// model why; a direct message that arrives during a turn does not cancel it and
// reaches the model in the first request of the next turn, once; every
// permission request is answered by agentd's policy; the task ends done with
// its commit on the shared branch, and the session is ended when the goal is met.
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { AgencyClient } from '../../src/gen/agency/v1/api.js'
import { Scratch } from '../agents/helpers.js'
import { waitFor } from '../helpers/wait-for.js'
import { PEER_MESSAGE, gate, metric, startAcpScenario, type AcpScenario } from './acp-scenario.js'
import { GREETER, SCENARIO_TIMEOUT_MS, assertCli, count, harnessLog, sharedFile, sharedHistory, statusOf } from './greeter-scenario.js'
import { MODEL_ID, startResponsesModel, type RecordedRequest, type ResponsesModel } from './models/openai-responses.js'
import { DONE_MESSAGE } from './models/scripted-agent.js'

let scratch: Scratch | undefined
let model: ResponsesModel | undefined
let scenario: AcpScenario | undefined

afterEach(async () => {
  scenario?.close()
  await scratch?.cleanup()
  await model?.close()
  scratch = undefined
  model = undefined
  scenario = undefined
})

function codexConfig (baseUrl: string): string {
  return [
    `model = "${MODEL_ID}"`,
    'model_provider = "scripted"',
    'check_for_update_on_startup = false',
    '',
    '[analytics]',
    'enabled = false',
    '',
    '[features]',
    'plugins = false',
    '',
    '[model_providers.scripted]',
    'name = "scripted model (test stand-in)"',
    `base_url = "${baseUrl}"`,
    'wire_api = "responses"',
    'env_key = "SCRIPTED_MODEL_KEY"',
    ''
  ].join('\n')
}

type Item = Record<string, any>
const userTexts = (input: Item[]): string[] => input.filter(i => i?.type === 'message' && i.role === 'user').map(i => (Array.isArray(i.content) ? i.content : []).map((c: Item) => String(c?.text ?? '')).join('\n'))
/** agentd's prompts in a request's input: the first turn's (with the session note) and every later one. */
const agentdPrompts = (r: RecordedRequest): string[] => userTexts(r.body?.input ?? []).filter(t => t.includes('## This session') || t.startsWith('[agentd]'))
/** The items since agentd's last prompt: the mind behind the model starts every turn afresh. */
const sinceLastPrompt = (input: unknown[]): unknown[] => {
  for (let i = input.length - 1; i >= 0; i--) {
    const item = input[i] as Item
    if (item?.type === 'message' && item.role === 'user' && userTexts([item]).some(t => t.includes('## This session') || t.startsWith('[agentd]'))) return input.slice(i + 1)
  }
  return input
}

describe('agentd --harness acp:codex: the real Codex ACP agent in a persistent session with the swarm pushed into it', () => {
  it('claims over MCP, is cancelled when its claim is lost and told why, gets a peer\'s message in its next turn, and lands the task', async () => {
    assertCli('codex-acp')
    const heldAtWrite = gate<RecordedRequest>()
    const atSecondReady = gate()
    const messageArrived = gate()
    const released = gate()
    model = await startResponsesModel({
      skills: GREETER.skills,
      turnInput: sinceLastPrompt,
      beforeAnswer: async rec => {
        const turn = agentdPrompts(rec).length
        const step = rec.turn?.answered
        if (turn === 1 && step?.kind === 'write' && !heldAtWrite.opened()) {
          // Mid-turn: hold the model here until the claim is lost (the agent should then cancel this request).
          heldAtWrite.open(rec)
          await new Promise(() => {})
        }
        // Turn 2 has read its inbox: a message arrives now, before the turn goes on (B still holds greet).
        if (turn === 2 && step?.kind === 'agency' && step.tool === 'ready' && !atSecondReady.opened()) {
          atSecondReady.open()
          await messageArrived.promise
        }
        // Turn 3 (the message) looks for work once B has given greet back.
        if (turn === 3 && step?.kind === 'agency' && step.tool === 'ready') await released.promise
      }
    })
    const baseUrl = model.baseUrl
    scratch = new Scratch()
    scenario = await startAcpScenario(scratch, {
      name: 'acp-codex',
      harness: 'acp:codex',
      setup: async home => {
        await mkdir(join(home, '.codex'), { recursive: true })
        await writeFile(join(home, '.codex', 'config.toml'), codexConfig(baseUrl))
        return { CODEX_HOME: join(home, '.codex'), SCRIPTED_MODEL_KEY: 'not-a-real-key' }
      }
    })
    const { a } = scenario
    const explain = async (): Promise<string> => `harness.log:\n${(await harnessLog(a)).slice(-6000)}`

    // ---- turn 1: the agent claims greet through MCP and is held at its write ----
    const held = await Promise.race([heldAtWrite.promise, waitFor(async () => /session failed|harness exited/.test(await harnessLog(a)) ? await explain() : undefined, { timeoutMs: SCENARIO_TIMEOUT_MS, intervalMs: 500 }).then(e => { throw new Error(e) })])
    const claim = held.turn?.taken.find(s => s.step.kind === 'agency' && s.step.tool === 'claim')
    expect(claim?.output).toMatch(/"outcome":\s*"HELD"/)

    // ---- the peer comes online: its earlier claim wins, A's turn is cancelled ----
    const b = await scenario.peerOnline()
    await waitFor(() => held.aborted === true, { timeoutMs: 120_000, what: 'Codex to abort the held model request after session/cancel' })
    await waitFor(async () => (await harnessLog(a)).includes('turn 1 ended: cancelled'), { timeoutMs: 60_000, what: 'turn 1 to end cancelled' })

    // ---- turn 2 tells the model why; a message arrives during it, which must wait for its end ----
    await atSecondReady.promise
    const peer = scenario.api(b)
    await waitFor(async () => { await peer.call((c: AgencyClient) => c.sendMessage, { to: a.peerId, text: PEER_MESSAGE, thread: '', replyTo: '' }); return true }, { timeoutMs: 60_000, what: 'B to send its message' })
    await waitFor(async () => (await statusOf(a)).unread > 0, { timeoutMs: 60_000, what: 'the message to reach A\'s inbox' })
    messageArrived.open()
    await waitFor(async () => (await harnessLog(a)).includes('turn 2 ended: end_turn'), { timeoutMs: 60_000, what: 'turn 2 to end' })
    // B gives the task back once A's turn 2 is over; A sees it open again.
    await peer.call((c: AgencyClient) => c.release, { task: GREETER.task.id, note: 'yours again', branch: '' })
    await waitFor(async () => (await scenario?.api(a).call((c: AgencyClient) => c.getTask, { id: GREETER.task.id }))?.task?.state === 'open', { timeoutMs: 60_000, what: 'A to see greet open again' })
    released.open()

    // ---- then the task is done, in a later turn, and the session is ended ----
    await waitFor(async () => (await harnessLog(a)).includes('the goal is met: ending the session') || /session failed/.test(await harnessLog(a)), { timeoutMs: SCENARIO_TIMEOUT_MS - 60_000, intervalMs: 500, what: 'the goal to be met' })
    const log = await harnessLog(a)
    expect(log, await explain()).not.toMatch(/session failed/)
    await waitFor(async () => (await harnessLog(a)).includes('agentd: work is done; not restarting the harness'), { timeoutMs: 60_000, what: 'the supervisor to finish' })

    const requests = model.requests.filter(r => r.turn != null)
    // The cancelled turn: the next request starts turn 2 with the reason and the claim_lost notice.
    const second = requests.find(r => agentdPrompts(r).length === 2)
    const told = agentdPrompts(second as RecordedRequest)[1]
    expect(told).toContain('[agentd] I stopped your previous turn')
    expect(told).toMatch(/notice claim_lost \(task greet\): your claim on greet@1 is lost \(outbid\)/)
    // The message came during turn 2 and did not stop it: turn 2 went on to its end without it...
    const turn2 = requests.filter(r => agentdPrompts(r).length === 2)
    expect(turn2.at(-1)?.turn?.answered.kind).toBe('finish')
    for (const r of turn2) expect(JSON.stringify(r.body.input)).not.toContain(PEER_MESSAGE)
    // ...and reached the model in the first request of turn 3, as its new prompt.
    const third = requests.find(r => agentdPrompts(r).length === 3) as RecordedRequest
    expect(agentdPrompts(third)[2]).toContain(`message from acp-codex-b (${b.peerId}): ${PEER_MESSAGE}`)
    const lastInput = JSON.stringify(requests.at(-1)?.body.input)
    expect(count(lastInput, new RegExp(PEER_MESSAGE.slice(0, 30)))).toBe(1) // delivered once
    expect((await statusOf(a)).unread).toBe(0)
    // One session the whole time: one start, one Codex process.
    expect(count(log, /agentd: starting codex-acp /)).toBe(1)
    expect(count(log, /agentd: session \S+ open in /)).toBe(1)

    // ---- the task: done by A at epoch 2, its commit on the shared branch ----
    const status = await statusOf(a)
    const task = status.tasks.find(t => t.id === GREETER.task.id)
    expect(task?.state).toBe('done')
    expect(task?.holder).toBe(a.peerId)
    expect(task?.epoch).toBe(2)
    expect(requests.at(-1)?.turn?.answered).toEqual({ kind: 'finish', text: DONE_MESSAGE })
    const history = await sharedHistory(scenario.repo)
    expect(history[0].message).toContain(`Agency-Task: ${GREETER.task.id}@2`)
    expect(await sharedFile(scenario.repo, 'src/greet.js')).toContain('Hello, ${name}!')

    // ---- permissions: every request answered by the policy, none denied ----
    const allowed = log.match(/agentd: permission allowed: .*/g) ?? []
    expect(allowed.some(l => /MCP agency\/claim/.test(l))).toBe(true)
    expect(allowed.some(l => /shell: node --test/.test(l))).toBe(true)
    expect(allowed.some(l => /edit .*src\/greet\.js \(inside the workspace\)/.test(l))).toBe(true)
    expect(log).not.toMatch(/permission denied/)

    // ---- visible: events and metrics ----
    const session = scenario.events.filter(e => e.type === 'session')
    expect(session.some(e => /^tool call: Tool: agency\/claim/.test(e.text))).toBe(true)
    expect(session.some(e => /^turn 1 ended: cancelled/.test(e.text))).toBe(true)
    expect(session.some(e => /^delivered 1 inbox item\(s\) into the session: message/.test(e.text))).toBe(true)
    const m = await scenario.metrics()
    expect(metric(m, 'agentd_harness_turns_total{stop_reason="cancelled"}')).toBe(1)
    expect(metric(m, 'agentd_harness_turns_total{stop_reason="end_turn"}')).toBeGreaterThanOrEqual(2)
    expect(metric(m, 'agentd_harness_tool_calls_total{kind="execute"}')).toBeGreaterThan(0)
    expect(metric(m, 'agentd_harness_permission_requests_total{decision="allowed"}')).toBe(allowed.length)
    expect(metric(m, 'agentd_harness_permission_requests_total{decision="denied"}')).toBe(0)
    expect(metric(m, 'agentd_harness_inbox_items_pushed_total')).toBeGreaterThanOrEqual(2)
  }, SCENARIO_TIMEOUT_MS)
})
