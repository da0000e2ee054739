import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { execFile } from 'node:child_process'
import { chmod, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { AGENCY_BIN, runAgency } from '../../helpers/agentd-process.js'
import { envWithoutAgency } from '../../helpers/agency-free-env.js'
import { readOperatorKey } from '../../../src/cli/operator-key.js'
import { isOperatorKey } from '../../../src/core/operator/index.js'

let dir: string

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agency-operator-key-'))
})
afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

describe('agency operator keygen', () => {
  it('writes the private key with mode 0600 and prints the public key as the last line', async () => {
    const file = join(dir, 'op.key')
    const r = await runAgency(['operator', 'keygen', '--out', file])
    expect(r.code).toBe(0)
    const key = r.stdout.trim().split('\n').at(-1) as string
    expect(isOperatorKey(key)).toBe(true)
    expect((await stat(file)).mode & 0o777).toBe(0o600)
    expect((await readOperatorKey(file)).author).toBe(key)
    // an existing key is not overwritten by accident
    const again = await runAgency(['operator', 'keygen', '--out', file])
    expect(again.code).toBe(1)
    expect(again.stderr).toMatch(/exists; pass --force/)
    expect((await readOperatorKey(file)).author).toBe(key)
  })

  it('refuses malformed, tampered and unprotected key files with a clear error', async () => {
    const good = join(dir, 'good.key')
    const key = (await runAgency(['operator', 'keygen', '--out', good])).stdout.trim().split('\n').at(-1) as string
    const doc = JSON.parse(await readFile(good, 'utf8'))
    const other = join(dir, 'other.key')
    await runAgency(['operator', 'keygen', '--out', other])
    const cases: Array<[string, string, RegExp]> = [
      ['not-json.key', 'hello', /not an operator key \(not JSON\)/],
      ['swarm.key', '/key/swarm/psk/1.0.0/\n/base16/\nabc', /not an operator key/],
      ['wrong-kind.key', JSON.stringify({ ...doc, kind: 'something' }), /no "kind"/],
      ['bad-private.key', JSON.stringify({ ...doc, privateKey: 'AAAA' }), /does not decode/],
      [
        'mismatch.key',
        JSON.stringify({ ...doc, operator: JSON.parse(await readFile(other, 'utf8')).operator }),
        /public key is not the private key's/
      ]
    ]
    for (const [name, text, why] of cases) {
      const file = join(dir, name)
      await writeFile(file, text, { mode: 0o600 })
      await expect(readOperatorKey(file)).rejects.toThrow(why)
    }
    await chmod(good, 0o644)
    await expect(readOperatorKey(good)).rejects.toThrow(/may be read by others .*chmod 600/)
    await chmod(good, 0o600)
    expect((await readOperatorKey(good)).author).toBe(key)
    await expect(readOperatorKey(join(dir, 'missing.key'))).rejects.toThrow(/cannot read the operator key/)
  })
})

describe('operator commands without an operator key', () => {
  it("say the action is the operator's, and a bad key file is named, before any daemon is asked", async () => {
    const addr = '127.0.0.1:1' // nothing listens: the refusal comes first
    const pause = await runAgency(['pause', '--addr', addr])
    expect(pause.code).toBe(1)
    expect(pause.stderr).toMatch(/pausing the swarm is the operator's to do: pass --operator-key FILE or set AGENCY_OPERATOR_KEY/)
    const bad = join(dir, 'bad.key')
    await writeFile(bad, 'nope', { mode: 0o600 })
    const viaEnv = await new Promise<{ code: number | null; stderr: string }>(resolve => {
      execFile(
        process.execPath,
        [AGENCY_BIN, 'resume', '--addr', addr],
        { env: { ...envWithoutAgency(), AGENCY_OPERATOR_KEY: bad } },
        (err, _out, stderr) => {
          resolve({ code: err == null ? 0 : (err.code as number), stderr })
        }
      )
    })
    expect(viaEnv.code).toBe(1)
    expect(viaEnv.stderr).toMatch(/bad\.key is not an operator key/)
  })
})
