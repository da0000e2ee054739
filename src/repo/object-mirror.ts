// A bare mirror of the shared repository kept once per host, which every
// agent's clone borrows objects from (`git clone --reference`), so N agents on
// one machine store the history once.
//
// Why --reference and not --shared or worktrees of the mirror: with
// --reference, origin is the real shared remote, so fetch and push go there
// directly and the mirror is only an object cache; a stale or missing mirror
// costs download time, never correctness. The price of not passing
// --dissociate is that clones depend on the mirror's objects, so the mirror
// never deletes any: gc is off and its fetches never prune.
import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, rename, rm } from 'node:fs/promises'
import { join } from 'node:path'
import type { Logger } from '../logger.js'
import { git } from './git.js'

export function mirrorPath(mirrorDir: string, remote: string): string {
  const key = createHash('sha256').update(remote).digest('hex').slice(0, 16)
  return join(mirrorDir, `${key}.git`)
}

/**
 * The mirror for `remote` under `mirrorDir`, created or refreshed; null when it
 * cannot be made (the caller then clones without it).
 */
export async function ensureMirror(mirrorDir: string, remote: string, log: Logger): Promise<string | null> {
  const dir = mirrorPath(mirrorDir, remote)
  if (await isBareRepo(dir)) {
    // Best effort: a concurrent refresh holding a ref lock is fine to lose to.
    const r = await git(dir, ['fetch', '--quiet', '--no-prune', 'origin', '+refs/heads/*:refs/heads/*'], { allowFail: true })
    if (r.code !== 0) log.debug({ mirror: dir, stderr: r.stderr }, 'mirror refresh failed')
    return dir
  }
  await mkdir(mirrorDir, { recursive: true })
  // Build aside and rename into place so that agents starting together never
  // see a half-made mirror; the loser of the rename race drops its copy.
  const tmp = await mkdtemp(join(mirrorDir, '.mirror-'))
  try {
    const r = await git(mirrorDir, ['clone', '--bare', '--quiet', '--', remote, tmp], { allowFail: true })
    if (r.code !== 0) {
      log.warn({ remote, stderr: r.stderr }, 'could not create the object mirror; cloning without it')
      return null
    }
    await git(tmp, ['config', 'gc.auto', '0'])
    await git(tmp, ['config', 'gc.pruneExpire', 'never'])
    await git(tmp, ['config', 'remote.origin.prune', 'false'])
    try {
      await rename(tmp, dir)
    } catch {
      /* another agent made it first */
    }
  } finally {
    await rm(tmp, { recursive: true, force: true })
  }
  return (await isBareRepo(dir)) ? dir : null
}

async function isBareRepo(dir: string): Promise<boolean> {
  if (!existsSync(dir)) return false
  const r = await git(dir, ['rev-parse', '--is-bare-repository'], { allowFail: true })
  return r.code === 0 && r.stdout.trim() === 'true'
}
