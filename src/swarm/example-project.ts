// The example projects under examples/: a goal, a test command, tasks with
// dependencies and scopes, and a seed repository (with the scripted agent's
// recipes under .sim/).
import { readFile, cp, mkdir, mkdtemp, rm } from 'node:fs/promises'
import { existsSync } from 'node:fs'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { join } from 'node:path'
import { tmpdir } from 'node:os'
import { packageRoot } from '../harness/package-paths.js'
import { NotFoundError } from '../core/errors.js'

const run = promisify(execFile)

export interface ExampleTask {
  id: string
  title: string
  file: string
  scope: string[]
  deps: string[]
  priority: number
  approaches: string[]
}

export interface ExampleProject {
  name: string
  goal: string
  testCommand: string
  tasks: ExampleTask[]
  dir: string
}

export function examplesDir(): string {
  return join(packageRoot, 'examples')
}

export async function loadExample(name: string): Promise<ExampleProject> {
  const dir = join(examplesDir(), name)
  if (!existsSync(join(dir, 'project.json'))) throw new NotFoundError(`no example project "${name}" in ${examplesDir()}`)
  const p = JSON.parse(await readFile(join(dir, 'project.json'), 'utf8')) as Omit<ExampleProject, 'dir'>
  return { ...p, dir }
}

async function git(cwd: string, args: string[]): Promise<void> {
  await run('git', args, { cwd })
}

/** Creates a bare repository holding the example's seed (and .sim/ recipes), on branch main. */
export async function seedBareRepo(example: ExampleProject, bareDir: string): Promise<void> {
  const work = await mkdtemp(join(tmpdir(), 'agency-seed-'))
  try {
    await cp(join(example.dir, 'seed'), work, { recursive: true })
    await mkdir(join(work, '.sim'), { recursive: true })
    await cp(join(example.dir, 'project.json'), join(work, '.sim', 'project.json'))
    await cp(join(example.dir, 'recipes'), join(work, '.sim', 'recipes'), { recursive: true })
    await pushTreeToNewBare(work, bareDir, `seed: ${example.name}`)
  } finally {
    await rm(work, { recursive: true, force: true })
  }
}

/** Commits every file of `work` (a plain directory) and pushes it to a new bare repository at `bareDir`, on branch main. */
export async function pushTreeToNewBare(work: string, bareDir: string, message: string): Promise<void> {
  await git(work, ['init', '-q', '-b', 'main'])
  await git(work, ['add', '-A'])
  await git(work, ['-c', 'user.name=agency', '-c', 'user.email=agency@agency.invalid', 'commit', '-q', '-m', message])
  await mkdir(bareDir, { recursive: true })
  await git(bareDir, ['init', '-q', '--bare', '-b', 'main'])
  await git(work, ['push', '-q', bareDir, 'main'])
}
