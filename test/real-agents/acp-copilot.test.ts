// `agentd --harness acp:copilot`: agentd drives the real GitHub Copilot CLI
// 1.0 in its ACP mode (`copilot --acp`) as one persistent session, offline,
// against the scripted Responses endpoint the print-mode test uses (BYOK:
// COPILOT_PROVIDER_BASE_URL). The swarm and what is asserted are
// acp-scenario.ts's (playAcpScenario).
import { join } from 'node:path'
import { describe, it } from 'vitest'
import { responsesStep, sinceLastPrompt } from './acp-responses.js'
import { ACP_PLAYBOOK, ACP_SCENARIO_MS, acpLifecycle, playAcpScenario, scenarioModel } from './acp-scenario.js'
import { assertCli } from './greeter-scenario.js'
import { COPILOT_TOOLS, MODEL_ID, startResponsesModel } from './models/openai-responses.js'

const acp = acpLifecycle()

describe('agentd --harness acp:copilot: the real Copilot CLI over ACP in a persistent session with the swarm pushed into it', () => {
  it(
    "claims over MCP, is cancelled when its claim is lost and told why, gets a peer's message in its next turn, and lands the task",
    async () => {
      assertCli('copilot')
      const m = scenarioModel()
      const model = acp.model(
        await startResponsesModel({
          playbook: ACP_PLAYBOOK,
          dialect: COPILOT_TOOLS,
          turnInput: sinceLastPrompt,
          beforeAnswer: async rec => {
            await m.beforeAnswer(responsesStep(rec))
          }
        })
      )
      const baseUrl = model.baseUrl
      const scenario = await acp.start({
        name: 'acp-copilot',
        harness: 'acp:copilot',
        model: m,
        setup: async home => ({
          COPILOT_HOME: join(home, '.copilot'),
          COPILOT_OFFLINE: 'true',
          COPILOT_PROVIDER_BASE_URL: baseUrl,
          COPILOT_PROVIDER_WIRE_API: 'responses',
          COPILOT_MODEL: MODEL_ID
        })
      })
      const requests = model.requests
      await playAcpScenario(scenario, m, { command: 'copilot', claimCallTitle: /claim/, steps: () => requests.map(responsesStep) })
    },
    ACP_SCENARIO_MS
  )
})
