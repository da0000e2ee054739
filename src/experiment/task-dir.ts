// A task directory in ProgramBench's format, read and checked before anything
// runs: task.yaml (what the task is; eval_clean_hashes lists files a
// submission may not ship, such as the reference executable), tests.json (the
// test branches: each with its test names, whether the branch is ignored, and
// its ignored tests with reasons), and tests/<branch>/eval/run.sh with that
// branch's test files. The cleanroom (what the agents get: the documentation
// and the reference executable) is a directory of its own, <task>/cleanroom
// unless named.
import { existsSync, statSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { parse as parseYaml } from 'yaml'
import { InvalidArgumentError } from '../core/errors.js'

export interface IgnoredTest {
  name: string
  reasons: string[]
}

export interface TestBranch {
  id: string
  /** the tests.json names, "<classname>.<name>" as the JUnit XML gives them */
  tests: string[]
  ignored: boolean
  ignoreReason: string
  ignoredTests: IgnoredTest[]
  /** tests/<id>: copied over the workspace before the branch runs */
  dir: string
}

export interface TaskDir {
  dir: string
  /** the directory's name, ProgramBench's instance id */
  id: string
  info: { repository?: string; commit?: string; language?: string; difficulty?: string }
  /** sha256 (hex) of files removed from a submission before compile.sh runs */
  cleanHashes: string[]
  branches: TestBranch[]
  /** the branches that are scored (not `ignored`), in tests.json order */
  active: TestBranch[]
  /** "<branch>/<test>" of every ignored test */
  ignoredTests: Set<string>
  /** the task's gold build script (build.sh), if it has one */
  buildScript?: string
}

function need(cond: boolean, message: string): asserts cond {
  if (!cond) throw new InvalidArgumentError(message)
}

export async function loadTaskDir(dirArg: string): Promise<TaskDir> {
  const dir = resolve(dirArg)
  need(
    existsSync(dir) && statSync(dir).isDirectory(),
    `--task ${dirArg}: no such directory; give a ProgramBench task directory (task.yaml, tests.json, tests/<branch>/eval/run.sh)`
  )
  const yamlFile = join(dir, 'task.yaml')
  need(existsSync(yamlFile), `task directory ${dir} has no task.yaml: is it a ProgramBench task directory?`)
  let yaml: unknown
  try {
    yaml = parseYaml(await readFile(yamlFile, 'utf8')) ?? {}
  } catch (err) {
    throw new InvalidArgumentError(`${yamlFile} is not valid YAML: ${(err as Error).message}`)
  }
  need(
    typeof yaml === 'object' && yaml != null && !Array.isArray(yaml),
    `${yamlFile} must be a mapping (repository, commit, language, difficulty, eval_clean_hashes)`
  )
  const y = yaml as Record<string, unknown>
  const cleanHashes = y.eval_clean_hashes ?? []
  need(
    Array.isArray(cleanHashes) && cleanHashes.every(h => typeof h === 'string' && /^[0-9a-f]{64}$/.test(h)),
    `${yamlFile}: eval_clean_hashes must be a list of sha256 hex digests`
  )
  const str = (v: unknown): string | undefined => (typeof v === 'string' || typeof v === 'number' ? String(v) : undefined)

  const testsFile = join(dir, 'tests.json')
  need(
    existsSync(testsFile),
    `task directory ${dir} has no tests.json: the test branches and their test names are needed to score (ProgramBench's tasks have one beside task.yaml)`
  )
  let tests: unknown
  try {
    tests = JSON.parse(await readFile(testsFile, 'utf8'))
  } catch (err) {
    throw new InvalidArgumentError(`${testsFile} is not valid JSON: ${(err as Error).message}`)
  }
  const rawBranches = (tests as { branches?: unknown })?.branches
  need(
    typeof rawBranches === 'object' && rawBranches != null && !Array.isArray(rawBranches),
    `${testsFile} must hold {"branches": {"<branch>": {"tests": [...], "ignored_tests": [...]}}}`
  )
  const branches: TestBranch[] = []
  for (const [id, raw] of Object.entries(rawBranches as Record<string, unknown>)) {
    need(
      /^[A-Za-z0-9._-]+$/.test(id) && id !== '.' && id !== '..',
      `${testsFile}: branch name ${JSON.stringify(id)} is not a plain directory name`
    )
    const b = raw as Record<string, unknown>
    need(typeof b === 'object' && b != null, `${testsFile}: branch ${id} must be an object`)
    const names = b.tests ?? []
    need(
      Array.isArray(names) && names.every(n => typeof n === 'string'),
      `${testsFile}: branch ${id}: "tests" must be a list of test names`
    )
    const ignoredTests = b.ignored_tests ?? []
    need(Array.isArray(ignoredTests), `${testsFile}: branch ${id}: "ignored_tests" must be a list`)
    const ignored: IgnoredTest[] = ignoredTests.map((t: unknown, i: number) => {
      const o = t as { name?: unknown; reasons?: unknown }
      need(typeof o?.name === 'string', `${testsFile}: branch ${id}: ignored_tests[${i}] has no name`)
      const reasons = Array.isArray(o.reasons) ? o.reasons.map(r => (typeof r === 'string' ? r : idText((r as { id?: unknown })?.id))) : []
      return { name: o.name, reasons }
    })
    branches.push({
      id,
      tests: names,
      ignored: b.ignored === true,
      ignoreReason: typeof b.ignore_reason === 'string' ? b.ignore_reason : '',
      ignoredTests: ignored,
      dir: join(dir, 'tests', id)
    })
  }
  const active = branches.filter(b => !b.ignored)
  need(active.length > 0, `${testsFile} has no test branch that is not ignored: there is nothing to score`)
  for (const b of active) {
    const runSh = join(b.dir, 'eval', 'run.sh')
    need(
      existsSync(runSh),
      `task directory ${dir}: test branch ${b.id} has no ${join('tests', b.id, 'eval', 'run.sh')}: every branch in tests.json needs its tests (ProgramBench keeps them in its blob store; fetch them into tests/)`
    )
  }
  const ignoredTests = new Set(branches.flatMap(b => b.ignoredTests.map(t => `${b.id}/${t.name}`)))
  const buildScript = existsSync(join(dir, 'build.sh')) ? join(dir, 'build.sh') : undefined
  return {
    dir,
    id: dir.split('/').pop() as string,
    info: { repository: str(y.repository), commit: str(y.commit), language: str(y.language), difficulty: str(y.difficulty) },
    cleanHashes: cleanHashes as string[],
    branches,
    active,
    ignoredTests,
    buildScript
  }
}

/** How many tests are scored: the active branches' tests less the ignored ones. */
export function scoredTestCount(task: TaskDir): number {
  return task.active.reduce((n, b) => n + b.tests.filter(t => !task.ignoredTests.has(`${b.id}/${t}`)).length, 0)
}

/** A reason given as `{ id }`: its id when it is text or a number, else nothing. */
function idText(id: unknown): string {
  return typeof id === 'string' || typeof id === 'number' ? String(id) : ''
}
