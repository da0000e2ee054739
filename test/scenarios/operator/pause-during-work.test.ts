// A pause while an agent works on a task: the work so far is pushed to the
// task's wip ref on the shared remote at once, the holder keeps its task
// through the pause, and after the resume it still holds the same task at the
// same epoch, its work where it was.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { execFile } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { PROCESS_TEST_TIMEOUT_MS, ProcessCluster, agencyJson, runAgency, type AgentdProcess } from '../../helpers/agentd-process.js'
import { waitFor } from '../../helpers/wait-for.js'
import { makeOperatorKey } from '../../helpers/operator-key.js'

const git = async (cwd: string, ...args: string[]): Promise<string> => (await promisify(execFile)('git', args, { cwd })).stdout.trim()
const SEEN_MS = 60_000

describe('a pause during work', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  const cluster = new ProcessCluster()
  let ada: AgentdProcess
  let keyFile: string
  let remote: string

  beforeAll(async () => {
    const dir = await cluster.tempDir('agency-pause-')
    remote = join(dir, 'shared.git')
    await git(dir, 'init', '--bare', '--initial-branch', 'main', remote)
    const seed = join(dir, 'seed')
    await git(dir, 'init', '--initial-branch', 'main', seed)
    await writeFile(join(seed, 'README.md'), 'calc\n')
    await git(seed, 'add', '.')
    await git(seed, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-m', 'seed')
    await git(seed, 'push', remote, 'main')
    const made = await makeOperatorKey(dir)
    keyFile = made.keyFile
    const key = made.opKey
    ada = await cluster.start({ name: 'ada', extraArgs: ['--operator', key, '--repo', remote, '--wip-push', '0'] })
    const op = async (...args: string[]): Promise<void> => {
      const r = await runAgency([...args, '--operator-key', keyFile, '--addr', ada.grpcAddr])
      if (r.code !== 0) throw new Error(r.stderr)
    }
    await op('goal', 'set', 'build calc', '--test', 'true')
    await op('task', 'add', 'lexer', 'the lexer')
  }, PROCESS_TEST_TIMEOUT_MS)

  afterAll(async () => {
    await cluster.cleanup()
  })

  it('pushes the work in progress to the wip ref, keeps the task through the pause, and carries on after the resume', async () => {
    const claim = await ada.agency<{ outcome: string; epoch: number; workspace: string }>('claim', 'lexer')
    expect(claim.outcome).toMatch(/HELD/)
    const ws = (await ada.status()).workspace
    await writeFile(join(ws, 'lexer.mjs'), 'export const lex = s => s.split(" ")\n')
    await git(ws, 'add', '.')
    await git(ws, '-c', 'user.name=a', '-c', 'user.email=a@a', 'commit', '-m', 'lexer: a start')
    const head = await git(ws, 'rev-parse', 'HEAD')
    expect(await git(remote, 'for-each-ref', 'refs/agency/wip')).toBe('')

    expect((await runAgency(['pause', 'review', '--operator-key', keyFile, '--addr', ada.grpcAddr])).code).toBe(0)
    await waitFor(async () => (await git(remote, 'for-each-ref', '--format=%(objectname)', 'refs/agency/wip/lexer')) === head, {
      timeoutMs: SEEN_MS,
      what: 'the work on the wip ref'
    })
    const paused = await agencyJson(ada.grpcAddr, ['status'])
    expect(paused.paused).toBe(true)
    expect(paused.you.held).toEqual([expect.objectContaining({ id: 'lexer', epoch: claim.epoch })])
    expect((await ada.inbox()).some(m => m.kind === 'paused' && m.text.includes('the operator paused the swarm: review'))).toBe(true)

    expect((await runAgency(['resume', '--operator-key', keyFile, '--addr', ada.grpcAddr])).code).toBe(0)
    await waitFor(async () => (await agencyJson(ada.grpcAddr, ['status'])).paused === false, { timeoutMs: SEEN_MS, what: 'the resume' })
    const after = await agencyJson(ada.grpcAddr, ['status'])
    expect(after.you.held).toEqual([expect.objectContaining({ id: 'lexer', epoch: claim.epoch })])
    expect(await git(ws, 'rev-parse', 'HEAD')).toBe(head)
    await waitFor(async () => (await ada.inbox()).some(m => m.kind === 'resumed'), { timeoutMs: SEEN_MS, what: 'the resume notice' })
  })
})
