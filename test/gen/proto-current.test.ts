// The generated protobuf code in src/gen is committed; this fails when it is
// stale, i.e. when proto/ changed and `npm run proto` was not run.
import { execFile } from 'node:child_process'
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'

const REPO = fileURLToPath(new URL('../../', import.meta.url))
const BUF = join(REPO, 'node_modules/.bin/buf')
const dirs: string[] = []

afterAll(async () => {
  await Promise.all(
    dirs.map(async d => {
      await rm(d, { recursive: true, force: true })
    })
  )
})

async function filesUnder(root: string): Promise<string[]> {
  const entries = await readdir(root, { recursive: true, withFileTypes: true })
  return entries
    .filter(e => e.isFile())
    .map(e => relative(root, join(e.parentPath, e.name)))
    .sort()
}

describe('generated protobuf code', () => {
  it('is what buf generates from proto/ today, file for file and byte for byte', async () => {
    const out = await mkdtemp(join(tmpdir(), 'agency-proto-'))
    dirs.push(out)
    // --output is prepended to the template's out directory (src/gen).
    await promisify(execFile)(BUF, ['generate', '--template', 'buf.gen.yaml', '--output', out], { cwd: REPO, timeout: 60_000 })
    const fresh = join(out, 'src/gen')
    const committed = join(REPO, 'src/gen')

    const freshFiles = await filesUnder(fresh)
    expect(freshFiles.length).toBeGreaterThan(0)
    // No file missing, none left over from a removed .proto.
    expect(await filesUnder(committed)).toEqual(freshFiles)
    for (const file of freshFiles) {
      const [want, have] = await Promise.all([readFile(join(fresh, file)), readFile(join(committed, file))])
      expect(have.equals(want), `src/gen/${file} is stale: run npm run proto`).toBe(true)
    }
  })
})
