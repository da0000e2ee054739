// The seeded data dirs of the log benchmarks (bench:log, log-ingest), kept
// between runs: signing a million entries takes most of a bench:log run. One
// cached dir per entries, authors and seed (the seed fixes the texts; the
// authors' keys are drawn when the dir is built, and a cached dir is reused
// as it is). A run copies the cached dir, so the daemon started on it never
// changes the cache.
import { cp, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { seedLog } from '../scenarios/sync/helpers.js'

export const DEFAULT_SEED_CACHE = 'results/bench-log-seeds'

export const SEED = 42

interface Seeded {
  entries: number
  bytes: number
  vectorDigest: string
}

/**
 * Fills `dataDir` with the seeded log: copied from the seed cache when it
 * holds one for these entries, authors and seed, else seeded (and, with a
 * cache, kept there for the next run). `built` says whether it was signed now.
 */
export async function seedDataDir(
  dataDir: string,
  entries: number,
  authors: number,
  cacheRoot: string | null
): Promise<Seeded & { built: boolean }> {
  if (cacheRoot === null) return { ...(await seedLog(dataDir, { entries, authors, seed: SEED })), built: false }
  const cached = join(cacheRoot, `${entries}-entries-${authors}-authors-seed-${SEED}`)
  const meta = join(cached, 'seed.json')
  let seeded: Seeded | undefined
  try {
    seeded = JSON.parse(await readFile(meta, 'utf8')) as Seeded
  } catch {
    /* no cache yet: seed one */
  }
  let built = false
  if (seeded === undefined) {
    // seeded into a scratch dir and renamed, so an interrupted seed leaves no half a cache
    const scratch = `${cached}.partial`
    await rm(scratch, { recursive: true, force: true })
    await mkdir(join(scratch, 'data'), { recursive: true })
    const s = await seedLog(join(scratch, 'data'), { entries, authors, seed: SEED })
    seeded = { entries: s.entries, bytes: s.bytes, vectorDigest: s.vectorDigest }
    await writeFile(join(scratch, 'seed.json'), JSON.stringify(seeded))
    await rm(cached, { recursive: true, force: true })
    await rename(scratch, cached)
    built = true
  }
  await cp(join(cached, 'data'), dataDir, { recursive: true })
  return { ...seeded, built }
}
