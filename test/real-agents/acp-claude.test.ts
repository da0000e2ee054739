// `agentd --harness acp:claude`: agentd drives the real Claude ACP agent
// (@agentclientprotocol/claude-agent-acp, Claude Code inside) as one
// persistent session, against a scripted Anthropic Messages endpoint
// (models/anthropic-scripted.ts, the only stand-in) given the way a user
// gives Claude Code one: ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY. The swarm
// and what is asserted are acp-scenario.ts's (playAcpScenario), as for Codex.
import { afterEach, describe, it } from 'vitest'
import { Scratch } from '../agents/helpers.js'
import { isAgentdPrompt, playAcpScenario, scenarioModel, startAcpScenario, type AcpScenario, type ModelStep } from './acp-scenario.js'
import { GREETER, SCENARIO_TIMEOUT_MS, assertCli } from './greeter-scenario.js'
import { blocks, startAnthropicModel, type AnthropicModel, type AnthropicRequest, type Message } from './models/anthropic-scripted.js'

let scratch: Scratch | undefined
let model: AnthropicModel | undefined
let scenario: AcpScenario | undefined

afterEach(async () => {
  scenario?.close()
  await scratch?.cleanup()
  await model?.close()
  scratch = undefined
  model = undefined
  scenario = undefined
})

/** agentd's prompts in a user message (Claude Code adds its own <system-reminder> blocks around them). */
const promptsIn = (m: Message): string[] => m.role === 'user' ? blocks(m).filter(b => b.type === 'text' && isAgentdPrompt(b.text ?? '')).map(b => b.text ?? '') : []
function sinceLastPrompt (messages: Message[]): Message[] {
  for (let i = messages.length - 1; i >= 0; i--) if (promptsIn(messages[i]).length > 0) return messages.slice(i + 1)
  return messages
}
const step = (r: AnthropicRequest): ModelStep => ({
  prompts: (Array.isArray(r.body?.messages) ? r.body.messages as Message[] : []).flatMap(promptsIn),
  answered: r.turn?.answered,
  taken: r.turn?.taken ?? [],
  aborted: () => r.aborted === true,
  raw: () => JSON.stringify(r.body)
})

describe('agentd --harness acp:claude: the real Claude ACP agent in a persistent session with the swarm pushed into it', () => {
  it('claims over MCP, is cancelled when its claim is lost and told why, gets a peer\'s message in its next turn, and lands the task', async () => {
    assertCli('claude-agent-acp')
    const m = scenarioModel()
    model = await startAnthropicModel({ skills: GREETER.skills, turnInput: sinceLastPrompt, beforeAnswer: async rec => { await m.beforeAnswer(step(rec)) } })
    const url = model.url
    scratch = new Scratch()
    scenario = await startAcpScenario(scratch, {
      name: 'acp-claude',
      harness: 'acp:claude',
      setup: async () => ({ ANTHROPIC_BASE_URL: url, ANTHROPIC_API_KEY: 'not-a-real-key', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1' })
    })
    const requests = model.requests
    await playAcpScenario(scenario, m, { command: 'claude-agent-acp', claimCallTitle: /^mcp__agency__claim/, steps: () => requests.map(step), timeoutMs: SCENARIO_TIMEOUT_MS - 60_000 })
  }, SCENARIO_TIMEOUT_MS)
})
