// npm run bench:integrate — integrations per minute with 1, 4 and 16
// concurrent agents on a local bare repository: naive push-and-retry
// (every agent runs `integrate`) against the integrator queue (agents push a
// request ref; one integrator batches, verifies once, bisects on failure).
// Usage: npm run bench:integrate -- [--agents 1,4,16] [--per-agent 3] [--verify "sleep 0.3"] [--out results]
import '../../src/polyfill.js'
import { execFile } from 'node:child_process'
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { openWorkspace, integrate, integrateBatch, pushRequestRef, type Workspace, type IntegrationRequest } from '../../src/repo/index.js'

const run = promisify(execFile)
process.env.GIT_CONFIG_GLOBAL = '/dev/null'
process.env.GIT_CONFIG_NOSYSTEM = '1'
process.env.AGENCY_LOG_LEVEL ??= 'silent'

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`)
  return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1] : fallback
}

const AGENTS = arg('agents', '1,4,16').split(',').map(Number)
const PER_AGENT = Number(arg('per-agent', '3'))
const VERIFY = arg('verify', 'sleep 0.3')
const OUT = arg('out', 'results')

async function sharedRepo(root: string): Promise<string> {
  const bare = join(root, 'shared.git')
  const seed = join(root, 'seed')
  await run('git', ['init', '-q', '--bare', '-b', 'main', bare])
  await run('git', ['init', '-q', '-b', 'main', seed])
  await writeFile(join(seed, 'README.md'), '# bench\n')
  await run('git', ['add', '-A'], { cwd: seed })
  await run('git', ['-c', 'user.name=s', '-c', 'user.email=s@s', 'commit', '-q', '-m', 'seed'], { cwd: seed })
  await run('git', ['push', '-q', bare, 'main'], { cwd: seed })
  return bare
}

async function workspaces(root: string, bare: string, n: number): Promise<Workspace[]> {
  const out: Workspace[] = []
  for (let i = 0; i < n; i++) {
    out.push(
      await openWorkspace({
        remote: bare,
        workdir: join(root, `agent${i}`),
        agentId: `agent${i}`,
        mirrorDir: join(root, 'mirror'),
        identity: { name: `agent${i}`, email: `a${i}@bench` }
      })
    )
  }
  return out
}

async function work(ws: Workspace, task: string): Promise<void> {
  await ws.checkoutTask(task)
  await mkdir(join(ws.dir, 'work'), { recursive: true })
  await writeFile(join(ws.dir, 'work', `${task}.txt`), `${task}\n`)
  await run('git', ['add', '-A'], { cwd: ws.dir })
  await run('git', ['commit', '-q', '-m', task], { cwd: ws.dir })
}

interface Row {
  mode: string
  agents: number
  integrations: number
  seconds: number
  perMinute: number
  verifyRuns: number
  retries: number
  contended: number
}

async function naive(n: number): Promise<Row> {
  const root = await mkdtemp(join(tmpdir(), 'agency-bench-int-'))
  try {
    const wss = await workspaces(root, await sharedRepo(root), n)
    let verifyRuns = 0
    let retries = 0
    let contended = 0
    let landed = 0
    const started = performance.now()
    await Promise.all(
      wss.map(async (ws, i) => {
        for (let k = 0; k < PER_AGENT; k++) {
          const task = `t${i}-${k}`
          await work(ws, task)
          while (true) {
            const r = await integrate({ workspace: ws, task, epoch: 1, verify: VERIFY, checkFence: async () => {}, maxAttempts: 8 })
            verifyRuns += r.attempts
            retries += r.retries
            if (r.result === 'merged' || r.result === 'up-to-date') {
              landed++
              break
            }
            if (r.result === 'contended') {
              contended++
              continue
            }
            throw new Error(`integrate ${task}: ${r.result}`)
          }
        }
      })
    )
    const seconds = (performance.now() - started) / 1000
    return {
      mode: 'naive push-and-retry',
      agents: n,
      integrations: landed,
      seconds,
      perMinute: (landed / seconds) * 60,
      verifyRuns,
      retries,
      contended
    }
  } finally {
    await rm(root, { recursive: true, force: true })
  }
}

async function queue(n: number): Promise<Row> {
  const root = await mkdtemp(join(tmpdir(), 'agency-bench-int-'))
  try {
    const bare = await sharedRepo(root)
    const wss = await workspaces(root, bare, n)
    const integrator = (await workspaces(join(root, 'integrator'), bare, 1))[0]
    const pending: IntegrationRequest[] = []
    let verifyRuns = 0
    let retries = 0
    let landed = 0
    const total = n * PER_AGENT
    const started = performance.now()
    const producers = Promise.all(
      wss.map(async (ws, i) => {
        for (let k = 0; k < PER_AGENT; k++) {
          const task = `t${i}-${k}`
          await work(ws, task)
          const { ref, commit } = await pushRequestRef(ws, task)
          pending.push({ ref, commit, task, epoch: 1, author: ws.agentId })
        }
      })
    )
    while (landed < total) {
      const batch = pending.splice(0, 16)
      if (batch.length === 0) {
        await new Promise(resolve => setTimeout(resolve, 20))
        continue
      }
      const r = await integrateBatch({ workspace: integrator, requests: batch, verify: VERIFY })
      verifyRuns += r.verifyRuns
      retries += r.retries
      landed += r.landed.length + r.alreadyMerged.length
      for (const d of r.deferred) pending.push(d.request)
      if (r.conflicts.length + r.failed.length > 0) throw new Error('unexpected conflict or failure in the benchmark')
    }
    await producers
    const seconds = (performance.now() - started) / 1000
    return {
      mode: 'integrator queue',
      agents: n,
      integrations: landed,
      seconds,
      perMinute: (landed / seconds) * 60,
      verifyRuns,
      retries,
      contended: 0
    }
  } finally {
    await rm(root, { recursive: true, force: true })
  }
}

const rows: Row[] = []
for (const n of AGENTS) {
  for (const mode of [naive, queue]) {
    const row = await mode(n)
    rows.push(row)
    process.stderr.write(`${row.mode} with ${n} agents: ${row.integrations} integrations in ${row.seconds.toFixed(1)} s\n`)
  }
}
const table = [
  `Integrations per minute on a local bare repository; verify = \`${VERIFY}\`, ${PER_AGENT} integrations per agent.`,
  '',
  '| mode | agents | integrations | seconds | per minute | verify runs | push retries |',
  '|---|---:|---:|---:|---:|---:|---:|',
  ...rows.map(
    r =>
      `| ${r.mode} | ${r.agents} | ${r.integrations} | ${r.seconds.toFixed(1)} | ${r.perMinute.toFixed(1)} | ${r.verifyRuns} | ${r.retries} |`
  )
].join('\n')
await mkdir(OUT, { recursive: true })
await writeFile(join(OUT, 'bench-integrate.md'), table + '\n')
process.stdout.write(table + '\n')
