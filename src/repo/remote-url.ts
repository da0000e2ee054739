// Remote addresses: a path, file://, ssh:// or scp-like user@host:path, http(s)://.
// Local paths are made absolute so that a clone made from one cwd is
// recognised from another.
import { resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { InvalidArgumentError } from '../core/errors.js'

const URL_SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//
// git's scp-like syntax: a colon before the first slash, e.g. git@host:org/repo.git.
const SCP_LIKE = /^[^/:]+:/

export function isLocalRemote(remote: string): boolean {
  return !URL_SCHEME.test(remote) && !SCP_LIKE.test(remote)
}

/** The form we hand to git and store as origin. */
export function normalizeRemote(remote: unknown): string {
  if (typeof remote !== 'string' || remote.trim() === '') throw new InvalidArgumentError('remote must be a non-empty git url or path')
  if (remote.startsWith('-')) throw new InvalidArgumentError(`remote ${JSON.stringify(remote)} looks like an option, not a url or path`)
  if (/[\0\n\r]/.test(remote)) throw new InvalidArgumentError('remote contains a control character')
  const r = remote.trim()
  if (isLocalRemote(r)) return stripSlash(resolve(r))
  return r
}

/** Whether two remotes name the same repository, ignoring path vs file:// and trailing slashes. */
export function sameRemote(a: string, b: string): boolean {
  return comparable(a) === comparable(b)
}

function comparable(remote: string): string {
  let r = remote.trim()
  if (r.startsWith('file://')) {
    try {
      r = fileURLToPath(r)
    } catch {
      return r
    }
  }
  if (isLocalRemote(r)) r = resolve(r)
  r = stripSlash(r)
  return r.endsWith('.git') && !isLocalRemote(r) ? r.slice(0, -4) : r
}

function stripSlash(s: string): string {
  return s.length > 1 ? s.replace(/\/+$/, '') : s
}
