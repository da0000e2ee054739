// Which provider account a harness spends from, as a hash the swarm can
// compare: agents with the same provider, endpoint and key (or the same login
// home) share a rate limit, others do not. Only the hash leaves the machine:
// the key itself is never written to the log, a heartbeat or the harness log.
import { createHash } from 'node:crypto'
import { homedir } from 'node:os'

/** The environment variables that name each provider's endpoint and credential, in the order they win. */
const ACCOUNT_VARS: Record<string, { provider: string; url: string[]; key: string[]; home: string[] }> = {
  claude: {
    provider: 'anthropic',
    url: ['ANTHROPIC_BASE_URL'],
    key: ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN', 'CLAUDE_CODE_OAUTH_TOKEN'],
    home: ['CLAUDE_CONFIG_DIR']
  },
  codex: { provider: 'openai', url: ['OPENAI_BASE_URL'], key: ['OPENAI_API_KEY', 'CODEX_API_KEY'], home: ['CODEX_HOME'] },
  copilot: {
    provider: 'github-copilot',
    url: ['COPILOT_PROVIDER_BASE_URL'],
    key: ['COPILOT_GITHUB_TOKEN', 'GH_TOKEN', 'GITHUB_TOKEN'],
    home: ['COPILOT_HOME']
  },
  gemini: { provider: 'google', url: ['GOOGLE_GEMINI_BASE_URL'], key: ['GEMINI_API_KEY', 'GOOGLE_API_KEY'], home: ['GEMINI_CLI_HOME'] },
  pi: { provider: 'pi', url: [], key: ['ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'GEMINI_API_KEY'], home: ['PI_CODING_AGENT_DIR'] },
  aider: { provider: 'aider', url: ['OPENAI_API_BASE', 'ANTHROPIC_BASE_URL'], key: ['OPENAI_API_KEY', 'ANTHROPIC_API_KEY'], home: [] }
}

/**
 * The account hash for `harness` (its family for acp:<agent> and cmd:) in
 * `env`. `override` (agentd --provider-account) names the account outright,
 * for accounts the environment does not show (a login in a shared home).
 */
export function providerAccount(harness: string, env: Readonly<Record<string, string | undefined>>, override?: string): string {
  const family = harness.startsWith('acp:') ? harness.slice(4).replace(/-acp$/, '') : harness
  if (override != null && override !== '') return hash(`account|${override}`)
  const vars = ACCOUNT_VARS[family]
  if (vars == null) return hash(`harness|${family}`)
  const pick = (names: string[]): string => names.map(n => env[n]).find(v => v != null && v !== '') ?? ''
  const key = pick(vars.key)
  // Without a key in the environment the CLI uses its login, kept in its home.
  const credential = key !== '' ? `key|${key}` : `login|${pick(vars.home) || env.HOME || homedir()}`
  return hash(`${vars.provider}|${pick(vars.url)}|${credential}`)
}

function hash(text: string): string {
  return createHash('sha256').update(`agency/provider-account/v1|${text}`).digest('hex').slice(0, 32)
}
