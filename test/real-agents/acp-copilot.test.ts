// `agentd --harness acp:copilot`: agentd drives the real GitHub Copilot CLI
// 1.0 in its ACP mode (`copilot --acp`) as one persistent session, offline,
// against the scripted Responses endpoint the print-mode test uses (BYOK:
// COPILOT_PROVIDER_BASE_URL). The swarm and what is asserted are
// acp-scenario.ts's (playAcpScenario).
import { join } from 'node:path'
import { afterEach, describe, it } from 'vitest'
import { Scratch } from '../helpers/agent-loop.js'
import { responsesStep, sinceLastPrompt } from './acp-responses.js'
import { ACP_SCENARIO_MS, ACP_PLAYBOOK, playAcpScenario, scenarioModel, startAcpScenario, type AcpScenario } from './acp-scenario.js'
import { assertCli } from './greeter-scenario.js'
import { COPILOT_TOOLS, MODEL_ID, startResponsesModel, type ResponsesModel } from './models/openai-responses.js'

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

describe('agentd --harness acp:copilot: the real Copilot CLI over ACP in a persistent session with the swarm pushed into it', () => {
  it('claims over MCP, is cancelled when its claim is lost and told why, gets a peer\'s message in its next turn, and lands the task', async () => {
    assertCli('copilot')
    const m = scenarioModel()
    model = await startResponsesModel({ playbook: ACP_PLAYBOOK, dialect: COPILOT_TOOLS, turnInput: sinceLastPrompt, beforeAnswer: async rec => { await m.beforeAnswer(responsesStep(rec)) } })
    const baseUrl = model.baseUrl
    scratch = new Scratch()
    scenario = await startAcpScenario(scratch, {
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
  }, ACP_SCENARIO_MS)
})
