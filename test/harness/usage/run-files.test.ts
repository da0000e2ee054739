import { appendFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { providerAccount, readRunReport } from '../../../src/harness/usage/index.js'

let dir: string
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agency-usage-'))
})
afterEach(async () => {
  await rm(dir, { recursive: true, force: true })
})

const sample = async (name: string): Promise<string> => await readFile(join(import.meta.dirname, 'samples', name), 'utf8')

describe('reading a run back', () => {
  it("reads only this run's output from the harness log", async () => {
    const log = join(dir, 'harness.log')
    await writeFile(log, await sample('claude-ok.jsonl'))
    const from = Buffer.byteLength(await readFile(log, 'utf8'))
    await appendFile(log, '[time] agentd: starting claude\n' + (await sample('claude-429.jsonl')))
    const r = readRunReport({
      harness: 'claude',
      harnessLog: log,
      harnessDir: join(dir, 'harness'),
      outputFrom: from,
      startedAt: 0,
      now: 1
    })
    expect(r.usage).toEqual([])
    expect(r.limit?.kind).toBe('transient')
    const whole = readRunReport({
      harness: 'claude',
      harnessLog: log,
      harnessDir: join(dir, 'harness'),
      outputFrom: 0,
      startedAt: 0,
      now: 1
    })
    expect(whole.usage[0].outputTokens).toBe(20)
  })

  it("reads Copilot's usage file and removes it", async () => {
    const hd = join(dir, 'harness')
    await mkdir(join(hd, 'copilot-usage'), { recursive: true })
    await writeFile(join(hd, 'copilot-usage', 'copilot-usage.json'), await sample('copilot-usage.json'))
    const r = readRunReport({ harness: 'copilot', harnessLog: join(dir, 'none.log'), harnessDir: hd, outputFrom: 0, startedAt: 0, now: 1 })
    expect(r.usage[0]).toMatchObject({ model: 'gpt-5.5', inputTokens: 100, outputTokens: 10 })
    expect(existsSync(join(hd, 'copilot-usage', 'copilot-usage.json'))).toBe(false)
  })

  it("reads Pi's session files written during the run", async () => {
    const sessions = join(dir, 'harness', 'pi-sessions', 'x')
    await mkdir(sessions, { recursive: true })
    await writeFile(join(sessions, 's.jsonl'), await sample('pi-session.jsonl'))
    const r = readRunReport({
      harness: 'pi',
      harnessLog: join(dir, 'none.log'),
      harnessDir: join(dir, 'harness'),
      outputFrom: 0,
      startedAt: Date.now() - 60_000,
      now: 1
    })
    expect(r.usage[0]).toMatchObject({ model: 'scripted', inputTokens: 1383, outputTokens: 28 })
    const later = readRunReport({
      harness: 'pi',
      harnessLog: join(dir, 'none.log'),
      harnessDir: join(dir, 'harness'),
      outputFrom: 0,
      startedAt: Date.now() + 60_000,
      now: 1
    })
    expect(later.usage).toEqual([])
  })
})

describe('reading a Codex run back', () => {
  it("finds the session file the output names under $CODEX_HOME/sessions, on the run's day, and keeps it", async () => {
    const id = '01a2499d-fafe-7a01-be80-8b9c134d5fa9'
    const now = Date.parse('2026-12-08T01:06:02Z')
    const day = new Date(now)
    const sessions = join(
      dir,
      'codex',
      'sessions',
      String(day.getFullYear()),
      String(day.getMonth() + 1).padStart(2, '0'),
      String(day.getDate()).padStart(2, '0')
    )
    await mkdir(sessions, { recursive: true })
    const rollout = join(sessions, `rollout-2026-12-08T01-06-01-${id}.jsonl`)
    await writeFile(rollout, await sample('codex-rollout.jsonl'))
    await writeFile(join(sessions, 'rollout-2026-12-08T01-06-01-01a2532f-a627-7091-bc7e-0166db0415fb.jsonl'), '')
    const log = join(dir, 'harness.log')
    await writeFile(log, await sample('codex-human.txt'))
    const r = readRunReport({
      harness: 'codex',
      harnessLog: log,
      harnessDir: join(dir, 'harness'),
      outputFrom: 0,
      startedAt: now - 2000,
      now,
      codexHome: join(dir, 'codex')
    })
    expect(r.usage).toEqual([{ model: 'gpt-5.5', inputTokens: 100, cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens: 10, usd: null }])
    expect(existsSync(rollout)).toBe(true)
    // without the file: the human output's one total
    const none = readRunReport({
      harness: 'codex',
      harnessLog: log,
      harnessDir: join(dir, 'harness'),
      outputFrom: 0,
      startedAt: now - 2000,
      now,
      codexHome: join(dir, 'elsewhere')
    })
    expect(none.usage).toEqual([
      { model: 'gpt-5.5', inputTokens: 110, cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens: 0, usd: null }
    ])
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
