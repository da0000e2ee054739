// Reading the scripted Responses endpoint's requests (Codex, Copilot) as the
// ACP scenario's steps: agentd's prompts are user messages of the input.
import { isAgentdPrompt, type ModelStep } from './acp-scenario.js'
import type { RecordedRequest } from './models/openai-responses.js'

type Item = Record<string, any>
const userText = (i: Item): string | undefined =>
  i?.type === 'message' && i.role === 'user'
    ? (Array.isArray(i.content) ? i.content : []).map((c: Item) => String(c?.text ?? '')).join('\n')
    : undefined
const prompts = (input: Item[]): string[] => input.map(userText).filter((t): t is string => t != null && isAgentdPrompt(t))
/** The messages (the prompt among them), and the calls since agentd's last prompt: the mind starts every turn afresh. */
export function sinceLastPrompt(input: unknown[]): unknown[] {
  for (let i = input.length - 1; i >= 0; i--) {
    const t = userText(input[i] as Item)
    if (t != null && isAgentdPrompt(t)) return [...input.slice(0, i).filter(x => (x as Item)?.type === 'message'), ...input.slice(i)]
  }
  return input
}
export const responsesStep = (r: RecordedRequest): ModelStep => ({
  prompts: prompts(r.body?.input ?? []),
  move: r.turn?.move,
  taken: r.turn?.taken ?? [],
  aborted: () => r.aborted === true,
  raw: () => JSON.stringify(r.body)
})
