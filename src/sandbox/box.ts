// The bubblewrap command line for one box: a pure function from what the box
// may see to bwrap's argv. Read access is an allow-list (the toolchain, the
// CLI's packages, what the launch names); a hidden directory is mounted over
// with an unreadable one and each thing it held with an unreadable stand-in,
// so a try to read it fails with "Permission denied" (which the refusal
// watch can see) rather than vanishing. Capabilities are dropped, so root in
// the box is bound by those modes too; when agentd runs as root the command
// also runs as an unprivileged user (BoxSpec.user), so the host's modes bind.
import { dirname } from 'node:path'

/** A directory the box must not see into, with what it held when the box was made. */
export interface HiddenDir {
  path: string
  entries: Array<{ name: string; dir: boolean }>
}

/** A loopback listener inside the box that reaches one allowed destination through a unix socket. */
export interface NetBridge {
  /** address the box connects to: 127.x.y.z */
  address: string
  port: number
  /** the unix socket, at the same path inside and outside the box */
  socket: string
}

export interface BoxSpec {
  readOnly: string[]
  writable: string[]
  hidden: HiddenDir[]
  /** An empty file of mode 0 bound over each hidden file. */
  standIn: string
  /** unix sockets bound in (the daemon's API) */
  sockets: string[]
  /** files bound read-only at another path: [host, box] */
  readOnlyAt: Array<[string, string]>
  /** files the box may run but not read (mode 0111 copies): [host, box]; with any, no user namespaces inside */
  runOnly?: Array<[string, string]>
  /** 'off': no network at all; 'host': the host's network (a test run told --test-network on); else bridges only */
  network: 'off' | 'host' | NetBridge[]
  /** a hosts file for the box (names of allowed remote hosts pinned to their bridges) */
  hostsFile?: string
  env: Record<string, string>
  cwd: string
  /**
   * agentd as root: bwrap runs as root (no user namespace) and the command
   * drops to this unprivileged user with setpriv, every capability gone but
   * CAP_FOWNER (see dropTo), so the host's file modes bind inside.
   */
  user?: { uid: number; gid: number }
}

/** bwrap's argv, then `--`, then the command (behind a shell that starts the bridges, when there are any). */
export function bwrapArgs(spec: BoxSpec, command: string, args: string[]): string[] {
  const user = spec.user
  const a: string[] = [
    '--die-with-parent',
    '--new-session',
    ...(user == null ? ['--unshare-user'] : []),
    '--unshare-ipc',
    '--unshare-pid',
    '--unshare-uts',
    '--unshare-cgroup-try',
    '--cap-drop',
    'ALL'
  ]
  // Kept only for setpriv's drop to the user, which clears them all.
  if (user != null) a.push('--cap-add', 'CAP_SETUID', '--cap-add', 'CAP_SETGID', '--cap-add', 'CAP_SETPCAP', '--cap-add', 'CAP_FOWNER')
  if (spec.network !== 'host') a.push('--unshare-net')
  a.push('--dev', '/dev', '--proc', '/proc', '--perms', '1777', '--tmpfs', '/tmp')
  // Mounts go shallow to deep, so a path bound inside a hidden directory (the
  // workspace in the data dir, node under home) lands on top of what hides it.
  const runOnly = spec.runOnly ?? []
  // A run-only file: root in a box of its own user namespace must not make another and take capabilities back in it.
  if (runOnly.length > 0 && a.includes('--unshare-user')) a.push('--disable-userns')
  const bound = [
    ...spec.readOnly,
    ...spec.writable,
    ...spec.readOnlyAt.map(([, box]) => box),
    ...runOnly.map(([, box]) => box),
    ...spec.sockets,
    ...(Array.isArray(spec.network) ? spec.network.map(b => b.socket) : [])
  ]
  const ops: Array<{ path: string; words: string[] }> = []
  for (const p of spec.readOnly) ops.push({ path: p, words: ['--ro-bind', p, p] })
  for (const h of spec.hidden) {
    // 0111: walk through to what is bound inside, but neither list nor create.
    ops.push({ path: h.path, words: ['--perms', '0111', '--tmpfs', h.path] })
    for (const e of h.entries) {
      const p = `${h.path}/${e.name}`
      // What leads to a bound path stays walkable; everything else held there is unreadable.
      if (bound.some(b => b === p || b.startsWith(p + '/'))) continue
      ops.push({ path: p, words: e.dir ? ['--perms', '0000', '--tmpfs', p] : ['--ro-bind', spec.standIn, p] })
    }
  }
  for (const p of spec.writable) ops.push({ path: p, words: ['--bind', p, p] })
  for (const [host, box] of spec.readOnlyAt) ops.push({ path: box, words: ['--ro-bind', host, box] })
  for (const [host, box] of runOnly) ops.push({ path: box, words: ['--ro-bind', host, box] })
  for (const s of spec.sockets) ops.push({ path: s, words: ['--bind', s, s] })
  if (Array.isArray(spec.network)) {
    for (const b of spec.network) ops.push({ path: b.socket, words: ['--bind', b.socket, b.socket] })
    if (spec.hostsFile != null) ops.push({ path: '/etc/hosts', words: ['--ro-bind', spec.hostsFile, '/etc/hosts'] })
  }
  // The directories bwrap makes on the way to a mount point are root's with mode 0700: a box's
  // user (agentd as root) could not walk through them. Each is made first, walkable.
  const targets = new Set(ops.map(op => op.path))
  const ways = new Set<string>()
  for (const t of targets) {
    for (let d = dirname(t); d !== '/' && d !== '.'; d = dirname(d)) if (!targets.has(d)) ways.add(d)
  }
  for (const d of ways) ops.push({ path: d, words: ['--perms', '0755', '--dir', d] })
  const depth = (p: string): number => p.split('/').filter(s => s !== '').length
  for (const op of ops.map((op, i) => ({ ...op, i })).sort((x, y) => depth(x.path) - depth(y.path) || x.i - y.i)) a.push(...op.words)
  for (const [k, v] of Object.entries(spec.env)) a.push('--setenv', k, v)
  a.push('--chdir', spec.cwd, '--')
  if (user != null) {
    args = [...dropTo(user), command, ...args]
    command = SETPRIV
  }
  if (!Array.isArray(spec.network) || spec.network.length === 0) return [...a, command, ...args]
  // Remote hosts are bridged on their own ports (443): binding those needs this one capability, in the box's own network namespace.
  return [
    ...a.slice(0, -3),
    '--cap-add',
    'CAP_NET_BIND_SERVICE',
    ...a.slice(-3),
    '/bin/sh',
    '-c',
    bridgeScript(spec.network),
    command,
    command,
    ...args
  ]
}

const SETPRIV = '/usr/bin/setpriv'

// setpriv's words that become `user` for good: no groups of root's, none to be gained, and one capability
// kept, CAP_FOWNER: the files the daemon checks out into the workspace are root's, and the agent (or a
// test's build) must be able to chmod and touch them. It acts only where the box may write (a
// read-only mount refuses any change) and reads nothing a file's mode refuses.
function dropTo(user: { uid: number; gid: number }): string[] {
  return [
    '--reuid',
    String(user.uid),
    '--regid',
    String(user.gid),
    '--clear-groups',
    '--inh-caps=-all,+fowner',
    '--ambient-caps=+fowner',
    '--bounding-set=-all,+fowner',
    '--no-new-privs',
    '--'
  ]
}

// Starts one socat per bridge, waits until each listens (so the command's first
// connection finds it), then becomes the command.
function bridgeScript(bridges: NetBridge[]): string {
  const lines = bridges.map(b => `socat TCP-LISTEN:${b.port},bind=${b.address},fork,reuseaddr UNIX-CONNECT:${b.socket} 2>/dev/null &`)
  const waits = bridges.map(
    b =>
      `n=0; until grep -qi ' ${hexAddress(b.address)}:${b.port.toString(16).padStart(4, '0')} ' /proc/net/tcp; do n=$((n+1)); if [ $n -gt 1000 ]; then echo 'agentd sandbox: the bridge to ${b.address}:${b.port} did not start' >&2; exit 70; fi; sleep 0.01; done`
  )
  return [...lines, ...waits, 'exec "$@"'].join('\n')
}

function hexAddress(ipv4: string): string {
  return ipv4
    .split('.')
    .reverse()
    .map(o => Number(o).toString(16).padStart(2, '0'))
    .join('')
    .toUpperCase()
}
