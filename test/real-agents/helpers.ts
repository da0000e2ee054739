// Shared by the tests that drive real agent CLIs through `agentd --harness`:
// a bare shared repository seeded with a tiny project, the environment that
// points a CLI at a scripted model on loopback and keeps it offline, and
// readers for what the harness left in its log.
import { execFile } from 'node:child_process'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { REPO_ROOT } from '../agents/helpers.js'

const run = promisify(execFile)

/** git with no user or system config (the test's HOME is not the developer's). */
export async function git (args: string[], cwd?: string): Promise<string> {
  const env = { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' }
  return (await run('git', args, { cwd, encoding: 'utf8', env })).stdout.trim()
}

/** A bare repository at `<dir>/repo.git` whose `main` holds `files`, committed once. */
export async function seedSharedRepo (dir: string, files: Record<string, string>): Promise<string> {
  const repo = join(dir, 'repo.git')
  const seed = join(dir, 'seed')
  await git(['init', '--quiet', '--bare', '--initial-branch', 'main', repo])
  await git(['init', '--quiet', '--initial-branch', 'main', seed])
  for (const [path, content] of Object.entries(files)) {
    await mkdir(join(seed, path, '..'), { recursive: true })
    await writeFile(join(seed, path), content)
  }
  await git(['add', '-A'], seed)
  await git(['-c', 'user.name=seed', '-c', 'user.email=seed@agency.invalid', 'commit', '--quiet', '-m', 'The project before the swarm'], seed)
  await git(['push', '--quiet', repo, 'main'], seed)
  return repo
}

/** The environment of an agentd whose harness is Claude Code, talking to `modelUrl` and nothing else. */
export function claudeCodeEnv (home: string, modelUrl: string): Record<string, string> {
  return {
    // The real CLI, from the dev dependencies.
    PATH: `${join(REPO_ROOT, 'node_modules', '.bin')}:${process.env.PATH ?? ''}`,
    // A fresh HOME: no user settings, sessions or credentials of the developer's are read or written.
    HOME: home,
    CLAUDE_CONFIG_DIR: join(home, '.claude'),
    ANTHROPIC_BASE_URL: modelUrl,
    ANTHROPIC_API_KEY: 'scripted-model-needs-no-key',
    // No update checks, telemetry, error reports or other traffic beyond the model endpoint.
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_ERROR_REPORTING: '1'
  }
}

export async function harnessLog (dataDir: string): Promise<string> {
  return await readFile(join(dataDir, 'harness.log'), 'utf8').catch(() => '')
}

export function count (text: string, re: RegExp): number {
  return (text.match(new RegExp(re.source, 'g')) ?? []).length
}

/** The `result` lines Claude Code's stream-json output left in the harness log, one per run. */
export function claudeResults (log: string): Array<Record<string, any>> {
  return log.split('\n').filter(l => l.startsWith('{"type":"result"')).map(l => JSON.parse(l) as Record<string, any>)
}

/** The `system`/`init` lines: what each run started with (tools, MCP servers and their status). */
export function claudeInits (log: string): Array<Record<string, any>> {
  return log.split('\n').filter(l => l.startsWith('{"type":"system","subtype":"init"')).map(l => JSON.parse(l) as Record<string, any>)
}

/** How Claude Code words a tool call it refused for want of a permission (print mode never waits to ask). */
export const PERMISSION_DENIAL = /requested permissions to|haven't granted it yet|requires approval/i
