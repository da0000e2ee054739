// agentd as root: the box drops to an unprivileged user (--sandbox-user,
// default `agency`), so the host's file modes bind inside. A root file of mode
// 0600 beside the harness's files cannot be read from the box, while the
// workspace, the box's home and the files the daemon's git writes in the
// workspace later stay writable; a test run runs as that user too. The same
// read, without a box, succeeds. Real bubblewrap, real users (root only).
import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createSandbox, detectSupport, runsAsRoot } from '../../src/sandbox/index.js'
import { sandboxUser } from '../../src/sandbox/user.js'
import type { HarnessLaunch } from '../../src/harness/types.js'

const support = detectSupport()
const why = !runsAsRoot() ? 'not root' : support.bwrap.ok ? '' : support.bwrap.reason
if (why !== '') console.log(`skipping the sandbox user tests: ${why}`)

let root: string
let dataDir: string
let workspace: string
let secret: string

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'agency-box-user-'))
  dataDir = join(root, 'agent')
  workspace = join(dataDir, 'workspace')
  mkdirSync(workspace, { recursive: true })
  mkdirSync(join(dataDir, 'harness'), { recursive: true })
  writeFileSync(join(workspace, 'tracked.txt'), 'from git\n')
  // Outside every hidden directory: the harness dir is bound into the box, read-only.
  secret = join(dataDir, 'harness', 'root-only.txt')
  writeFileSync(secret, 'ROOT-ONLY', { mode: 0o600 })
})

afterAll(() => {
  rmSync(root, { recursive: true, force: true })
})

async function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; out: string }> {
  const child = spawn(command, args, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  child.stdout.on('data', (b: Buffer) => {
    out += b.toString()
  })
  child.stderr.on('data', (b: Buffer) => {
    out += b.toString()
  })
  const code = await new Promise<number | null>(resolve => child.on('close', resolve))
  return { code, out }
}

const script = (): string =>
  [
    'echo "user:$(id -un):$(id -u)"',
    `cat ${secret} && echo OK:secret || echo NO:secret`,
    'echo mine > mine.txt && echo OK:workspace || echo NO:workspace',
    'echo more >> tracked.txt && echo OK:tracked || echo NO:tracked',
    'echo more >> later.txt && echo OK:later || echo NO:later',
    'echo x > "$HOME/state" && echo OK:home || echo NO:home',
    'echo x > /tmp/t && echo OK:tmp || echo NO:tmp'
  ].join('\n')

describe.skipIf(why !== '')('agentd as root: the box runs as an unprivileged user', () => {
  it('cannot read a root file of mode 0600, writes its workspace, its home and what the daemon wrote there since; without a box the file is read', async () => {
    const boxed = createSandbox({ mode: 'bwrap', dataDir })
    const user = sandboxUser()
    expect(boxed.summary).toContain(`as user agency (uid ${user.uid})`)
    expect(user.uid).not.toBe(0)
    const launch: HarnessLaunch = {
      command: '/bin/sh',
      args: ['-c', script()],
      env: {},
      cwd: workspace,
      files: [{ path: join(dataDir, 'harness', 'prompt.md'), content: 'x' }]
    }
    const h = await boxed.confineHarness(launch, {
      harness: 'cmd:sh',
      apiAddress: 'unix:/nonexistent.sock',
      logFile: join(dataDir, 'harness.log')
    })
    // The daemon's git writes in the workspace after the box is made (a claim's checkout): the agent may change that too.
    writeFileSync(join(workspace, 'later.txt'), 'from the daemon\n')
    expect(statSync(join(workspace, 'later.txt')).gid).toBe(user.gid)
    const r = await run(h.launch.command, h.launch.args, workspace, h.launch.env)
    await h.stop()
    expect(r.out).toContain(`user:agency:${user.uid}`)
    expect(r.out).toContain('NO:secret')
    expect(r.out).not.toContain('ROOT-ONLY')
    for (const ok of ['workspace', 'tracked', 'later', 'home', 'tmp']) expect(r.out, r.out).toContain(`OK:${ok}`)
    expect(statSync(join(workspace, 'mine.txt')).uid).toBe(user.uid)
    expect(readFileSync(join(workspace, 'later.txt'), 'utf8')).toBe('from the daemon\nmore\n')
    // Nothing changed on the secret's side: still root's, still 0600.
    expect(statSync(secret).mode & 0o777).toBe(0o600)
    expect(statSync(secret).uid).toBe(0)

    const open = createSandbox({ mode: 'none', dataDir })
    const u = await open.confineHarness(
      { ...launch, args: ['-c', `cat ${secret} && echo OK:secret`] },
      { harness: 'cmd:sh', apiAddress: 'unix:/nonexistent.sock', logFile: join(dataDir, 'harness.log') }
    )
    const without = await run(u.launch.command, u.launch.args, workspace, u.launch.env)
    expect(without.out).toContain('ROOT-ONLY')
    expect(without.out).toContain('OK:secret')
  })

  it('a test run runs as that user in its tree, and cannot read the root file either', async () => {
    const boxed = createSandbox({ mode: 'bwrap', dataDir })
    const user = sandboxUser()
    const tree = mkdtempSync(join(root, 'scratch-'))
    writeFileSync(join(tree, 'test.sh'), 'echo checked out\n')
    const t = boxed.confineTest(
      `echo "user:$(id -u)"; cat ${join(dataDir, 'harness', 'root-only.txt')} || echo NO:secret; echo out > result.txt && echo OK:tree`,
      tree,
      {}
    )
    const r = await run(t.command, t.args, tree, t.env)
    t.finish(r.out)
    expect(r.out, r.out).toContain(`user:${user.uid}`)
    expect(r.out).toContain('NO:secret')
    expect(r.out).toContain('OK:tree')
  })

  it('refuses a user name that is not one, and root itself', () => {
    expect(() => createSandbox({ mode: 'bwrap', dataDir, user: 'no such user' })).toThrow(
      /--sandbox-user: "no such user" is not a user name/
    )
    expect(() => createSandbox({ mode: 'bwrap', dataDir, user: 'root' })).toThrow(/it is root/)
  })
})
