// An assistant lands through the integrator on the command line, with two real
// agentd processes and a real shared git repository: amy holds core and is the
// announced integrator; bob assists core, `agency request-integration`s his
// assist branch (refused, with the fix, while it has no commits of its own),
// amy's `agency integrator --once` lands it, core is done by bob, and both
// inboxes say so.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { join } from 'node:path'
import { AGENCY_BIN, Scratch, execFileP } from '../../helpers/agent-loop.js'
import { waitFor } from '../../helpers/wait-for.js'
import type { LocalDaemon } from '../../../src/swarm/local-daemon.js'
import { envWithoutAgency } from '../../helpers/agency-free-env.js'
import { commitFiles, makeSharedRepo, sh, type SharedRepo } from '../../repo/git-fixtures.js'

const scratch = new Scratch()
let repo: SharedRepo
let amy: LocalDaemon
let bob: LocalDaemon

beforeAll(async () => {
  repo = await makeSharedRepo()
  const mirrors = await scratch.dir('agency-mirrors-')
  const args = ['--settle-ms', '200', '--assist-after', '0', '--repo', repo.bare, '--mirror-dir', mirrors, '--wip-push', '0']
  amy = await scratch.daemon('amy', { extraArgs: args })
  bob = await scratch.daemon('bob', { extraArgs: args, peers: amy.addrs })
}, 60_000)

afterAll(async () => {
  await scratch.cleanup()
  await repo?.cleanup()
})

async function agency(d: LocalDaemon, ...args: string[]): Promise<string> {
  return (await execFileP(process.execPath, [AGENCY_BIN, '--addr', d.grpc, ...args], { env: envWithoutAgency(), timeout: 60_000 })).stdout
}

/** The CLI's failure: exit code and what it printed. */
async function failure(d: LocalDaemon, ...args: string[]): Promise<{ code: number; stderr: string }> {
  try {
    await agency(d, ...args)
  } catch (err) {
    const e = err as { code: number; stderr: string }
    return { code: e.code, stderr: e.stderr }
  }
  throw new Error(`agency ${args.join(' ')} succeeded`)
}

describe('agency request-integration from an assistant', () => {
  it('lands the assist branch through the announced integrator: the task is done by the assistant, and both are told', async () => {
    await agency(amy, 'goal', 'set', 'say hello', '--test', 'test ! -e broken.txt')
    await agency(amy, 'task', 'add', 'core', '--title', 'the core')
    await agency(amy, 'task', 'add', 'api', '--title', 'the api', '--dep', 'core')
    expect(await agency(amy, 'claim', 'core')).toContain('HELD core@1')
    await agency(amy, 'announce', 'integrating: use agency request-integration')

    await waitFor(async () => (await agency(bob, 'assist').catch(() => '')).includes('OFFER core@1'), { what: 'bob to be offered core' })
    expect(await agency(bob, 'assist', '--task', 'core', '--approach', 'write the greeting with printf')).toContain('ASSISTING core@1')

    const empty = await failure(bob, 'request-integration')
    expect(empty.code).not.toBe(0)
    expect(empty.stderr).toMatch(/your assist branch agency\/\S+\/core-assist-1 has no commits beyond main: commit your work/)

    const workspace = (await agency(bob, 'workspace', '--json').then(out => JSON.parse(out) as { path: string })).path
    await commitFiles(workspace, { [join('hello', 'hello.txt')]: 'hello\n' })
    const asked = await agency(bob, 'request-integration')
    expect(asked).toContain(`requested refs/agency/${bob.peerId}/core at `)
    expect(asked).toContain('agency wait')

    const ran = await waitFor(
      async () => {
        const out = await agency(amy, 'integrator', '--once')
        return out.includes('landed core') ? out : undefined
      },
      { what: "amy's integrator to land core" }
    )
    expect(ran).toContain('failed none')
    expect(await sh(repo.bare, ['log', '-1', '--format=%B', 'main'])).toContain(`Agency-Agent: ${bob.peerId}`)

    const bobInbox = await waitFor(
      async () => {
        const out = await agency(bob, 'inbox', '--all')
        return out.includes('core is done by you') ? out : undefined
      },
      { what: 'bob to be told core landed' }
    )
    expect(bobInbox).toContain("your assist's integration request for core@1 landed")
    const amyInbox = await waitFor(
      async () => {
        const out = await agency(amy, 'inbox', '--all')
        return out.includes(`done by ${bob.peerId} (an assistant)`) ? out : undefined
      },
      { what: 'amy to be told core was done by bob' }
    )
    expect(amyInbox).toContain('core')
    const shown = JSON.parse(await agency(amy, 'task', 'show', 'core', '--json')) as { state: string }
    expect(shown.state).toBe('done')
    expect(await agency(amy, 'ready')).toContain('api')
  }, 120_000)
})
