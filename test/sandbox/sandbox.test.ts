// A box refuses what an agent's shell or a commit's test must not touch
// (the daemon's key, a peer's workspace, ~/.ssh, writes outside the
// workspace, a loopback port not on the allow-list), names each refusal and
// counts it; the same attempts, run with --sandbox none, succeed, so the
// refusals are the box's doing. Real bubblewrap, real processes.
import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createSandbox, detectSupport, type RefusalKind, type Sandbox } from '../../src/sandbox/index.js'
import type { HarnessLaunch } from '../../src/harness/types.js'

const support = detectSupport()
const why = support.bwrap.ok ? '' : support.bwrap.reason
if (why !== '') console.log(`skipping sandbox tests: ${why}`)

let root: string
let dataDir: string
let workspace: string
let peer: string
let home: string
let oldHome: string | undefined
const servers: Server[] = []
let allowedPort = 0
let deniedPort = 0

async function listen(server: Server, at: string | number): Promise<number> {
  servers.push(server)
  return await new Promise(resolve => {
    if (typeof at === 'string') server.listen(at, () => resolve(0))
    else server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port))
  })
}

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'agency-box-test-'))
  dataDir = join(root, 'swarm', 'agent-1')
  workspace = join(dataDir, 'workspace')
  peer = join(root, 'swarm', 'agent-2', 'workspace')
  home = join(root, 'home')
  for (const d of [workspace, peer, join(home, '.ssh'), join(dataDir, 'harness')]) mkdirSync(d, { recursive: true })
  writeFileSync(join(dataDir, 'identity.key'), 'SIGNING-KEY')
  writeFileSync(join(peer, 'notes.txt'), 'PEER-WORK')
  writeFileSync(join(home, '.ssh', 'id_ed25519'), 'SSH-KEY')
  oldHome = process.env.HOME
  process.env.HOME = home
  allowedPort = await listen(
    createServer(s => s.end('ALLOWED-PORT\n')),
    0
  )
  deniedPort = await listen(
    createServer(s => s.end('DENIED-PORT\n')),
    0
  )
  await listen(
    createServer(s => s.end('DAEMON-SOCKET\n')),
    join(dataDir, 'agentd.sock')
  )
})

afterAll(async () => {
  process.env.HOME = oldHome
  await Promise.all(servers.map(async s => await new Promise(resolve => s.close(resolve))))
  rmSync(root, { recursive: true, force: true })
})

// Each attempt prints OK:<name> when it got through and NO:<name> when it did not.
function attempts(): string {
  const connect = (port: number): string =>
    `node -e "require('net').connect(${port},'127.0.0.1').on('data',d=>{process.stdout.write(String(d));process.exit(0)}).on('error',e=>{console.error('connect: '+e.message);process.exit(1)})"`
  return [
    `cat ${dataDir}/identity.key && echo OK:key || echo NO:key`,
    `cat ${peer}/notes.txt && echo OK:peer || echo NO:peer`,
    'cat "$REAL_HOME/.ssh/id_ed25519" && echo OK:ssh || echo NO:ssh',
    `echo x > ${root}/swarm/outside.txt && echo OK:write || echo NO:write`,
    `${connect(deniedPort)} && echo OK:loopback || echo NO:loopback`,
    `${connect(allowedPort)} && echo OK:allowed || echo NO:allowed`,
    `node -e "require('net').connect('${join(dataDir, 'agentd.sock')}').on('data',d=>{process.stdout.write(String(d));process.exit(0)}).on('error',e=>{console.error(e.message);process.exit(1)})" && echo OK:daemon || echo NO:daemon`,
    'echo y > inside.txt && echo OK:workspace || echo NO:workspace'
  ].join('\n')
}

async function run(launch: HarnessLaunch): Promise<string> {
  const child = spawn(launch.command, launch.args, {
    cwd: launch.cwd,
    env: { ...process.env, ...launch.env, REAL_HOME: home },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let out = ''
  child.stdout.on('data', (b: Buffer) => {
    out += b.toString()
  })
  child.stderr.on('data', (b: Buffer) => {
    out += b.toString()
  })
  await new Promise(resolve => child.on('close', resolve))
  return out
}

function shellLaunch(): HarnessLaunch {
  return { command: '/bin/sh', args: ['-c', attempts()], env: {}, cwd: workspace, files: [], pathPrepend: [] }
}

describe.skipIf(why !== '')('a harness in a bubblewrap box', () => {
  it('is refused the key, a peer, ~/.ssh, writes outside and a loopback port not allowed; reaches its daemon, its allowed port and its workspace; --sandbox none reaches them all', async () => {
    const refusals: RefusalKind[] = []
    const logFile = join(dataDir, 'harness.log')
    const boxed: Sandbox = createSandbox({ mode: 'bwrap', dataDir, allow: [`127.0.0.1:${allowedPort}`], onRefusal: k => refusals.push(k) })
    expect(boxed.kind).toBe('bwrap')
    const h = await boxed.confineHarness(shellLaunch(), { harness: 'cmd:sh', apiAddress: `unix:${join(dataDir, 'agentd.sock')}`, logFile })
    writeFileSync(logFile, '')
    const out = await run(h.launch)
    writeFileSync(logFile, out, { flag: 'a' })
    await h.stop()
    for (const denied of ['key', 'peer', 'ssh', 'write', 'loopback']) expect(out, out).toContain(`NO:${denied}`)
    for (const allowed of ['allowed', 'daemon', 'workspace']) expect(out, out).toContain(`OK:${allowed}`)
    expect(out).not.toContain('SIGNING-KEY')
    expect(out).not.toContain('DENIED-PORT')
    expect(existsSync(join(root, 'swarm', 'outside.txt'))).toBe(false)
    const log = readFileSync(logFile, 'utf8')
    expect(log).toMatch(/agentd: sandbox refused \(fs\): .*identity\.key: Permission denied/)
    expect(log).toMatch(/agentd: sandbox refused \(net\): .*ECONNREFUSED/)
    expect(refusals.filter(k => k === 'fs').length).toBeGreaterThanOrEqual(4)
    expect(refusals).toContain('net')

    const open = createSandbox({ mode: 'none', dataDir })
    const u = await open.confineHarness(shellLaunch(), { harness: 'cmd:sh', apiAddress: `unix:${join(dataDir, 'agentd.sock')}`, logFile })
    const without = await run(u.launch)
    for (const name of ['key', 'peer', 'ssh', 'write', 'loopback', 'allowed', 'daemon', 'workspace'])
      expect(without, without).toContain(`OK:${name}`)
    rmSync(join(root, 'swarm', 'outside.txt'), { force: true })
  })
})
