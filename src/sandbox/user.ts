// Who runs inside a box when agentd runs as root: an unprivileged user of the
// host (--sandbox-user, default `agency`, created as a system user without a
// home or login when missing), so that file modes on the host bind in the box.
// bubblewrap starts as root (its mounts see everything it binds), and the
// command inside drops to this user for real with setpriv: no capability is
// left, and a root file of mode 0600 is as unreadable as on the host. The
// places the agent writes are given to the user (ownership.ts).
import { spawnSync } from 'node:child_process'
import { InvalidArgumentError } from '../core/errors.js'
import { SandboxUnavailableError } from './errors.js'

export const DEFAULT_SANDBOX_USER = 'agency'

export interface BoxUser {
  name: string
  uid: number
  gid: number
}

const NAME = /^[a-z_][a-z0-9_-]{0,31}$/i

/** Whether this process runs as root. */
export function runsAsRoot(): boolean {
  return process.getuid?.() === 0
}

/** The user `name` (checked, created when missing); throws when it cannot be had or is root itself. */
export function sandboxUser(name: string = DEFAULT_SANDBOX_USER): BoxUser {
  if (!NAME.test(name)) throw new InvalidArgumentError(`--sandbox-user: ${JSON.stringify(name)} is not a user name`)
  let found = lookUp(name)
  if (found == null) {
    const made = spawnSync(
      'useradd',
      ['--system', '--no-create-home', '--home-dir', '/nonexistent', '--shell', '/usr/sbin/nologin', name],
      { encoding: 'utf8', timeout: 15_000 }
    )
    // Another daemon on the host may have made it meanwhile: look again either way.
    found = lookUp(name)
    if (found == null)
      throw new SandboxUnavailableError(
        'bwrap',
        `agentd runs as root and the sandbox user ${name} does not exist and could not be created (${(made.stderr ?? made.error?.message ?? '').trim() || `useradd exited ${String(made.status)}`}): create it (useradd --system ${name}) or name another with --sandbox-user`
      )
  }
  if (found.uid === 0 || found.gid === 0)
    throw new InvalidArgumentError(`--sandbox-user ${name}: it is root (uid ${found.uid}, gid ${found.gid}); name an unprivileged user`)
  return found
}

function lookUp(name: string): BoxUser | undefined {
  const id = (flag: string): number | undefined => {
    const r = spawnSync('id', [flag, name], { encoding: 'utf8', timeout: 5_000 })
    const n = Number(r.stdout?.trim())
    return r.status === 0 && Number.isInteger(n) ? n : undefined
  }
  const uid = id('-u')
  const gid = id('-g')
  return uid != null && gid != null ? { name, uid, gid } : undefined
}
