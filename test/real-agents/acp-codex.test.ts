// `agentd --harness acp:codex`: agentd drives the real Codex ACP agent
// (@zed-industries/codex-acp) as one persistent session, against a scripted
// Responses endpoint (models/openai-responses.ts, the only stand-in) set up
// the way a user sets up any provider ($HOME/.codex/config.toml, no login).
// The swarm is real: a peer daemon takes the task from the agent mid-turn (a
// claim race after a partition), writes to it and gives the task back; what
// is asserted is in acp-scenario.ts (playAcpScenario).
import { describe, it } from 'vitest'
import { responsesStep, sinceLastPrompt } from './acp-responses.js'
import { ACP_PLAYBOOK, ACP_SCENARIO_MS, acpLifecycle, playAcpScenario, scenarioModel } from './acp-scenario.js'
import { codexHome } from './codex-home.js'
import { assertCli } from './greeter-scenario.js'
import { CODEX_TOOLS, startResponsesModel } from './models/openai-responses.js'

const acp = acpLifecycle()

describe('agentd --harness acp:codex: the real Codex ACP agent in a persistent session with the swarm pushed into it', () => {
  it(
    "claims over MCP, is cancelled when its claim is lost and told why, gets a peer's message in its next turn, and lands the task",
    async () => {
      assertCli('codex-acp')
      const m = scenarioModel()
      const model = acp.model(
        await startResponsesModel({
          playbook: ACP_PLAYBOOK,
          dialect: CODEX_TOOLS,
          turnInput: sinceLastPrompt,
          beforeAnswer: async rec => {
            await m.beforeAnswer(responsesStep(rec))
          }
        })
      )
      const baseUrl = model.baseUrl
      const scenario = await acp.start({
        name: 'acp-codex',
        harness: 'acp:codex',
        model: m,
        setup: async home => await codexHome(home, baseUrl)
      })
      const requests = model.requests
      await playAcpScenario(scenario, m, {
        command: 'codex-acp',
        claimCallTitle: /^Tool: agency\/claim/,
        steps: () => requests.map(responsesStep)
      })
    },
    ACP_SCENARIO_MS
  )
})
