// A user's first swarm: their own working repository, a goal and a test
// command, no tasks. `agency swarm up` copies the repository into a bare shared
// one in the swarm's directory, the scripted agents plan the goal (one holds
// `plan` and adds the tasks) and build it, and `agency swarm export` brings the
// result back as a branch, leaving the user's working tree alone. Bad options
// leave nothing behind.
import { existsSync } from 'node:fs'
import { cp, mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { AGENCY_BIN, Scratch, execFileP } from '../helpers/agent-loop.js'
import { loadExample } from '../../src/swarm/example-project.js'
import { envWithoutAgency } from '../helpers/agency-free-env.js'

const scratch = new Scratch()
afterAll(async () => {
  await scratch.cleanup()
})

const gitEnv = { GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' }
function env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { ...envWithoutAgency(), ...gitEnv, ...extra }
}
async function git(cwd: string, ...args: string[]): Promise<string> {
  return (await execFileP('git', args, { cwd, env: env(), encoding: 'utf8' })).stdout.trim()
}
async function agency(args: string[], extraEnv: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await execFileP(process.execPath, [AGENCY_BIN, ...args], { env: env(extraEnv), timeout: 8 * 60_000, encoding: 'utf8' })
    return { code: 0, stdout: r.stdout, stderr: r.stderr }
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string }
    return { code: typeof e.code === 'number' ? e.code : 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' }
  }
}

/** The user's project: the calc example's seed (and the scripted agents' recipes) in an ordinary repository. */
async function userRepo(): Promise<{ dir: string; goal: string; test: string; files: string[] }> {
  const example = await loadExample('calc')
  const dir = join(await scratch.dir('agency-user-'), 'calc')
  await cp(join(example.dir, 'seed'), dir, { recursive: true })
  await mkdir(join(dir, '.sim'), { recursive: true })
  await cp(join(example.dir, 'project.json'), join(dir, '.sim', 'project.json'))
  await cp(join(example.dir, 'recipes'), join(dir, '.sim', 'recipes'), { recursive: true })
  await git(dir, 'init', '-q', '-b', 'trunk')
  await git(dir, 'add', '-A')
  await git(dir, '-c', 'user.name=user', '-c', 'user.email=user@example.invalid', 'commit', '-q', '-m', 'my project')
  return { dir, goal: example.goal, test: example.testCommand, files: example.tasks.map(t => t.file) }
}

describe('agency swarm up on your own repository, from a goal alone', () => {
  it(
    'plans, builds, meets the goal, and exports the result as a branch of your repository',
    async () => {
      const user = await userRepo()
      const head = await git(user.dir, 'rev-parse', 'HEAD')
      const swarmDir = join(await scratch.dir('agency-swarms-'), 'calc')
      const up = await agency([
        'swarm',
        'up',
        '-n',
        '3',
        '--repo',
        user.dir,
        '--goal',
        user.goal,
        '--test',
        user.test,
        '--harness',
        'sim',
        '--dir',
        swarmDir,
        '--down-when-done',
        '--timeout',
        '420'
      ])
      expect(up.code, `${up.stdout}\n${up.stderr}`).toBe(0)
      expect(up.stdout).toContain('the goal is met')
      expect(up.stdout).toContain('agency swarm export')
      expect(existsSync(join(swarmDir, 'shared.git'))).toBe(true)
      // The swarm worked on its own copy: the user's repository is as it was.
      expect(await git(user.dir, 'rev-parse', 'HEAD')).toBe(head)
      expect(await git(user.dir, 'status', '--porcelain')).toBe('')

      // The plan task was held once and done; the tasks it added were each done once.
      const shared = join(swarmDir, 'shared.git')
      const log = await git(shared, 'log', '--format=%B', 'trunk')
      const tasks = [...log.matchAll(/^Agency-Task: ([a-z0-9-]+)@\d+$/gm)].map(m => m[1])
      expect(new Set(tasks).size).toBe(tasks.length)
      expect(tasks).not.toContain('plan')

      const out = await agency(['swarm', 'export', '--dir', swarmDir])
      expect(out.code, out.stderr).toBe(0)
      expect(await git(user.dir, 'symbolic-ref', '--short', 'HEAD')).toBe('trunk')
      const files = (await git(user.dir, 'ls-tree', '-r', '--name-only', 'agency/calc')).split('\n')
      for (const f of user.files) expect(files).toContain(f)
    },
    9 * 60_000
  )

  it('refuses a directory that is not a repository, a goal without a test, and a harness that is not installed, leaving nothing', async () => {
    const root = await scratch.dir('agency-bad-')
    const plain = join(root, 'plain')
    await mkdir(plain)
    const dir = join(root, 'swarm')
    const notRepo = await agency(['swarm', 'up', '--repo', plain, '--goal', 'x', '--test', 'true', '--dir', dir])
    expect(notRepo.code).not.toBe(0)
    expect(notRepo.stderr).toMatch(/is not a git repository: run git init/)
    const noTest = await agency(['swarm', 'up', '--repo', plain, '--goal', 'x', '--dir', dir])
    expect(noTest.stderr).toMatch(/--goal needs --test/)
    const noHarness = await agency(['swarm', 'up', '--repo', plain, '--goal', 'x', '--test', 'true', '--harness', 'claude', '--dir', dir], {
      PATH: '/usr/bin:/bin'
    })
    expect(noHarness.stderr).toMatch(/"claude" is not installed.*npm install -g @anthropic-ai\/claude-code/)
    expect(existsSync(dir)).toBe(false)
  })
})
