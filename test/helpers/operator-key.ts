// An operator key pair as a person makes one: `agency operator keygen`.
import { join } from 'node:path'
import { runAgency } from './agentd-process.js'

/** Makes `<dir>/operator.key` with `agency operator keygen`: the file and the public key it printed last. */
export async function makeOperatorKey(dir: string): Promise<{ keyFile: string; opKey: string }> {
  const keyFile = join(dir, 'operator.key')
  const made = await runAgency(['operator', 'keygen', '--out', keyFile])
  if (made.code !== 0) throw new Error(`agency operator keygen failed: ${made.stderr}`)
  return { keyFile, opKey: made.stdout.trim().split('\n').at(-1) as string }
}
