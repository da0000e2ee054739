// docs/architecture.md is the map of the code: every folder of src and test
// has its row there, so a folder added without one fails here.
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

const ROOT = join(import.meta.dirname, '..', '..')
/** Build output and installed packages are not the code's folders. */
const SKIPPED = new Set(['node_modules', 'dist'])

function folders(dir: string): string[] {
  const out: string[] = []
  for (const e of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
    if (!e.isDirectory() || SKIPPED.has(e.name)) continue
    const path = `${dir}/${e.name}`
    out.push(path, ...folders(path))
  }
  return out
}

describe('docs/architecture.md', () => {
  const map = readFileSync(join(ROOT, 'docs', 'architecture.md'), 'utf8')

  it('names every folder of src and test', () => {
    const all = [...folders('src'), ...folders('test')]
    expect(all.length).toBeGreaterThan(40)
    expect(all.filter(f => !map.includes(`\`${f}\``))).toEqual([])
  })
})
