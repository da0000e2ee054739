// agentd --prices FILE: a price file that does not parse stops agentd before
// it starts anything, with one line naming the file and what is wrong.
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { AGENTD_BIN, assertBuilt } from '../helpers/agent-loop.js'

let dir: string
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agency-prices-'))
})
afterEach(async () => {
  await rm(dir, { recursive: true, force: true })
})

async function agentd(prices: string): Promise<{ code: number | null; stderr: string }> {
  assertBuilt()
  return await new Promise(resolve => {
    execFile(
      process.execPath,
      [AGENTD_BIN, '--data-dir', join(dir, 'data'), '--listen', '/ip4/127.0.0.1/tcp/0', '--grpc', '127.0.0.1:0', '--prices', prices],
      { timeout: 60_000 },
      (err, _out, stderr) => {
        resolve({ code: err == null ? 0 : ((err as NodeJS.ErrnoException & { code?: number }).code as unknown as number), stderr })
      }
    )
  })
}

describe('agentd --prices', () => {
  it('refuses a file that is not JSON, or holds a bad price, naming the file; nothing is started', async () => {
    const bad = join(dir, 'prices.json')
    await writeFile(bad, '{ "claude-sonnet-4": { "input": 3, ')
    const r = await agentd(bad)
    expect(r.code).toBe(1)
    expect(r.stderr).toMatch(new RegExp(`^agentd: ${bad}: price file: not JSON`))
    expect(existsSync(join(dir, 'data'))).toBe(false)

    await writeFile(bad, '{ "m": { "input": -3, "output": 1 } }')
    expect((await agentd(bad)).stderr).toContain('price file: "m".input: expected dollars per million tokens')
    expect((await agentd(join(dir, 'missing.json'))).stderr).toContain(`cannot read the price file ${join(dir, 'missing.json')}`)
  })
})
