// Headless Chromium for the dashboard tests and screenshots: Debian's
// chromium driven by playwright-core, with a fresh profile and nothing that
// reaches the network on its own.
import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium, type BrowserContext } from 'playwright-core'

export const CHROMIUM = process.env.AGENCY_CHROMIUM ?? '/usr/bin/chromium'

/** Why the browser cannot be had here, or undefined when it can. */
export function chromiumMissing(): string | undefined {
  return existsSync(CHROMIUM) ? undefined : `${CHROMIUM} not found (apt-get install chromium; .ci/run installs it)`
}

export interface Browser {
  context: BrowserContext
  close: () => Promise<void>
}

export async function launchChromium(viewport = { width: 1400, height: 900 }): Promise<Browser> {
  const profile = await mkdtemp(join(tmpdir(), 'agency-chromium-'))
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-dev-shm-usage'
    ]
  })
  return {
    context,
    close: async () => {
      await context.close().catch(() => {})
      await rm(profile, { recursive: true, force: true })
    }
  }
}
