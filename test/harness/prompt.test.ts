import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { promptTemplatePath, renderPrompt } from '../../src/harness/prompt.js'
import { InvalidArgumentError } from '../../src/core/errors.js'

const first = { agentId: '12D3KooWFirstAgentId', agentName: 'first-agent-name', agencyAddr: '127.0.0.1:7401' }
const second = { agentId: '12D3KooWSecondAgentId', agentName: 'second-agent-name', agencyAddr: '127.0.0.1:7402' }

function withoutIdentity(text: string, vars: typeof first): string {
  return text.replaceAll(vars.agentId, '<ID>').replaceAll(vars.agentName, '<NAME>').replaceAll(vars.agencyAddr, '<ADDR>')
}

describe('the shared prompt', () => {
  it('is identical for two agents except their id, name and daemon address', () => {
    const a = renderPrompt(first)
    const b = renderPrompt(second)
    expect(a).not.toBe(b)
    expect(a).toContain(first.agentId)
    expect(a).toContain(first.agentName)
    expect(a).toContain(first.agencyAddr)
    expect(a).not.toContain(second.agentId)
    expect(withoutIdentity(a, first)).toBe(withoutIdentity(b, second))
  })

  it('fills every placeholder of prompts/agent.md', () => {
    const template = readFileSync(promptTemplatePath(), 'utf8')
    expect(template).toContain('{{AGENT_ID}}')
    expect(renderPrompt(first)).not.toMatch(/\{\{|\}\}/)
  })

  it('explains the loop and the primitives with the CLI commands and MCP tools', () => {
    const text = renderPrompt(first)
    const loop = [
      'agency status',
      'agency ready',
      'agency claim',
      'agency send',
      'agency inbox',
      'agency find',
      'agency note',
      'agency integrate --background --task',
      'agency done',
      'agency release',
      'agency review request',
      'agency experts',
      'agency integrator',
      'agency announce',
      'agency events'
    ]
    for (const command of loop) expect(text).toContain(command)
    for (const kind of ['failure', 'discovery', 'bug', 'decision', 'note']) expect(text).toContain(kind)
    const tools = [
      'status',
      'ready',
      'add_task',
      'claim',
      'release',
      'done',
      'send_message',
      'read_inbox',
      'announce',
      'record_finding',
      'search_findings',
      'request_review',
      'verdict',
      'experts',
      'integrate'
    ]
    for (const tool of tools) expect(text).toContain(`\`${tool}\``)
    // The steps come in the order of the loop.
    const order = [
      '**Look.**',
      '**Pick and claim.**',
      '**Coordinate on overlap.**',
      '**Code and test.**',
      '**Integrate.**',
      '**Record what you learned.**',
      '**Next.**'
    ]
    const at = order.map(step => text.indexOf(step))
    expect(at.every(i => i >= 0)).toBe(true)
    expect([...at].sort((x, y) => x - y)).toEqual(at)
  })

  it('fills a given template, and refuses values that would change its shape', () => {
    expect(renderPrompt(first, 'I am {{AGENT_NAME}} ({{AGENT_ID}}) at {{AGENCY_ADDR}}.')).toBe(
      'I am first-agent-name (12D3KooWFirstAgentId) at 127.0.0.1:7401.'
    )
    expect(() => renderPrompt({ ...first, agentName: 'two\nlines' })).toThrow(InvalidArgumentError)
    expect(() => renderPrompt({ ...first, agentName: '{{AGENT_ID}}' })).toThrow(InvalidArgumentError)
    expect(() => renderPrompt({ ...first, agentId: '' })).toThrow(/agentId is empty/)
    expect(() => renderPrompt(first, 'hello {{NOT_A_FIELD}}')).toThrow(/unknown placeholder/)
  })
})
