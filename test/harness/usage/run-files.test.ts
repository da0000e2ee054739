import { appendFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { providerAccount, readRunReport } from '../../../src/harness/usage/index.js'

let dir: string
beforeEach(async () => { dir = await mkdtemp(join(tmpdir(), 'agency-usage-')) })
afterEach(async () => { await rm(dir, { recursive: true, force: true }) })

const sample = async (name: string): Promise<string> => await readFile(join(import.meta.dirname, 'samples', name), 'utf8')

describe('reading a run back', () => {
  it('reads only this run\'s output from the harness log', async () => {
    const log = join(dir, 'harness.log')
    await writeFile(log, await sample('claude-ok.jsonl'))
    const from = Buffer.byteLength(await readFile(log, 'utf8'))
    await appendFile(log, '[time] agentd: starting claude\n' + await sample('claude-429.jsonl'))
    const r = readRunReport({ harness: 'claude', harnessLog: log, harnessDir: join(dir, 'harness'), outputFrom: from, startedAt: 0, now: 1 })
    expect(r.usage).toEqual([])
    expect(r.limit?.kind).toBe('transient')
    const whole = readRunReport({ harness: 'claude', harnessLog: log, harnessDir: join(dir, 'harness'), outputFrom: 0, startedAt: 0, now: 1 })
    expect(whole.usage[0].outputTokens).toBe(20)
  })

  it('reads Copilot\'s usage file and removes it', async () => {
    const hd = join(dir, 'harness')
    await mkdir(join(hd, 'copilot-usage'), { recursive: true })
    await writeFile(join(hd, 'copilot-usage', 'copilot-usage.json'), await sample('copilot-usage.json'))
    const r = readRunReport({ harness: 'copilot', harnessLog: join(dir, 'none.log'), harnessDir: hd, outputFrom: 0, startedAt: 0, now: 1 })
    expect(r.usage[0]).toMatchObject({ model: 'gpt-5.5', inputTokens: 100, outputTokens: 10 })
    expect(existsSync(join(hd, 'copilot-usage', 'copilot-usage.json'))).toBe(false)
  })

  it('reads Pi\'s session files written during the run', async () => {
    const sessions = join(dir, 'harness', 'pi-sessions', 'x')
    await mkdir(sessions, { recursive: true })
    await writeFile(join(sessions, 's.jsonl'), await sample('pi-session.jsonl'))
    const r = readRunReport({ harness: 'pi', harnessLog: join(dir, 'none.log'), harnessDir: join(dir, 'harness'), outputFrom: 0, startedAt: Date.now() - 60_000, now: 1 })
    expect(r.usage[0]).toMatchObject({ model: 'scripted', inputTokens: 1383, outputTokens: 28 })
    const later = readRunReport({ harness: 'pi', harnessLog: join(dir, 'none.log'), harnessDir: join(dir, 'harness'), outputFrom: 0, startedAt: Date.now() + 60_000, now: 1 })
    expect(later.usage).toEqual([])
  })
})

describe('the provider account', () => {
  it('is the same for the same key and endpoint, different otherwise, and never holds the key', () => {
    const a = providerAccount('claude', { ANTHROPIC_API_KEY: 'sk-ant-one', ANTHROPIC_BASE_URL: 'http://x' })
    expect(providerAccount('claude', { ANTHROPIC_API_KEY: 'sk-ant-one', ANTHROPIC_BASE_URL: 'http://x', OTHER: '1' })).toBe(a)
    expect(providerAccount('acp:claude', { ANTHROPIC_API_KEY: 'sk-ant-one', ANTHROPIC_BASE_URL: 'http://x' })).toBe(a)
    expect(providerAccount('claude', { ANTHROPIC_API_KEY: 'sk-ant-two', ANTHROPIC_BASE_URL: 'http://x' })).not.toBe(a)
    expect(providerAccount('claude', { ANTHROPIC_API_KEY: 'sk-ant-one', ANTHROPIC_BASE_URL: 'http://y' })).not.toBe(a)
    expect(providerAccount('codex', { OPENAI_API_KEY: 'sk-ant-one' })).not.toBe(a)
    expect(a).toMatch(/^[0-9a-f]{32}$/)
    expect(a).not.toContain('sk-ant')
    expect(providerAccount('claude', {}, 'team-a')).toBe(providerAccount('codex', {}, 'team-a'))
  })
})
