// The shared prompt: one template (prompts/agent.md) for every agent, filled
// with the agent's id and name and its daemon's address, and nothing else.
// What the daemon says to the agent later (notices, refusals, next steps) is
// in core/agent-words.ts, in the prompt's words: a command named in both is
// spelled alike (test/core/agent-words.test.ts checks it).
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { packageRoot } from './package-paths.js'
import { AgencyError, InvalidArgumentError } from '../core/errors.js'

export interface PromptVars {
  agentId: string
  agentName: string
  agencyAddr: string
}

const PLACEHOLDERS: Record<string, keyof PromptVars> = {
  '{{AGENT_ID}}': 'agentId',
  '{{AGENT_NAME}}': 'agentName',
  '{{AGENCY_ADDR}}': 'agencyAddr'
}

let cached: string | undefined

export function promptTemplatePath(): string {
  return join(packageRoot, 'prompts', 'agent.md')
}

/** The prompt for one agent. `template` defaults to prompts/agent.md. */
export function renderPrompt(vars: PromptVars, template: string = loadTemplate()): string {
  for (const key of ['agentId', 'agentName', 'agencyAddr'] as const) {
    const value = vars[key]
    if (typeof value !== 'string' || value.trim() === '') throw new InvalidArgumentError(`prompt: ${key} is empty`)
    if (/[\r\n]|\{\{|\}\}/.test(value)) throw new InvalidArgumentError(`prompt: ${key} must be one line without "{{" or "}}"`)
  }
  const text = template.replace(/\{\{[A-Z_]+\}\}/g, placeholder => {
    const key = PLACEHOLDERS[placeholder]
    if (key == null) throw new AgencyError('INTERNAL', `prompt template has an unknown placeholder ${placeholder}`)
    return vars[key]
  })
  return text
}

function loadTemplate(): string {
  cached ??= readFileSync(promptTemplatePath(), 'utf8')
  return cached
}
