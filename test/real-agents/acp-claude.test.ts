// `agentd --harness acp:claude`: agentd drives the real Claude ACP agent
// (@agentclientprotocol/claude-agent-acp, Claude Code inside) as one
// persistent session, against a scripted Anthropic Messages endpoint
// (models/anthropic-messages.ts, the only stand-in) given the way a user
// gives Claude Code one: ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY. The swarm
// and what is asserted are acp-scenario.ts's (playAcpScenario), as for Codex.
import { describe, it } from 'vitest'
import {
  ACP_PLAYBOOK,
  ACP_SCENARIO_MS,
  acpLifecycle,
  isAgentdPrompt,
  playAcpScenario,
  scenarioModel,
  type ModelStep
} from './acp-scenario.js'
import { assertCli } from './greeter-scenario.js'
import { CLAUDE_CODE_TOOLS, replay, type Conversation, type TakenStep } from './models/agent-script.js'
import { startAnthropicModel, type MessageParam, type RecordedRequest } from './models/anthropic-messages.js'

const acp = acpLifecycle()

const blocks = (m: MessageParam): Array<{ type: string; text?: string }> =>
  typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : Array.isArray(m.content) ? m.content : []
/** agentd's prompts in a user message (Claude Code adds its own <system-reminder> blocks around them). */
const promptsIn = (m: MessageParam): string[] =>
  m.role === 'user'
    ? blocks(m)
        .filter(b => b.type === 'text' && isAgentdPrompt(b.text ?? ''))
        .map(b => b.text ?? '')
    : []
/** The first user message (the prompt names the agent) and what came since agentd's last prompt. */
function sinceLastPrompt(messages: MessageParam[]): MessageParam[] {
  for (let i = messages.length - 1; i >= 0; i--)
    if (promptsIn(messages[i]).length > 0) return i === 0 ? messages : [messages[0], ...messages.slice(i)]
  return messages
}
/** The steps each conversation was read as, by its history (the endpoint keeps conv.history as the record's). */
const taken = new WeakMap<object, TakenStep[]>()
function decide(conv: Conversation): ReturnType<typeof replay>['move'] {
  const r = replay(conv, ACP_PLAYBOOK, CLAUDE_CODE_TOOLS)
  taken.set(conv.history, r.taken)
  return r.move
}
const step = (r: RecordedRequest): ModelStep => ({
  prompts: (Array.isArray(r.body?.messages) ? (r.body.messages as MessageParam[]) : []).flatMap(promptsIn),
  move: r.kind === 'turn' ? r.move : undefined,
  taken: taken.get(r.history) ?? [],
  aborted: () => r.aborted === true,
  raw: () => JSON.stringify(r.body)
})

describe('agentd --harness acp:claude: the real Claude ACP agent in a persistent session with the swarm pushed into it', () => {
  it(
    "claims over MCP, is cancelled when its claim is lost and told why, gets a peer's message in its next turn, and lands the task",
    async () => {
      assertCli('claude-agent-acp')
      const m = scenarioModel()
      const model = acp.model(
        await startAnthropicModel(decide, {
          turnInput: sinceLastPrompt,
          beforeAnswer: async rec => {
            await m.beforeAnswer(step(rec))
          }
        })
      )
      const url = model.url
      const scenario = await acp.start({
        name: 'acp-claude',
        harness: 'acp:claude',
        model: m,
        setup: async () => ({ ANTHROPIC_BASE_URL: url, ANTHROPIC_API_KEY: 'not-a-real-key', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1' })
      })
      const requests = model.requests
      await playAcpScenario(scenario, m, {
        command: 'claude-agent-acp',
        claimCallTitle: /^mcp__agency__claim/,
        steps: () => requests.map(step)
      })
    },
    ACP_SCENARIO_MS
  )
})
