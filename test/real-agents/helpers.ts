// What the Claude Code tests add to the shared real-agent scenario
// (greeter-scenario.ts): the environment that points Claude Code at a scripted
// model on loopback and keeps it offline, readers for what its stream-json
// output leaves in the harness log, and a seeded shared repository of any
// files (the swarm's project has no test before the tasks add theirs).
import { mkdir, writeFile } from 'node:fs/promises'
import { delimiter, dirname, join } from 'node:path'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { CLI_BIN_DIR } from './greeter-scenario.js'

const run = promisify(execFile)

/** git with no user or system config. */
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
    await mkdir(dirname(join(seed, path)), { recursive: true })
    await writeFile(join(seed, path), content)
  }
  await git(['add', '-A'], seed)
  await git(['-c', 'user.name=seed', '-c', 'user.email=seed@agency.invalid', 'commit', '--quiet', '-m', 'The project before the swarm'], seed)
  await git(['push', '--quiet', repo, 'main'], seed)
  return repo
}

/**
 * What Claude Code needs to talk to `modelUrl` and nothing else: its config in
 * the temporary HOME, the endpoint, a placeholder key (in print mode a key in the
 * environment is used as it is, no login), and no update checks, telemetry or
 * error reports.
 */
export function claudeCodeEnv (home: string, modelUrl: string): Record<string, string> {
  return {
    CLAUDE_CONFIG_DIR: join(home, '.claude'),
    ANTHROPIC_BASE_URL: modelUrl,
    ANTHROPIC_API_KEY: 'scripted-model-needs-no-key',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_ERROR_REPORTING: '1'
  }
}

/** The whole environment of an agentd whose harness is Claude Code, for a daemon started without greeter-scenario. */
export function claudeAgentEnv (home: string, modelUrl: string): Record<string, string> {
  return { HOME: home, PATH: [CLI_BIN_DIR, process.env.PATH].filter(p => p != null && p !== '').join(delimiter), ...claudeCodeEnv(home, modelUrl) }
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
