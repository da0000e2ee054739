// `agentd --harness acp:pi`: agentd drives the real Pi ACP adapter (npm pi-acp
// 0.0.24), which runs the real Pi 0.73 (`pi --mode rpc`, from
// node_modules/.bin on PATH), as one persistent session, against the scripted
// OpenAI-compatible endpoint of the print-mode test (models/openai-chat.ts, the
// only stand-in), named in the user's ~/.pi/agent/models.json. The swarm and
// what is asserted are acp-scenario.ts's, with two differences that are Pi's:
// - Pi has no MCP client, so every agency step is the `agency` command in
//   Pi's bash tool (the claim of turn 1 too), as in print mode and as the
//   prompt allows; session/new carries no MCP server.
// - Pi has no approvals and pi-acp asks for none: instead of the policy's
//   answers the scenario asserts that agentd was never asked. pi-acp gives
//   bash calls the ACP kind "other" (not "execute") and the title "bash".
// Everything else (the lost claim cancels the running turn and the next turn
// says why, the peer's message reaches the model once in the next turn, the
// task done at epoch 2 with its commit on the shared branch, one session) is
// the same.
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
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
import { PI_TOOLS, startChatStandIn, type ChatRequestRecord } from './models/openai-chat.js'

const acp = acpLifecycle()

const text = (content: unknown): string =>
  typeof content === 'string'
    ? content
    : Array.isArray(content)
      ? content.map((p: any) => (typeof p?.text === 'string' ? p.text : '')).join('')
      : ''
const isPrompt = (m: any): boolean => m?.role === 'user' && isAgentdPrompt(text(m.content))
/**
 * The system and user messages (the first prompt names the agent), and the calls since agentd's last prompt: the mind starts every turn
 * afresh.
 */
function sinceLastPrompt(messages: any[]): any[] {
  for (let i = messages.length - 1; i >= 0; i--) {
    if (isPrompt(messages[i]))
      return [...messages.slice(0, i).filter(m => m?.role === 'system' || m?.role === 'user'), ...messages.slice(i)]
  }
  return messages
}
const step = (r: ChatRequestRecord): ModelStep => ({
  prompts: (Array.isArray(r.body?.messages) ? r.body.messages : []).filter(isPrompt).map((m: any) => text(m.content)),
  move: r.turn?.move,
  taken: r.turn?.taken ?? [],
  aborted: () => r.aborted === true,
  raw: () => JSON.stringify(r.body)
})

describe('agentd --harness acp:pi: the real Pi over its ACP adapter in a persistent session with the swarm pushed into it', () => {
  it(
    "claims with the agency CLI in bash, is cancelled when its claim is lost and told why, gets a peer's message in its next turn, and lands the task",
    async () => {
      assertCli('pi-acp')
      assertCli('pi')
      const m = scenarioModel()
      const model = acp.model(
        await startChatStandIn({
          playbook: ACP_PLAYBOOK,
          dialect: PI_TOOLS,
          turnInput: sinceLastPrompt,
          beforeAnswer: async rec => {
            await m.beforeAnswer(step(rec))
          }
        })
      )
      const { baseUrl, model: modelId } = model
      const scenario = await acp.start({
        name: 'acp-pi',
        harness: 'acp:pi',
        model: m,
        setup: async home => {
          // The user's own Pi configuration, as in the print-mode test; quietStartup: no start-up banner in the session.
          const agentDir = join(home, '.pi', 'agent')
          await mkdir(agentDir, { recursive: true })
          await writeFile(
            join(agentDir, 'models.json'),
            JSON.stringify({
              providers: { 'stand-in': { baseUrl, api: 'openai-completions', apiKey: 'anything', models: [{ id: modelId }] } }
            })
          )
          await writeFile(
            join(agentDir, 'settings.json'),
            JSON.stringify({ defaultProvider: 'stand-in', defaultModel: modelId, quietStartup: true })
          )
          // Nothing leaves loopback: PI_OFFLINE, no update check or telemetry in Pi; npm offline, for
          // pi-acp's `npm view` of Pi's latest version at session/new (it then finds none and says nothing).
          return { PI_OFFLINE: '1', npm_config_offline: 'true' }
        }
      })
      const requests = model.requests
      await playAcpScenario(scenario, m, {
        command: 'pi-acp',
        claimCallTitle: /^bash \(other\)$/,
        asksNoPermissions: true,
        shellKind: 'other',
        steps: () => requests.map(step)
      })
    },
    ACP_SCENARIO_MS
  )
})
