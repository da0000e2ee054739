// The scripted agent after a restart. The prompt says: "Your process may be
// stopped and restarted at any time ... carry on with any task you already
// hold." The supervisor restarts a crashed harness, but the daemon (the claim's
// holder) stayed live, so a task the agent held is neither open nor expired:
// unless the agent resumes it, nobody ever will and the swarm stalls.
//
// Each test prepares the board through one daemon run without a harness, as a
// crashed agent would have left it, then starts the same daemon (same data
// dir, same identity) with `--harness sim` and waits for the work to be done.
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { connectAgency, type Agency } from '../../../src/client/agency.js'
import { ClaimOutcome, type AgencyClient } from '../../../src/gen/agency/v1/api.js'
import { loadExample, seedBareRepo, type ExampleProject } from '../../../src/swarm/example-project.js'
import type { LocalDaemon } from '../../../src/swarm/local-daemon.js'
import { Scratch, execFileP } from '../../helpers/agent-loop.js'
import { waitFor } from '../../helpers/wait-for.js'

let scratch: Scratch

afterEach(async () => {
  await scratch?.cleanup()
})

interface Prepared {
  example: ExampleProject
  daemon: LocalDaemon
}

/** Runs `setup` against a harness-less daemon on the calc repository, then restarts it with the scripted agent. */
async function prepareThenRunSim(name: string, setup: (api: Agency, example: ExampleProject) => Promise<void>): Promise<Prepared> {
  scratch = new Scratch()
  const example = await loadExample('calc')
  const dir = await scratch.dir(`agency-${name}-`)
  const repo = join(dir, 'repo.git')
  await seedBareRepo(example, repo)
  const flags = ['--repo', repo, '--mirror-dir', join(dir, 'mirrors'), '--settle-ms', '300']
  const first = await scratch.daemon(name, { extraArgs: flags })
  const api = connectAgency(first.grpc)
  try {
    await setup(api, example)
    await api.call((c: AgencyClient) => c.setGoal, { text: example.goal, files: ['README.md'], testCommand: example.testCommand })
  } finally {
    api.close()
  }
  expect(await first.stop('SIGTERM')).toBe(0)
  const daemon = await scratch.daemon(name, { dataDir: first.dataDir, extraArgs: [...flags, '--harness', 'sim'] })
  expect(daemon.peerId).toBe(first.peerId)
  return { example, daemon }
}

async function addTask(api: Agency, example: ExampleProject, id: string): Promise<void> {
  const t = example.tasks.find(x => x.id === id)
  if (t == null) throw new Error(`no task ${id} in the example`)
  await api.call((c: AgencyClient) => c.addTask, {
    id: t.id,
    title: t.title,
    description: `Write ${t.file}`,
    deps: t.deps,
    scope: t.scope,
    priority: t.priority
  })
}

async function claimHeld(api: Agency, task: string): Promise<void> {
  const r = await api.call((c: AgencyClient) => c.claim, { task, scope: [], noWait: false }, 60_000)
  expect(r.outcome).toBe(ClaimOutcome.CLAIM_HELD)
}

async function waitAllDone(d: LocalDaemon, ids: string[]): Promise<void> {
  const api = connectAgency(d.grpc)
  try {
    await waitFor(
      async () => {
        const { tasks } = await api.call((c: AgencyClient) => c.listTasks, { state: '' })
        const states = ids.map(id => `${id}:${tasks.find(t => t.id === id)?.state ?? 'missing'}`)
        if (states.every(s => s.endsWith(':done'))) return true
        throw new Error(states.join(' '))
      },
      { what: `tasks ${ids.join(', ')} to be done by the restarted scripted agent`, timeoutMs: 120_000, intervalMs: 500 }
    )
  } catch (err) {
    const log = await readFile(join(d.dataDir, 'harness.log'), 'utf8').catch(() => '')
    const lines = log.split('\n').filter(l => !l.includes('nothing ready'))
    throw new Error(`${(err as Error).message}\n--- harness.log (without the idle lines) ---\n${lines.slice(-30).join('\n')}`, {
      cause: err
    })
  } finally {
    api.close()
  }
}

describe('the scripted agent, restarted', () => {
  it('carries on with a task its agent already holds', async () => {
    const { daemon } = await prepareThenRunSim('resumer', async (api, example) => {
      await addTask(api, example, 'ast')
      await addTask(api, example, 'errors')
      // Held by this agent when its harness "crashed": not ready for anyone, itself included.
      await claimHeld(api, 'ast')
    })
    await waitAllDone(daemon, ['ast', 'errors'])
  }, 240_000)

  it('finishes a task whose branch already holds the approach\'s commit (no "nothing to commit" crash)', async () => {
    const { daemon } = await prepareThenRunSim('retrier', async (api, example) => {
      await addTask(api, example, 'ast')
      await claimHeld(api, 'ast')
      // What an earlier attempt leaves: the approach committed on the task branch, then
      // the task given back with that branch (e.g. after a contended integrate).
      const ws = await api.call((c: AgencyClient) => c.getWorkspace, { task: 'ast' }, 120_000)
      const source = await readFile(join(example.dir, 'recipes', 'ast', 'plain-objects.mjs'), 'utf8')
      await mkdir(join(ws.path, 'src'), { recursive: true })
      await writeFile(join(ws.path, 'src', 'ast.mjs'), source)
      await execFileP('git', ['add', '--', 'src/ast.mjs'], { cwd: ws.path })
      await execFileP(
        'git',
        ['-c', 'user.name=earlier', '-c', 'user.email=earlier@agency.invalid', 'commit', '-q', '-m', 'ast: plain-objects'],
        { cwd: ws.path }
      )
      await api.call((c: AgencyClient) => c.release, { task: 'ast', note: 'integrate was contended; try again', branch: ws.taskBranch })
    })
    await waitAllDone(daemon, ['ast'])
    const log = await readFile(join(daemon.dataDir, 'harness.log'), 'utf8')
    expect(log).not.toContain('Command failed: git commit')
  }, 240_000)
})
