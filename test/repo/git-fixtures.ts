// Real repositories on disk for the repo tests: a bare shared repository with
// one commit on main, and helpers to commit in a clone. No global git config
// is read (each repo sets its own identity), so the tests behave the same on
// any machine.
import { execFile } from 'node:child_process'
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { afterAll } from 'vitest'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { promisify } from 'node:util'
import { openWorkspace, type Workspace } from '../../src/repo/workspace.js'

process.env.GIT_CONFIG_GLOBAL = '/dev/null'
process.env.GIT_CONFIG_NOSYSTEM = '1'

const run = promisify(execFile)

export async function sh(cwd: string, args: string[]): Promise<string> {
  const { stdout } = await run('git', args, { cwd, encoding: 'utf8' })
  return stdout.trim()
}

export interface SharedRepo {
  root: string
  bare: string
  cleanup: () => Promise<void>
  /** The bare repository's main. */
  tip: () => Promise<string>
}

// A shared repository per distinct content is built once per test file and
// copied for each test: copying files is far cheaper than running git.
const templates = new Map<string, Promise<string>>()
let templateRoot: string | undefined
afterAll(async () => {
  if (templateRoot != null) await rm(templateRoot, { recursive: true, force: true })
})

async function buildTemplate(files: Record<string, string>): Promise<string> {
  templateRoot ??= await mkdtemp(join(tmpdir(), 'agency-repo-template-'))
  const dir = await mkdtemp(join(templateRoot, 'repo-'))
  const bare = join(dir, 'shared.git')
  await run('git', ['init', '--quiet', '--bare', '-b', 'main', bare])
  const seed = join(dir, 'seed')
  await run('git', ['init', '--quiet', '-b', 'main', seed])
  await setIdentity(seed, 'seed')
  for (const [name, text] of Object.entries(files)) await write(seed, name, text)
  await sh(seed, ['add', '-A'])
  await sh(seed, ['commit', '--quiet', '-m', 'initial'])
  await sh(seed, ['push', '--quiet', bare, 'main'])
  return bare
}

export async function makeSharedRepo(files: Record<string, string> = { 'README.md': '# shared\n' }): Promise<SharedRepo> {
  const key = JSON.stringify(files)
  let template = templates.get(key)
  if (template == null) {
    template = buildTemplate(files)
    templates.set(key, template)
  }
  const root = await mkdtemp(join(tmpdir(), 'agency-repo-'))
  const bare = join(root, 'shared.git')
  await cp(await template, bare, { recursive: true })
  return {
    root,
    bare,
    cleanup: async () => {
      await rm(root, { recursive: true, force: true })
    },
    tip: async () => await sh(bare, ['rev-parse', 'refs/heads/main'])
  }
}

export async function setIdentity(dir: string, name: string): Promise<void> {
  await sh(dir, ['config', 'user.name', name])
  await sh(dir, ['config', 'user.email', `${name}@example.test`])
}

export async function write(dir: string, name: string, text: string): Promise<void> {
  await mkdir(dirname(join(dir, name)), { recursive: true })
  await writeFile(join(dir, name), text)
}

/** Write files and commit them on the current branch; returns the commit. */
export async function commitFiles(dir: string, files: Record<string, string>, message = 'work'): Promise<string> {
  for (const [name, text] of Object.entries(files)) await write(dir, name, text)
  await sh(dir, ['add', '-A'])
  await sh(dir, ['commit', '--quiet', '-m', message])
  return await sh(dir, ['rev-parse', 'HEAD'])
}

/** A workspace for `agentId` under repo.root, with a local identity. */
export async function agentWorkspace(repo: SharedRepo, agentId: string, extra: { mirrorDir?: string } = {}): Promise<Workspace> {
  return await openWorkspace({
    remote: repo.bare,
    workdir: join(repo.root, 'agents', agentId),
    agentId,
    identity: { name: agentId, email: `${agentId}@example.test` },
    ...extra
  })
}

/** Everything about a clone that integration must leave alone. */
export async function snapshot(dir: string): Promise<string> {
  const head = await sh(dir, ['rev-parse', 'HEAD'])
  const branch = await sh(dir, ['symbolic-ref', '--quiet', 'HEAD']).catch(() => '(detached)')
  const refs = await sh(dir, ['for-each-ref', '--format=%(refname) %(objectname)', 'refs/heads'])
  const status = await sh(dir, ['status', '--porcelain=v1', '--untracked-files=all'])
  const worktrees = await sh(dir, ['worktree', 'list', '--porcelain'])
  return [head, branch, refs, status, worktrees].join('\n--\n')
}

export const noJitter = (): number => 0
