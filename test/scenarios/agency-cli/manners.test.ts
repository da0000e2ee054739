// The agency CLI as a shell user meets it: options before the command, a
// closed pipe, both ways of giving a title, and one clear line for bad input.
import { spawn } from 'node:child_process'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AGENCY_BIN, Scratch, execFileP } from '../../helpers/agent-loop.js'
import type { LocalDaemon } from '../../../src/swarm/local-daemon.js'
import { envWithoutAgency } from '../../helpers/agency-free-env.js'

const scratch = new Scratch()
let d: LocalDaemon

beforeAll(async () => {
  d = await scratch.daemon('manners')
})
afterAll(async () => {
  await scratch.cleanup()
})

async function agency(...args: string[]): Promise<string> {
  return (await execFileP(process.execPath, [AGENCY_BIN, ...args], { env: envWithoutAgency(), timeout: 30_000 })).stdout
}

describe('agency on the command line', () => {
  it('takes --addr and --json before the command as well as after it', async () => {
    const before = JSON.parse(await agency('--addr', d.grpc, '--json', 'status'))
    const after = JSON.parse(await agency('status', '--addr', d.grpc, '--json'))
    expect(before.you.id).toBe(d.peerId)
    expect(after.you.id).toBe(d.peerId)
  })

  it('adds a task with --title or with the title as words, and refuses both at once', async () => {
    await agency('--addr', d.grpc, 'task', 'add', 'titled', '--title', 'with a flag')
    await agency('--addr', d.grpc, 'task', 'add', 'worded', 'with', 'words', '--deps', 'titled')
    const tasks = JSON.parse(await agency('--addr', d.grpc, '--json', 'task', 'list')) as Array<{
      id: string
      title: string
      deps: string[]
    }>
    expect(tasks.find(t => t.id === 'titled')?.title).toBe('with a flag')
    expect(tasks.find(t => t.id === 'worded')).toMatchObject({ title: 'with words', deps: ['titled'] })
    await expect(agency('--addr', d.grpc, 'task', 'add', 'twice', 'a', '--title', 'b')).rejects.toThrow(/give the title once/)
    await expect(agency('--addr', d.grpc, 'task', 'add', 'orphan', '--deps', 'nowhere')).rejects.toThrow(
      /depends on nowhere, which is no task/
    )
  })

  it('exits quietly when the reader of its output goes away (status | head -1)', async () => {
    const plan = Array.from({ length: 300 }, (_, i) => ({
      id: `bulk-${i}`,
      title: `a task with a title long enough to fill the pipe ${i}`,
      deps: [],
      scope: [`bulk/${i}/**`]
    }))
    const child = spawn(process.execPath, [AGENCY_BIN, '--addr', d.grpc, 'task', 'add-plan', '-'], { env: envWithoutAgency() })
    child.stdin.end(JSON.stringify(plan))
    await new Promise(resolve => child.once('exit', resolve))
    const { stdout, stderr } = await execFileP(
      '/bin/sh',
      ['-c', `"${process.execPath}" "${AGENCY_BIN}" --addr "${d.grpc}" --json task list | head -c 100; echo " exit=\${PIPESTATUS:-done}"`],
      { env: envWithoutAgency(), timeout: 30_000 }
    )
    expect(stdout.length).toBeGreaterThan(100)
    expect(stderr).not.toMatch(/EPIPE|Error/)
    // The CLI's own exit status, with the pipe closed under it.
    const r = await execFileP(
      '/bin/bash',
      ['-o', 'pipefail', '-c', `"${process.execPath}" "${AGENCY_BIN}" --addr "${d.grpc}" --json task list | head -c 100 > /dev/null`],
      { env: envWithoutAgency(), timeout: 30_000 }
    ).then(
      () => 0,
      (e: { code?: number }) => e.code ?? 1
    )
    expect(r).toBe(0)
  })
})
