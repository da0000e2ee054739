// The Codex set-up both real Codex tests give their temporary HOME: a custom
// model provider naming the scripted Responses endpoint, no login.
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { MODEL_ID } from './models/openai-responses.js'

/**
 * $HOME/.codex/config.toml naming the scripted endpoint as a Responses provider (the key is a
 * placeholder env var). The update check, analytics and the plugin marketplace are off: with them
 * Codex looks up github.com and chatgpt.com, and the tests stay on loopback.
 */
function codexConfig(baseUrl: string): string {
  return [
    `model = "${MODEL_ID}"`,
    'model_provider = "scripted"',
    'check_for_update_on_startup = false',
    '',
    '[analytics]',
    'enabled = false',
    '',
    '[features]',
    'plugins = false',
    '',
    '[model_providers.scripted]',
    'name = "scripted model (test stand-in)"',
    `base_url = "${baseUrl}"`,
    'wire_api = "responses"',
    'env_key = "SCRIPTED_MODEL_KEY"',
    ''
  ].join('\n')
}

/** Writes $HOME/.codex/config.toml for the scripted endpoint at `baseUrl`; returns the environment Codex needs with it. */
export async function codexHome(home: string, baseUrl: string): Promise<Record<string, string>> {
  await mkdir(join(home, '.codex'), { recursive: true })
  await writeFile(join(home, '.codex', 'config.toml'), codexConfig(baseUrl))
  return { CODEX_HOME: join(home, '.codex'), SCRIPTED_MODEL_KEY: 'not-a-real-key' }
}
