// Bad input to the sandbox options is one clear error and starts nothing;
// the mode chosen follows what the host supports.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import {
  createSandbox,
  parseAllowList,
  SandboxUnavailableError,
  UnconfinedHarnessError,
  type SandboxSupport
} from '../../src/sandbox/index.js'
import type { HarnessLaunch } from '../../src/harness/types.js'

const dataDir = mkdtempSync(join(tmpdir(), 'agency-mode-test-'))
afterAll(() => {
  rmSync(dataDir, { recursive: true, force: true })
})

const nothing: SandboxSupport = {
  bwrap: { ok: false, reason: 'bwrap is not available (ENOENT): install bubblewrap' },
  docker: { ok: false, reason: 'no docker engine answers `docker info`' }
}
const bwrapOnly: SandboxSupport = { bwrap: { ok: true }, docker: { ok: false, reason: 'no docker engine answers `docker info`' } }
const launch: HarnessLaunch = { command: 'claude', args: [], env: {}, cwd: dataDir, files: [] }

describe('sandbox options', () => {
  it('refuses an unknown mode', () => {
    expect(() => createSandbox({ mode: 'chroot', dataDir, support: bwrapOnly })).toThrow(
      /unknown sandbox mode "chroot": use one of auto, bwrap, docker, none/
    )
  })

  it('refuses an allow-list entry that is not a host, and loopback without a port', () => {
    for (const bad of ['https://api.anthropic.com', '*.example.com', 'a b', 'host:99999', '/etc/passwd']) {
      expect(() => createSandbox({ mode: 'bwrap', dataDir, allow: [bad], support: bwrapOnly })).toThrow(
        /--sandbox-allow: .* is not a host or host:port/
      )
    }
    expect(() => parseAllowList(['127.0.0.1'])).toThrow(/loopback is allowed by port only/)
    expect(parseAllowList(['registry.npmjs.org,127.0.0.1:8080', '[::1]:9000'])).toEqual([
      { host: 'registry.npmjs.org', port: 0 },
      { host: '127.0.0.1', port: 8080 },
      { host: '::1', port: 9000 }
    ])
  })

  it('refuses a hidden path that is not a directory or holds what every box needs, and a run-only file that is not a file or a box path that is not absolute or lands on the system', () => {
    writeFileSync(join(dataDir, 'a-file'), 'x')
    expect(() => createSandbox({ mode: 'bwrap', dataDir, hide: [join(dataDir, 'a-file')], support: bwrapOnly })).toThrow(
      /--sandbox-hide: .*a-file is not a directory/
    )
    expect(() => createSandbox({ mode: 'none', dataDir, hide: [join(dataDir, 'missing')] })).toThrow(
      /--sandbox-hide: .*missing is not a directory/
    )
    for (const d of ['/', '/usr', '/tmp'])
      expect(() => createSandbox({ mode: 'bwrap', dataDir, hide: [d], support: bwrapOnly })).toThrow(
        /--sandbox-hide: .* holds what every box needs/
      )
    expect(() => createSandbox({ mode: 'bwrap', dataDir, runOnly: [join(dataDir, 'a-file')], support: bwrapOnly })).toThrow(
      /--sandbox-run-only: .* is not FILE=BOXPATH/
    )
    expect(() => createSandbox({ mode: 'bwrap', dataDir, runOnly: [`${dataDir}=/run/x`], support: bwrapOnly })).toThrow(
      /--sandbox-run-only: .* is not a file/
    )
    for (const at of ['run/x', '/usr/bin/ref', '/tmp/ref', '/']) {
      expect(() => createSandbox({ mode: 'bwrap', dataDir, runOnly: [`${join(dataDir, 'a-file')}=${at}`], support: bwrapOnly })).toThrow(
        /--sandbox-run-only: the box path .* must be absolute and outside \/tmp and the system directories/
      )
    }
  })

  it('fails --sandbox bwrap and --sandbox docker clearly where they cannot run', () => {
    expect(() => createSandbox({ mode: 'bwrap', dataDir, support: nothing })).toThrow(SandboxUnavailableError)
    expect(() => createSandbox({ mode: 'bwrap', dataDir, support: nothing })).toThrow(
      /--sandbox bwrap cannot run here: bwrap is not available/
    )
    expect(() => createSandbox({ mode: 'docker', dataDir, support: bwrapOnly })).toThrow(
      /--sandbox docker cannot run here: no docker engine/
    )
  })

  it('auto picks bubblewrap where it works and says so in one line', () => {
    const s = createSandbox({ mode: 'auto', dataDir, support: bwrapOnly })
    expect(s.kind).toBe('bwrap')
    // As root the box's user is named too (root-user.test.ts).
    expect(s.summary).toMatch(/^sandbox: bwrap \(auto: bubblewrap works here\)(, as user agency \(uid \d+\))?$/)
  })

  it('auto without any sandbox refuses a model-running harness with how to fix it, and runs sim unconfined', async () => {
    const s = createSandbox({ mode: 'auto', dataDir, support: nothing })
    expect(s.kind).toBe('none')
    expect(s.summary).toMatch(/^sandbox: none available \(bwrap is not available/)
    await expect(s.confineHarness(launch, { harness: 'claude', apiAddress: 'unix:/x', logFile: join(dataDir, 'h.log') })).rejects.toThrow(
      UnconfinedHarnessError
    )
    await expect(
      s.confineHarness(launch, { harness: 'acp:codex', apiAddress: 'unix:/x', logFile: join(dataDir, 'h.log') })
    ).rejects.toThrow(/install bubblewrap and socat .* or pass --sandbox none/)
    const sim = await s.confineHarness(launch, { harness: 'sim', apiAddress: 'unix:/x', logFile: join(dataDir, 'h.log') })
    expect(sim.launch).toBe(launch)
  })

  it('--sandbox none runs every harness as it is', async () => {
    const s = createSandbox({ mode: 'none', dataDir })
    expect((await s.confineHarness(launch, { harness: 'claude', apiAddress: 'unix:/x', logFile: join(dataDir, 'h.log') })).launch).toBe(
      launch
    )
  })
})
