// `agentd --harness acp:gemini`: agentd drives the real Gemini CLI 0.61 in its
// ACP mode (`gemini --acp`) as one persistent session, against the scripted
// Gemini API (models/gemini-api.ts, the only stand-in) that the print-mode test
// uses, reached through GOOGLE_GEMINI_BASE_URL with the Gemini API key login in
// the user's settings. The swarm and what is asserted are acp-scenario.ts's.
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
import { startGeminiStandIn, type GeminiRequestRecord } from './models/gemini-api.js'

const acp = acpLifecycle()

const promptsIn = (c: any): string[] =>
  c?.role === 'user'
    ? (Array.isArray(c.parts) ? c.parts : []).map((p: any) => (typeof p?.text === 'string' ? p.text : '')).filter(isAgentdPrompt)
    : []
/** The first user content (the prompt names the agent) and what came since agentd's last prompt. */
function sinceLastPrompt(contents: any[]): any[] {
  for (let i = contents.length - 1; i >= 0; i--)
    if (promptsIn(contents[i]).length > 0) return i === 0 ? contents : [contents[0], ...contents.slice(i)]
  return contents
}
const step = (r: GeminiRequestRecord): ModelStep => ({
  prompts: (Array.isArray(r.body?.contents) ? r.body.contents : []).flatMap(promptsIn),
  move: r.turn?.move,
  taken: r.turn?.taken ?? [],
  aborted: () => r.aborted === true,
  raw: () => JSON.stringify(r.body)
})

describe('agentd --harness acp:gemini: the real Gemini CLI over ACP in a persistent session with the swarm pushed into it', () => {
  it(
    "claims over MCP, is cancelled when its claim is lost and told why, gets a peer's message in its next turn, and lands the task",
    async () => {
      assertCli('gemini')
      const m = scenarioModel()
      const model = acp.model(
        await startGeminiStandIn({
          playbook: ACP_PLAYBOOK,
          turnInput: sinceLastPrompt,
          beforeAnswer: async rec => {
            await m.beforeAnswer(step(rec))
          }
        })
      )
      const url = model.url
      const scenario = await acp.start({
        name: 'acp-gemini',
        harness: 'acp:gemini',
        model: m,
        setup: async home => {
          // The user's settings: the Gemini API key login, and no usage statistics (nothing leaves loopback).
          await mkdir(join(home, '.gemini'), { recursive: true })
          await writeFile(
            join(home, '.gemini', 'settings.json'),
            JSON.stringify({ security: { auth: { selectedType: 'gemini-api-key' } }, privacy: { usageStatisticsEnabled: false } })
          )
          return { GEMINI_API_KEY: 'not-a-real-key', GOOGLE_GEMINI_BASE_URL: url, VITEST: '' }
        }
      })
      const turns = (): GeminiRequestRecord[] => model?.turns() ?? []
      await playAcpScenario(scenario, m, { command: 'gemini', claimCallTitle: /claim/, steps: () => turns().map(step) })
    },
    ACP_SCENARIO_MS
  )
})
