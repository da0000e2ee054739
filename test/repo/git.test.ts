// The one way src/repo runs git (through simple-git): what integration relies
// on, shown call by call. A failing call yields its exit code and git's own
// stderr; a hanging one is killed at its timeout; repository-selecting
// variables of the caller's environment never reach git; a missing directory
// and a missing git binary are errors of their own.
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { git, gitOut } from '../../src/repo/git.js'
import { GitCommandError, GitNotFoundError } from '../../src/repo/errors.js'
import { FailedPreconditionError } from '../../src/core/errors.js'

let dir: string
const saved = { GIT_DIR: process.env.GIT_DIR, PATH: process.env.PATH }

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agency-git-'))
  await git(dir, ['init', '-q', '-b', 'main'])
})
afterEach(() => {
  for (const [k, v] of Object.entries(saved)) {
    if (v == null) delete process.env[k]
    else process.env[k] = v
  }
})
afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

describe('git', () => {
  it('gives the exit code and stderr of a failing call when asked to, and throws them otherwise', async () => {
    const r = await git(dir, ['rev-parse', '--verify', 'no-such-ref'], { allowFail: true })
    expect(r.code).toBe(128)
    expect(r.stderr).toBe('fatal: Needed a single revision\n')
    const err = await git(dir, ['rev-parse', '--verify', 'no-such-ref']).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(GitCommandError)
    expect(err).toMatchObject({ exitCode: 128, stderr: 'fatal: Needed a single revision\n' })
  })

  it('returns stdout untrimmed, and names with spaces and non-ASCII unquoted', async () => {
    expect(await git(dir, ['rev-parse', '--is-inside-work-tree'])).toEqual({ code: 0, stdout: 'true\n', stderr: '' })
    await writeFile(join(dir, 'ä b.txt'), 'x')
    await git(dir, ['add', '--', 'ä b.txt'])
    expect((await git(dir, ['ls-files'])).stdout).toBe('ä b.txt\n')
  })

  it('kills a call that outlives its timeout', async () => {
    // cat-file --batch reads stdin, which is never closed: it would wait for ever.
    const r = await git(dir, ['cat-file', '--batch'], { allowFail: true, timeoutMs: 300 })
    expect(r.code).toBe(-1)
    expect(r.stderr).toMatch(/killed after 300 ms/)
  })

  it('runs in the directory it is given, whatever GIT_DIR the caller has', async () => {
    process.env.GIT_DIR = join(dir, 'elsewhere')
    expect((await gitOut(dir, ['rev-parse', '--show-toplevel'])).endsWith(dir.split('/').pop() ?? '')).toBe(true)
  })

  it('tells a missing directory from a missing git', async () => {
    await expect(git(join(dir, 'missing'), ['status'])).rejects.toBeInstanceOf(FailedPreconditionError)
    process.env.PATH = join(dir, 'no-bin')
    await expect(git(dir, ['status'])).rejects.toBeInstanceOf(GitNotFoundError)
  })
})
