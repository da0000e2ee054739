// Restart benchmark: one agentd on a data dir of N seeded findings, started
// once (a full fold, which writes the checkpoints at stop), then stopped and
// started again R times, each from its checkpoints. Per restart: seconds
// from spawn to `ready`, the CPU seconds of that, the RSS, the first find
// (which must see every finding), and the start phases the daemon logs.
//
//   npm run bench:restart -- --entries 1000000 [--runs 3] [--dir /tmp/x] [--cpu-prof DIR] [--kill]
//
// With --kill, every stop is a SIGKILL (a crash, an OOM kill): the
// checkpoints are first removed and the daemon started on the log alone, and
// killed once it has written them while running; each restart then starts
// from what a killed daemon left.
//
// With --dir, a data dir seeded before with the same count and seed is
// reused (its `bench-seed.json` says which), so iterating on the restart does
// not sign a million entries each time.
import { existsSync } from 'node:fs'
import { mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { loadavg } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { AgentdProcess, seedLog } from '../scenarios/sync/helpers.js'
import { makeIdentity } from '../helpers/identity.js'
import { entryId, signEntry } from '../../src/core/log/entry.js'
import { encodeBody, type EntryKind } from '../../src/core/log/kinds.js'
import { LogState } from '../../src/core/log/log-state.js'
import type { Entry } from '../../src/gen/agency/v1/log.js'
import { openStore } from '../../src/store/index.js'

interface Args {
  entries: number
  authors: number
  runs: number
  /** the share of entries that are board entries (tasks, claims, releases, dones, test runs, integrations); the rest findings */
  board: number
  dir?: string
  profileDir?: string
  /** stop with SIGKILL, from checkpoints written while running */
  kill: boolean
}

function parseArgs(argv: string[]): Args {
  const a: Args = { entries: 100_000, authors: 20, runs: 3, board: 0, kill: false }
  for (let i = 0; i < argv.length; i++) {
    const v = argv[i + 1]
    switch (argv[i]) {
      case '--entries':
        a.entries = Number(v)
        i++
        break
      case '--authors':
        a.authors = Number(v)
        i++
        break
      case '--runs':
        a.runs = Number(v)
        i++
        break
      case '--board':
        a.board = Number(v)
        i++
        break
      case '--dir':
        a.dir = v
        i++
        break
      case '--cpu-prof':
        a.profileDir = v
        i++
        break
      case '--kill':
        a.kill = true
        break
      default:
        throw new Error(`unknown argument ${argv[i]}`)
    }
  }
  if (!(Number.isSafeInteger(a.entries) && a.entries > 0)) throw new Error('--entries: a positive count')
  return a
}

const SEED = 42

async function cpuSecondsOf(pid: number): Promise<number> {
  const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1].split(' ')
  return (Number(fields[11]) + Number(fields[12])) / 100
}

async function rssMiB(pid: number): Promise<{ rss: number; anon: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8')
  const kb = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) / 1024
  return { rss: kb('VmRSS'), anon: kb('RssAnon') }
}

/**
 * A log whose entries are board entries with probability `share` (a task's
 * life: its spec, a claim, a release, a claim at the next epoch, a test run,
 * an integration, a done) and findings otherwise, signed by `authors` authors.
 */
async function seedMixedLog(dir: string, entries: number, authors: number, share: number): Promise<void> {
  let x = SEED
  const random = (): number => {
    x = (x * 1103515245 + 12345) % 2 ** 31
    return x / 2 ** 31
  }
  const signers = await Promise.all(Array.from({ length: authors }, async () => (await makeIdentity()).signer))
  const feeds: Array<{ seq: number; prev: Uint8Array }> = signers.map(() => ({ seq: 0, prev: new Uint8Array(0) }))
  const start = Date.now() - entries
  const state = new LogState()
  let batch: Entry[] = []
  let step = 0
  const names = signers.map(s => s.author)
  const store = await openStore(dir)
  try {
    for (let i = 0; i < entries; i++) {
      const a = Math.floor(random() * signers.length)
      let kind: EntryKind = 'finding'
      let body: Uint8Array
      if (random() < share) {
        const t = Math.floor(step / 7)
        const task = `task-${t}`
        const holder = names[t % names.length]
        switch (step++ % 7) {
          case 0:
            kind = 'task'
            body = encodeBody('task', {
              id: task,
              title: `task ${t}`,
              description: 'a seeded task',
              deps: t > 0 && t % 5 !== 0 ? [`task-${t - 1}`] : [],
              scope: [`src/part${t % 37}/**`],
              priority: t % 3
            })
            break
          case 1:
            kind = 'claim'
            body = encodeBody('claim', { task, scope: [`src/part${t % 37}/**`], epoch: 1 })
            break
          case 2:
            kind = 'release'
            body = encodeBody('release', { task, epoch: 1, note: 'handing over', branch: `agency/${task}` })
            break
          case 3:
            kind = 'claim'
            body = encodeBody('claim', { task, scope: [], epoch: 2, takeoverOf: holder, branch: `agency/${task}`, handoff: 'handing over' })
            break
          case 4:
            kind = 'test_run'
            body = encodeBody('test_run', {
              commit: `c${t}`,
              branch: 'main',
              passed: 10,
              failed: t % 4 === 0 ? 1 : 0,
              total: 11,
              durationMs: 1000,
              summary: 'seeded'
            })
            break
          case 5:
            kind = 'integration'
            body = encodeBody('integration', { task, epoch: 2, commit: `m${t}`, result: 'merged', paths: [`src/part${t % 37}/a.ts`] })
            break
          default:
            kind = 'done'
            body = encodeBody('done', { task, epoch: 2, commit: `m${t}`, paths: [`src/part${t % 37}/a.ts`] })
        }
      } else {
        body = encodeBody('finding', {
          kind: 'discovery',
          text: `seeded finding ${i}: lease vector cursor digest ${i % 97}`,
          paths: [`src/part${i % 37}/file${i % 11}.ts`],
          tags: ['seeded']
        })
      }
      const feed = feeds[a]
      const entry = signEntry(signers[a], { seq: ++feed.seq, prev: feed.prev, lamport: i + 1, time: start + i, kind, body })
      feed.prev = entryId(entry)
      batch.push(entry)
      if (batch.length === 5000 || i === entries - 1) {
        const r = state.ingestBatch(batch)
        if (r.accepted.length !== batch.length)
          throw new Error(`the log core accepted ${r.accepted.length} of ${batch.length} seeded entries`)
        await store.log.putAccepted(r.accepted, { sync: false })
        batch = []
      }
    }
  } finally {
    await store.close()
  }
}

/** Seeds `dir` unless it holds a log seeded with the same count, authors, board share and seed. */
async function seededDir(dir: string, entries: number, authors: number, board: number): Promise<string> {
  const marker = join(dir, 'bench-seed.json')
  const want = JSON.stringify({ entries, authors, board, seed: SEED })
  if (existsSync(marker) && (await readFile(marker, 'utf8')) === want) return dir
  await rm(dir, { recursive: true, force: true })
  await mkdir(dir, { recursive: true })
  const t = performance.now()
  if (board > 0) await seedMixedLog(dir, entries, authors, board)
  else await seedLog(dir, { entries, authors, seed: SEED })
  process.stderr.write(`seeded ${entries} entries in ${((performance.now() - t) / 1000).toFixed(1)} s\n`)
  await writeFile(marker, want)
  return dir
}

/** The `start phases` line of the daemon's log (milliseconds per phase), the last one. */
function phasesOf(log: string): Record<string, number> | undefined {
  const lines = log.split('\n').filter(l => l.includes('"start phases"'))
  const last = lines.at(-1)
  if (last === undefined) return undefined
  try {
    return (JSON.parse(last) as { phases?: Record<string, number> }).phases
  } catch {
    return undefined
  }
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2))
  const dir = await seededDir(
    args.dir ?? `/tmp/agency-restart-${args.entries}${args.board > 0 ? `-board${args.board}` : ''}`,
    args.entries,
    args.authors,
    args.board
  )
  const logFile = join(dir, 'bench-agentd.log')
  const env = { AGENCY_LOG_LEVEL: 'info' }
  const daemon = new AgentdProcess({ name: 'bench-restart', dataDir: dir, readyTimeoutMs: 30 * 60_000, env, logFile })
  const search = async (query: string): Promise<{ ms: number; hits: number }> => {
    const t0 = performance.now()
    const r = await daemon.agency.call(
      c => c.searchFindings,
      { query, kind: '', pathPrefix: '', tag: '', author: '', since: 0, until: 0, limit: 20 },
      10 * 60_000
    )
    return { ms: performance.now() - t0, hits: r.hits.length }
  }
  const checkpoints = ['log-checkpoint', 'findings-checkpoint', 'board-checkpoint']
  try {
    if (args.kill) {
      // no checkpoint written at a stop: the daemon starts on the log alone and writes them while running
      for (const f of checkpoints) await rm(join(dir, f), { force: true })
      // and the findings checkpoint's parts (findings-checkpoint-files)
      for (const f of await readdir(dir)) if (f.startsWith('findings-part-')) await rm(join(dir, f), { force: true })
      await writeFile(logFile, '')
      const t = performance.now()
      const since = Date.now()
      await daemon.start()
      const pid = daemon.pid as number
      process.stderr.write(`start on the log alone (full fold) ${((performance.now() - t) / 1000).toFixed(1)} s\n`)
      const written = async (f: string): Promise<boolean> => {
        try {
          return (await stat(join(dir, f))).mtimeMs >= since && !existsSync(join(dir, `${f}.tmp`))
        } catch {
          return false
        }
      }
      for (;;) {
        if ((await Promise.all(checkpoints.map(written))).every(Boolean)) break
        if (performance.now() - t > 30 * 60_000) throw new Error('the checkpoints were not all written while running within 30 min')
        await new Promise(resolve => setTimeout(resolve, 200))
      }
      const cpu = await cpuSecondsOf(pid)
      const board = (await readFile(logFile, 'utf8'))
        .split('\n')
        .filter(l => l.includes('"board checkpoint written"'))
        .map(l => JSON.parse(l) as { bytes: number; encodeMs: number })
      process.stderr.write(
        `checkpoints written while running, ${((performance.now() - t) / 1000).toFixed(1)} s after spawn (${cpu.toFixed(2)} CPU s); board checkpoint: ${board.map(b => `${b.bytes} bytes, encoded in ${b.encodeMs} ms`).join('; ')}\n`
      )
      await daemon.stop('SIGKILL')
    }
    // the first start on a fresh seed folds the whole log; its stop writes the checkpoints
    if (!existsSync(join(dir, 'log-checkpoint'))) {
      const t = performance.now()
      await daemon.start()
      process.stderr.write(`first start (full fold) ${((performance.now() - t) / 1000).toFixed(1)} s\n`)
      await search('lease')
      await daemon.stop()
    }
    if (args.kill) console.log('Each stop a SIGKILL; the checkpoints those written while running.\n')
    console.log(
      '| entries | restart (s) | CPU s, spawn to ready | RSS / anon (MiB) | first find (ms), hits | tasks (done) | start phases (ms) | load (1 min) |'
    )
    console.log('|---:|---:|---:|---:|---:|---:|---|---:|')
    for (let r = 0; r < args.runs; r++) {
      const last = r === args.runs - 1
      daemon.options.nodeArgs = last && args.profileDir !== undefined ? ['--cpu-prof', '--cpu-prof-dir', args.profileDir] : []
      await writeFile(logFile, '')
      const load = loadavg()[0]
      const t = performance.now()
      await daemon.start()
      const seconds = (performance.now() - t) / 1000
      const cpu = await cpuSecondsOf(daemon.pid as number)
      const mem = await rssMiB(daemon.pid as number)
      const find = await search('lease vector')
      // the newest seeded finding is found: the search saw the whole log
      const newest = await search(`${args.entries - 1}`)
      if (newest.hits === 0 && args.board === 0)
        throw new Error(`the first searches after the restart did not find seeded finding ${args.entries - 1}`)
      const info = await daemon.logInfo()
      if (info.entries !== args.entries) throw new Error(`the daemon holds ${info.entries} entries, not ${args.entries}`)
      const { tasks } = await daemon.agency.call(c => c.listTasks, { state: '' })
      await daemon.stop(args.kill ? 'SIGKILL' : 'SIGTERM')
      const phases = phasesOf(await readFile(logFile, 'utf8'))
      const p =
        phases === undefined
          ? ''
          : Object.entries(phases)
              .map(([k, v]) => `${k} ${v.toFixed(0)}`)
              .join(', ')
      console.log(
        `| ${args.entries} | ${seconds.toFixed(2)} | ${cpu.toFixed(2)} | ${mem.rss.toFixed(0)} / ${mem.anon.toFixed(0)} | ${find.ms.toFixed(0)}, ${find.hits} | ${tasks.length} (${tasks.filter(t => t.state === 'done').length}) | ${p} | ${load.toFixed(1)} |`
      )
    }
  } finally {
    await daemon.stop()
  }
}

main().catch(err => {
  console.error(err)
  process.exit(1)
})
