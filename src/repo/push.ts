// Pushing to the shared remote, telling "someone landed first, merge again"
// apart from failures that retrying will not fix.
import { PushRejectedError, RemoteUnavailableError, lastLines } from './errors.js'
import { git } from './git.js'
import type { Workspace } from './workspace.js'

export type PushOutcome =
  | { ok: true }
  /** The ref moved under us (non-fast-forward, or a concurrent push held its lock). */
  | { ok: false; reason: string }

// Rejections that mean "the ref changed or was busy": fetch, merge again, retry.
const RETRYABLE =
  /\[rejected\]|non-fast-forward|fetch first|stale info|failed to update ref|cannot lock ref|failed to lock|incorrect old value|Unable to create '[^']*\.lock'/i

/**
 * Push `refspecs` to origin without force, unless a refspec itself says so
 * (`+src:dst`). Never reports success unless git says every ref landed.
 */
export async function pushRefspecs(
  ws: Pick<Workspace, 'dir' | 'remote' | 'gitTimeoutMs'>,
  refspecs: string[],
  extra: string[] = []
): Promise<PushOutcome> {
  // --no-verify: a user's pre-push hook is not the integration gate (verify is).
  const r = await git(ws.dir, ['push', '--porcelain', '--no-verify', ...extra, 'origin', ...refspecs], {
    allowFail: true,
    timeoutMs: ws.gitTimeoutMs
  })
  if (r.code === 0) return { ok: true }
  const text = `${r.stdout}\n${r.stderr}`
  if (RETRYABLE.test(text)) return { ok: false, reason: statusLine(r.stdout) ?? lastLines(r.stderr, 2) }
  const rejected = statusLine(r.stdout)
  if (rejected != null) throw new PushRejectedError(refspecs.join(' '), rejected)
  throw new RemoteUnavailableError(ws.remote, lastLines(r.stderr, 2) || `git push exited ${r.code}`)
}

/** The reason git gives on a `!` (rejected) line of `push --porcelain`. */
function statusLine(stdout: string): string | null {
  const line = stdout.split('\n').find(l => l.startsWith('!'))
  return line != null ? line.split('\t').slice(2).join(' ').trim() : null
}
