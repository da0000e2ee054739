// The places a box's user writes, given to it on the host (agentd as root,
// user.ts). The box's home is the user's own. A workspace stays root's, as the
// daemon's git in it expects, and is shared through the user's group: each
// entry gets the group and the owner's bits for the group, each directory the
// setgid bit (what is made in it later keeps the group), and the daemon's
// umask leaves the group's write bit on what its git writes there.
import { chownSync, chmodSync, lstatSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import type { BoxUser } from './user.js'

/** Makes `dir` and all in it the user's own. */
export function giveToUser(dir: string, user: BoxUser): void {
  walk(dir, path => {
    chownSync(path, user.uid, user.gid)
  })
}

/** Shares `dir` and all in it with the user's group, root staying the owner. */
export function shareWithGroup(dir: string, user: BoxUser): void {
  walk(dir, (path, mode, isDir) => {
    chownSync(path, -1, user.gid)
    const shared = (mode & 0o7777) | ((mode & 0o700) >> 3) | (isDir ? 0o2000 : 0)
    if (shared !== (mode & 0o7777)) chmodSync(path, shared)
  })
}

function walk(path: string, visit: (path: string, mode: number, isDir: boolean) => void): void {
  let st
  try {
    st = lstatSync(path)
  } catch {
    return
  }
  // A link is left as it is: what it points to is not the box's to have.
  if (st.isSymbolicLink()) return
  visit(path, st.mode, st.isDirectory())
  if (!st.isDirectory()) return
  for (const name of readdirSync(path)) walk(join(path, name), visit)
}
