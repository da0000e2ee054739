// agency integrate --background on the command line, with a real agentd
// process and a real shared git repository: the answer comes at once (exit 0),
// claim --next gives the agent its next task while the first is on its way,
// and the daemon lands the first and marks it done.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AGENCY_BIN, Scratch, execFileP } from '../../helpers/agent-loop.js'
import { waitFor } from '../../helpers/wait-for.js'
import type { LocalDaemon } from '../../../src/swarm/local-daemon.js'
import { envWithoutAgency } from '../../helpers/agency-free-env.js'
import { commitFiles, makeSharedRepo, sh, type SharedRepo } from '../../repo/git-fixtures.js'

const scratch = new Scratch()
let repo: SharedRepo
let amy: LocalDaemon

beforeAll(async () => {
  repo = await makeSharedRepo()
  const mirrors = await scratch.dir('agency-mirrors-')
  amy = await scratch.daemon('amy', { extraArgs: ['--settle-ms', '200', '--repo', repo.bare, '--mirror-dir', mirrors, '--wip-push', '0'] })
}, 60_000)

afterAll(async () => {
  await scratch.cleanup()
  await repo?.cleanup()
})

async function agency(d: LocalDaemon, ...args: string[]): Promise<string> {
  return (await execFileP(process.execPath, [AGENCY_BIN, '--addr', d.grpc, ...args], { env: envWithoutAgency(), timeout: 60_000 })).stdout
}

describe('agency integrate --background', () => {
  it('answers at once, leaves the agent free for claim --next, and lands the task, done by its daemon', async () => {
    await agency(amy, 'goal', 'set', 'say hello', '--test', 'test -e core/core.txt')
    await agency(amy, 'task', 'add', 'core', '--title', 'the core')
    await agency(amy, 'task', 'add', 'docs', '--title', 'the docs')
    expect(await agency(amy, 'claim', 'core')).toContain('HELD core@1')
    const workspace = (JSON.parse(await agency(amy, 'workspace', '--json')) as { path: string }).path
    await commitFiles(workspace, { 'core/core.txt': 'core\n' })

    const answer = await agency(amy, 'integrate', '--background', '--task', 'core')
    expect(answer).toContain('accepted: core@1')
    expect(answer).toContain('claim --next')
    expect(await agency(amy, 'claim', '--next')).toContain('HELD docs@1')

    await waitFor(
      async () =>
        (JSON.parse(await agency(amy, '--json', 'task', 'list')) as Array<{ id: string; state: string }>).find(t => t.id === 'core')
          ?.state === 'done'
          ? true
          : undefined,
      { what: 'core to be done' }
    )
    expect(await sh(repo.bare, ['log', '-1', '--format=%B', 'main'])).toContain('Agency-Task: core@1')
  })
})
