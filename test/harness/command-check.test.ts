// checkLaunchCommand: a harness program that is missing, or that starts a
// missing one from PATH (pi-acp starts pi), is one clear error naming the install.
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { checkLaunchCommand } from '../../src/harness/command-check.js'
import type { HarnessLaunch } from '../../src/harness/types.js'

let dir = ''
afterEach(async () => {
  if (dir !== '') await rm(dir, { recursive: true, force: true })
  dir = ''
})

async function binDir(...programs: string[]): Promise<string> {
  dir = await mkdtemp(join(tmpdir(), 'agency-command-check-'))
  for (const p of programs) {
    await writeFile(join(dir, p), '#!/bin/sh\n')
    await chmod(join(dir, p), 0o755)
  }
  return dir
}

const launch = (command: string, path: string): HarnessLaunch => ({ command, args: [], env: { PATH: path }, cwd: '/', files: [] })

describe('checkLaunchCommand', () => {
  it('passes a program on PATH, and names the install of one that is not', async () => {
    const bin = await binDir('claude')
    expect(() => {
      checkLaunchCommand(launch('claude', bin))
    }).not.toThrow()
    expect(() => {
      checkLaunchCommand(launch('codex-acp', bin))
    }).toThrow(/"codex-acp" is not installed .*npm install -g @zed-industries\/codex-acp/)
  })

  it('wants pi beside pi-acp, which starts it from PATH', async () => {
    const bin = await binDir('pi-acp')
    expect(() => {
      checkLaunchCommand(launch('pi-acp', bin))
    }).toThrow(/"pi", which the harness program "pi-acp" starts, is not installed .*npm install -g @mariozechner\/pi-coding-agent/)
    await writeFile(join(bin, 'pi'), '#!/bin/sh\n')
    await chmod(join(bin, 'pi'), 0o755)
    expect(() => {
      checkLaunchCommand(launch('pi-acp', bin))
    }).not.toThrow()
  })
})
