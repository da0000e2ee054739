// A commit's test run in the box: a fork bomb or a memory hog fails that run
// with a clear reason, and the process that ran it carries on; the network is
// off unless asked for; the tree it runs in is the only thing it can write.
import { copyFileSync, mkdtempSync, mkdirSync, rmSync, writeFileSync, existsSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runVerify } from '../../src/repo/verify.js'
import { createSandbox, detectSupport, type RefusalKind } from '../../src/sandbox/index.js'

const support = detectSupport()
const why = support.bwrap.ok ? '' : support.bwrap.reason
if (why !== '') console.log(`skipping sandboxed test-run tests: ${why}`)

let root: string
let tree: string
let dataDir: string
let server: Server
let port = 0
const refusals: RefusalKind[] = []

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'agency-testrun-'))
  dataDir = join(root, 'agent-1')
  tree = join(root, 'tree')
  mkdirSync(tree, { recursive: true })
  mkdirSync(dataDir, { recursive: true })
  writeFileSync(join(dataDir, 'identity.key'), 'SIGNING-KEY')
  server = createServer(s => s.end('SERVICE\n'))
  port = await new Promise(resolve => server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)))
})

afterAll(async () => {
  await new Promise(resolve => server.close(resolve))
  rmSync(root, { recursive: true, force: true })
})

const box = (testNetwork = false): ReturnType<typeof createSandbox> =>
  createSandbox({
    mode: 'bwrap',
    dataDir,
    testNetwork,
    limits: { pids: 64, memoryBytes: 256 * 1024 ** 2 },
    onRefusal: k => refusals.push(k)
  })
const connect = (): string =>
  `node -e "require('net').connect(${port},'127.0.0.1').on('data',d=>{console.log('GOT '+d);process.exit(0)}).on('error',e=>{console.log('connect: '+e.message);process.exit(1)})"`

describe.skipIf(why !== '')('a test run in the box', () => {
  it('a fork bomb fails that run, naming the process bound', async () => {
    const run = await runVerify({
      command: 'bomb() { bomb | bomb & }; bomb; sleep 1; exit 0',
      cwd: tree,
      timeoutMs: 20_000,
      confinement: box()
    })
    expect(run.ok).toBe(false)
    expect(run.exitCode).toBe(0) // it says it passed; the bound it hit fails it
    expect(run.summary).toMatch(/the test run hit its process bound \(64 processes at once\): \d+ fork\(s\) refused/)
    // The process that ran it still starts processes.
    const after = await runVerify({ command: 'echo fine', cwd: tree, confinement: box() })
    expect(after.ok).toBe(true)
  }, 60_000)

  it('a memory hog is killed at its bound and the run fails saying so', async () => {
    const run = await runVerify({
      command: 'node -e "const a=[];for(;;)a.push(Buffer.alloc(1<<20,1))"',
      cwd: tree,
      timeoutMs: 60_000,
      confinement: box()
    })
    expect(run.ok).toBe(false)
    expect(run.summary).toMatch(/the test run went over its memory bound \(256 MiB\) and was killed/)
  }, 90_000)

  it('runs an execute-only file without reading its bytes, even as root in the box; unconfined the same file is read', async () => {
    const ref = join(root, 'reference')
    copyFileSync('/bin/sleep', ref)
    const tries = [
      '/run/agency/reference/executable 0 && echo OK:run || echo NO:run',
      'cat /run/agency/reference/executable >/dev/null && echo OK:read || echo NO:read',
      'cp /run/agency/reference/executable copied && echo OK:copy || echo NO:copy',
      'chmod 0755 /run/agency/reference/executable && echo OK:chmod || echo NO:chmod',
      'unshare -Ur cat /run/agency/reference/executable >/dev/null && echo OK:userns || echo NO:userns',
      // while it runs: its /proc entries do not give its bytes either
      '/run/agency/reference/executable 5 & sleep 0.5; kill -0 $! && echo running; cat /proc/$!/exe >/dev/null && echo OK:proc || echo NO:proc; kill $!'
    ].join('; ')
    const runOnly = [`${ref}=/run/agency/reference/executable`]
    const boxed = await runVerify({ command: tries, cwd: tree, confinement: createSandbox({ mode: 'bwrap', dataDir, runOnly }) })
    expect(boxed.summary).toContain('running')
    expect(boxed.summary).toContain('OK:run')
    for (const name of ['read', 'copy', 'chmod', 'userns', 'proc']) expect(boxed.summary, boxed.summary).toContain(`NO:${name}`)
    expect(boxed.summary).toMatch(/sandbox refused \(fs\): .*reference\/executable: Permission denied/)
    const open = await runVerify({
      command: `cat ${ref} | head -c 4 | od -c | head -1`,
      cwd: tree,
      confinement: createSandbox({ mode: 'none', dataDir, runOnly })
    })
    expect(open.summary).toMatch(/177 +E +L +F/)
  }, 60_000)

  it("has no network by default, the host's with --test-network on, and cannot read the data dir or write outside its tree", async () => {
    const off = await runVerify({
      command: `${connect()}; cat ${dataDir}/identity.key; echo x > ${root}/outside; echo y > made-here; exit 0`,
      cwd: tree,
      confinement: box()
    })
    expect(off.summary).toMatch(/connect: connect E(CONNREFUSED|NETUNREACH)/)
    expect(off.summary).not.toContain('SIGNING-KEY')
    expect(off.summary).toMatch(/sandbox refused \(fs\): .*identity\.key: Permission denied/)
    expect(off.summary).toMatch(/sandbox refused \(net\)/)
    expect(existsSync(join(root, 'outside'))).toBe(false)
    expect(existsSync(join(tree, 'made-here'))).toBe(true)
    expect(refusals).toContain('fs')
    const on = await runVerify({ command: connect(), cwd: tree, confinement: box(true) })
    expect(on.summary).toContain('GOT SERVICE')
    const unconfined = await runVerify({
      command: `cat ${dataDir}/identity.key`,
      cwd: tree,
      confinement: createSandbox({ mode: 'none', dataDir })
    })
    expect(unconfined.summary).toContain('SIGNING-KEY')
  }, 60_000)
})
