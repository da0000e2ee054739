// What is scored: a directory, or a commit of a git repository (the shared
// branch of a swarm, a tag, a commit id). Either way its files are copied into
// the scorer's workspace; a commit is exported with `git archive`, so only its
// tracked files, with their modes, arrive.
import { execFile, spawn } from 'node:child_process'
import { existsSync, statSync } from 'node:fs'
import { cp } from 'node:fs/promises'
import { resolve } from 'node:path'
import { promisify } from 'node:util'
import { InvalidArgumentError } from '../core/errors.js'

const run = promisify(execFile)

export type Submission = { kind: 'dir'; path: string; label: string } | { kind: 'commit'; repo: string; commit: string; label: string }

/** A directory if `spec` names one, else a git ref resolved in `repo` (default: the current directory). */
export async function resolveSubmission(spec: string, repo?: string): Promise<Submission> {
  if (spec === '') throw new InvalidArgumentError('--submission is empty: give a directory or a git ref')
  const asDir = resolve(spec)
  if (existsSync(asDir) && statSync(asDir).isDirectory() && repo == null) return { kind: 'dir', path: asDir, label: spec }
  const where = resolve(repo ?? '.')
  if (!existsSync(where)) throw new InvalidArgumentError(`--repo ${repo ?? '.'}: no such repository`)
  try {
    const { stdout } = await run('git', ['-C', where, 'rev-parse', '--verify', '--quiet', `${spec}^{commit}`], { encoding: 'utf8' })
    return { kind: 'commit', repo: where, commit: stdout.trim(), label: `${spec} (${stdout.trim().slice(0, 12)})` }
  } catch {
    throw new InvalidArgumentError(
      repo == null
        ? `--submission ${spec}: no such directory, and no such git ref in ${where} (give a directory, or a ref with --repo PATH)`
        : `--submission ${spec}: no such git ref in ${where}`
    )
  }
}

/** Copies the submission's files into `dest` (which exists and is empty). */
export async function copySubmission(s: Submission, dest: string): Promise<void> {
  if (s.kind === 'dir') {
    await cp(s.path, dest, { recursive: true, preserveTimestamps: true, verbatimSymlinks: true })
    return
  }
  await new Promise<void>((resolvePromise, reject) => {
    const archive = spawn('git', ['-C', s.repo, 'archive', '--format=tar', s.commit], { stdio: ['ignore', 'pipe', 'pipe'] })
    const tar = spawn('tar', ['-x', '-f', '-', '-C', dest], { stdio: ['pipe', 'ignore', 'pipe'] })
    let errors = ''
    archive.stderr.on('data', d => {
      errors += String(d)
    })
    tar.stderr.on('data', d => {
      errors += String(d)
    })
    archive.stdout.pipe(tar.stdin)
    let pending = 2
    let failed = false
    const done = (what: string) => (code: number | null) => {
      if (code !== 0) failed = true
      if (code !== 0 && !errors.includes(what)) errors += `${what} exited with ${String(code)}\n`
      if (--pending === 0) {
        if (failed) reject(new Error(`cannot export ${s.commit} of ${s.repo}: ${errors.trim()}`))
        else resolvePromise()
      }
    }
    archive.once('close', done('git archive'))
    tar.once('close', done('tar'))
  })
}
