// What `agency swarm up` names a swarm after, and that a refused start leaves
// no directory behind (bad input changes nothing).
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { swarmNameFor, swarmUp } from '../../src/swarm/swarm.js'

const dirs: string[] = []
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true })
})

describe('swarm name', () => {
  it("is the repository directory's name, also for `--repo .` and a trailing slash", async () => {
    const root = await mkdtemp(join(tmpdir(), 'agency-name-'))
    dirs.push(root)
    const project = join(root, 'My Project')
    await mkdir(project)
    const cwd = process.cwd()
    process.chdir(project)
    try {
      expect(swarmNameFor('.', 'local')).toBe('my-project')
      expect(swarmNameFor('./', 'local')).toBe('my-project')
    } finally {
      process.chdir(cwd)
    }
    expect(swarmNameFor(`${project}/`, 'local')).toBe('my-project')
    expect(swarmNameFor(undefined, 'calc')).toBe('calc')
  })

  it('is the last part of a URL, without .git', () => {
    expect(swarmNameFor('git@github.com:team/Todo.git', 'local')).toBe('todo')
    expect(swarmNameFor('https://example.com/team/todo-app.git', 'local')).toBe('todo-app')
    expect(swarmNameFor('ssh://git@example.com/srv/repo.git/', 'local')).toBe('repo')
  })
})

describe('a refused swarm up', () => {
  it('leaves no directory behind, not even the parents it would have made', async () => {
    const root = await mkdtemp(join(tmpdir(), 'agency-refused-'))
    dirs.push(root)
    const dir = join(root, 'swarms', 'nothing')
    await expect(
      swarmUp({
        n: 2,
        dir,
        repo: join(root, 'no-such-repo'),
        goal: 'x',
        testCommand: 'true',
        harness: 'sim',
        swarm: 'nothing',
        agentdArgs: [],
        downWhenDone: true,
        timeoutMs: 1000,
        progress: () => {}
      })
    ).rejects.toThrow(/no-such-repo/)
    expect(existsSync(join(root, 'swarms'))).toBe(false)
  })
})
