// Runs every tests/*.test.mjs. A test whose module does not exist yet is
// skipped (its task is not done); the rest pass or fail. Prints TAP and a
// summary line; exits 1 when any test fails.
import { readdirSync, existsSync } from 'node:fs'
import { join, dirname } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import assert from 'node:assert/strict'

const root = dirname(fileURLToPath(import.meta.url))
const files = readdirSync(join(root, 'tests')).filter(f => f.endsWith('.test.mjs')).sort()
let passed = 0, failed = 0, skipped = 0, n = 0
console.log(`1..${files.length}`)
for (const file of files) {
  n++
  const test = await import(pathToFileURL(join(root, 'tests', file)).href)
  const name = file.replace(/\.test\.mjs$/, '')
  const target = join(root, test.module)
  if (!existsSync(target)) { skipped++; console.log(`ok ${n} - ${name} # SKIP ${test.module} not written yet`); continue }
  try {
    const mod = await import(pathToFileURL(target).href + `?t=${Date.now()}`)
    await test.run(mod, assert)
    passed++
    console.log(`ok ${n} - ${name}`)
  } catch (err) {
    failed++
    console.log(`not ok ${n} - ${name}`)
    console.log(`  # ${String(err?.message ?? err).split('\n')[0]}`)
  }
}
console.log(`# pass ${passed}`)
console.log(`# fail ${failed}`)
console.log(`# skip ${skipped}`)
process.exit(failed > 0 ? 1 : 0)
