// What the Claude Code tests add to the shared real-agent scenario
// (greeter-scenario.ts, agent-daemon.ts): the environment that points Claude
// Code at a scripted model on loopback and keeps it offline, and readers for
// what its stream-json output leaves in the harness log.
import { join } from 'node:path'

/**
 * What Claude Code needs to talk to `modelUrl` and nothing else: its config in
 * the temporary HOME, the endpoint, a placeholder key (in print mode a key in the
 * environment is used as it is, no login), and no update checks, telemetry or
 * error reports.
 */
export function claudeCodeEnv(home: string, modelUrl: string): Record<string, string> {
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

/** The `result` lines Claude Code's stream-json output left in the harness log, one per run. */
export function claudeResults(log: string): Array<Record<string, any>> {
  return log
    .split('\n')
    .filter(l => l.startsWith('{"type":"result"'))
    .map(l => JSON.parse(l) as Record<string, any>)
}

/** The `system`/`init` lines: what each run started with (tools, MCP servers and their status). */
export function claudeInits(log: string): Array<Record<string, any>> {
  return log
    .split('\n')
    .filter(l => l.startsWith('{"type":"system","subtype":"init"'))
    .map(l => JSON.parse(l) as Record<string, any>)
}

/** How Claude Code words a tool call it refused for want of a permission (print mode never waits to ask). */
export const PERMISSION_DENIAL = /requested permissions to|haven't granted it yet|requires approval/i
