// What the agents start from: the task's cleanroom (its documentation and the
// reference executable, nothing of the hidden tests) in a new shared repository.
//
// The cleanroom is a directory: ProgramBench's cleanroom image's /workspace
// copied out, or <task>/cleanroom. Its `executable` is the reference; a task
// without one builds it with its build.sh in a copy of <task>/reference/ (the
// gold build, as ProgramBench builds it from the original source), and that
// build's hash is added to the clean hashes, so a submission cannot ship it.
//
// In the repository the reference sits at reference/executable, ./executable
// is git-ignored (compile.sh writes it), and for the scripted agent its
// recipes go in .sim/. Git keeps no execute-only mode: when the agents run in
// a sandbox, reference/executable is a symbolic link to REFERENCE_IN_BOX,
// where every box binds the reference execute-only (--sandbox-run-only), so
// the agents run it and never hold its bytes; without a sandbox it is the
// file itself (0755; the copy kept for scoring is 0555).
import { existsSync, statSync } from 'node:fs'
import { chmod, copyFile, cp, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, relative, resolve } from 'node:path'
import { InvalidArgumentError } from '../core/errors.js'
import { pushTreeToNewBare } from '../swarm/example-project.js'
import { scoringEnv, sha256File } from './score.js'
import { runShellStep } from './shell-step.js'
import type { TaskDir } from './task-dir.js'

/** Where the reference executable is in the agents' repository. */
export const REFERENCE_PATH = 'reference/executable'
/** Where each box has the reference, execute-only, when the agents run in a sandbox. */
export const REFERENCE_IN_BOX = '/run/agency/reference/executable'

export interface Cleanroom {
  dir: string
  /** the reference executable kept for this experiment (mode 0555) */
  reference: string
  referenceHash: string
  /** built with the task's build.sh, not taken from the cleanroom */
  built: boolean
  /** the cleanroom's files other than the executable, relative paths */
  files: string[]
}

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = []
  if (!existsSync(dir)) return out
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name)
    if (e.isDirectory()) out.push(...(await filesUnder(p)))
    else if (e.isFile()) out.push(p)
  }
  return out
}

/**
 * Finds or builds the reference executable into `workDir` and checks that the
 * cleanroom holds nothing of the hidden tests (no tests.json, no file equal to
 * one under the task's tests/).
 */
export async function prepareCleanroom(task: TaskDir, cleanroomArg: string | undefined, workDir: string): Promise<Cleanroom> {
  const dir = resolve(cleanroomArg ?? join(task.dir, 'cleanroom'))
  if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    throw new InvalidArgumentError(
      `no cleanroom at ${dir}: give --cleanroom DIR, the documentation and reference executable the agents get (for a ProgramBench task, /workspace of its cleanroom image: docker create programbench/<task>:task_cleanroom, then docker cp <container>:/workspace DIR)`
    )
  }
  const all = await filesUnder(dir)
  const files = all
    .map(f => relative(dir, f))
    .filter(f => f !== 'executable')
    .sort()
  const hidden = new Set<string>()
  // (empty files say nothing: an empty __init__.py is everywhere)
  for (const f of await filesUnder(join(task.dir, 'tests'))) if (statSync(f).size > 0) hidden.add(await sha256File(f))
  for (const f of all) {
    const rel = relative(dir, f)
    if (rel.split('/').includes('tests.json') || (statSync(f).size > 0 && hidden.has(await sha256File(f)))) {
      throw new InvalidArgumentError(
        `the cleanroom ${dir} holds ${rel}, which is part of the hidden tests: the agents must never see them; remove it from the cleanroom`
      )
    }
  }
  await mkdir(workDir, { recursive: true })
  const reference = join(workDir, 'reference-executable')
  let built = false
  if (existsSync(join(dir, 'executable'))) {
    await copyFile(join(dir, 'executable'), reference)
  } else if (task.buildScript != null && existsSync(join(task.dir, 'reference'))) {
    await buildReference(task, reference)
    built = true
  } else {
    throw new InvalidArgumentError(
      `the cleanroom ${dir} has no executable, and the task has no build.sh and reference/ to build one: put the reference executable at ${join(dir, 'executable')}`
    )
  }
  await chmod(reference, 0o555)
  return { dir, reference, referenceHash: await sha256File(reference), built, files }
}

async function buildReference(task: TaskDir, out: string): Promise<void> {
  const build = await mkdtemp(join(tmpdir(), 'agency-gold-'))
  try {
    await cp(join(task.dir, 'reference'), build, { recursive: true })
    await copyFile(task.buildScript as string, join(build, 'build.sh'))
    const r = await runShellStep({
      step: 'build_reference',
      command: 'chmod +x ./build.sh && ./build.sh',
      cwd: build,
      timeoutMs: 900_000,
      env: scoringEnv()
    })
    if (r.returncode !== 0 || !existsSync(join(build, 'executable'))) {
      throw new InvalidArgumentError(
        `building the reference executable with ${task.buildScript} failed (exit ${r.returncode}): ${r.output.trim().slice(-2000) || 'it left no ./executable'}`
      )
    }
    await copyFile(join(build, 'executable'), out)
  } finally {
    await rm(build, { recursive: true, force: true })
  }
}

export interface SeedOptions {
  bare: string
  cleanroom: Cleanroom
  /** the scripted agent's recipes (<task>/sim), for --harness sim */
  sim?: { dir: string; workScale: number }
  /** commit reference/executable as a link to this path in the box instead of its bytes */
  referenceInBox?: string
}

/** A new bare repository holding the cleanroom, the reference (or the link to it) at reference/executable and (for sim) .sim/. */
export async function seedExperimentRepo(o: SeedOptions): Promise<void> {
  const work = await mkdtemp(join(tmpdir(), 'agency-cleanroom-'))
  try {
    for (const f of o.cleanroom.files) {
      await mkdir(join(work, f, '..'), { recursive: true })
      await copyFile(join(o.cleanroom.dir, f), join(work, f))
    }
    await mkdir(join(work, 'reference'), { recursive: true })
    if (o.referenceInBox != null) await symlink(o.referenceInBox, join(work, REFERENCE_PATH))
    else {
      await copyFile(o.cleanroom.reference, join(work, REFERENCE_PATH))
      await chmod(join(work, REFERENCE_PATH), 0o755)
    }
    const ignore = existsSync(join(work, '.gitignore')) ? await readFile(join(work, '.gitignore'), 'utf8') : ''
    await writeFile(
      join(work, '.gitignore'),
      `${ignore}${ignore === '' || ignore.endsWith('\n') ? '' : '\n'}# built by compile.sh\n/executable\n__pycache__/\n`
    )
    if (o.sim != null) {
      await cp(o.sim.dir, join(work, '.sim'), { recursive: true })
      const projectFile = join(work, '.sim', 'project.json')
      const project = JSON.parse(await readFile(projectFile, 'utf8')) as Record<string, unknown>
      project.workScale = o.sim.workScale
      await writeFile(projectFile, JSON.stringify(project, null, 2) + '\n')
    }
    await pushTreeToNewBare(work, o.bare, 'cleanroom: the documentation and the reference executable')
  } finally {
    await rm(work, { recursive: true, force: true })
  }
}
