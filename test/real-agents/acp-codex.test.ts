// `agentd --harness acp:codex`: agentd drives the real Codex ACP agent
// (@zed-industries/codex-acp) as one persistent session, against a scripted
// Responses endpoint (models/openai-responses.ts, the only stand-in) set up
// the way a user sets up any provider ($HOME/.codex/config.toml, no login).
// The swarm is real: a peer daemon takes the task from the agent mid-turn (a
// claim race after a partition), writes to it and gives the task back; what
// is asserted is in acp-scenario.ts (playAcpScenario).
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, it } from 'vitest'
import { responsesStep, sinceLastPrompt } from './acp-responses.js'
import { ACP_PLAYBOOK, ACP_SCENARIO_MS, acpLifecycle, playAcpScenario, scenarioModel } from './acp-scenario.js'
import { assertCli } from './greeter-scenario.js'
import { CODEX_TOOLS, MODEL_ID, startResponsesModel } from './models/openai-responses.js'

const acp = acpLifecycle()

/** $HOME/.codex/config.toml: the scripted endpoint as a Responses provider; update check, analytics, plugins off (they leave loopback). */
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

describe('agentd --harness acp:codex: the real Codex ACP agent in a persistent session with the swarm pushed into it', () => {
  it('claims over MCP, is cancelled when its claim is lost and told why, gets a peer\'s message in its next turn, and lands the task', async () => {
    assertCli('codex-acp')
    const m = scenarioModel()
    const model = acp.model(await startResponsesModel({ playbook: ACP_PLAYBOOK, dialect: CODEX_TOOLS, turnInput: sinceLastPrompt, beforeAnswer: async rec => { await m.beforeAnswer(responsesStep(rec)) } }))
    const baseUrl = model.baseUrl
    const scenario = await acp.start({
      name: 'acp-codex',
      harness: 'acp:codex',
      model: m,
      setup: async home => {
        await mkdir(join(home, '.codex'), { recursive: true })
        await writeFile(join(home, '.codex', 'config.toml'), codexConfig(baseUrl))
        return { CODEX_HOME: join(home, '.codex'), SCRIPTED_MODEL_KEY: 'not-a-real-key' }
      }
    })
    const requests = model.requests
    await playAcpScenario(scenario, m, { command: 'codex-acp', claimCallTitle: /^Tool: agency\/claim/, steps: () => requests.map(responsesStep) })
  }, ACP_SCENARIO_MS)
})
