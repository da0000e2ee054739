// What a box costs at start: one harness run (a command that exits at once,
// started boxed the way the supervisor starts it) and one test run (runVerify
// of `true`), each with --sandbox bwrap and with none, in one run of this
// script. Writes docs/benchmarks/bench-sandbox.md.
// Run: npm run bench:sandbox [-- <runs per case>]
import { spawn, execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { cpus, tmpdir, totalmem } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { runVerify } from '../../src/repo/verify.js'
import { createSandbox, detectSupport, type Sandbox } from '../../src/sandbox/index.js'
import type { HarnessLaunch } from '../../src/harness/types.js'

const RUNS = Number(process.argv[2] ?? 20)
const OUT = join(import.meta.dirname, '..', '..', 'docs', 'benchmarks')
const support = detectSupport()
if (!support.bwrap.ok) {
  console.log(`bench:sandbox: ${support.bwrap.reason}`)
  process.exit(1)
}

const root = mkdtempSync(join(tmpdir(), 'agency-bench-sandbox-'))
const dataDir = join(root, 'agent')
const workspace = join(dataDir, 'workspace')
mkdirSync(workspace, { recursive: true })
writeFileSync(join(dataDir, 'identity.key'), 'key')

async function runLaunch(l: HarnessLaunch): Promise<void> {
  const child = spawn(l.command, l.args, { cwd: l.cwd, env: { ...process.env, ...l.env }, stdio: 'ignore' })
  await new Promise(resolve => child.on('close', resolve))
}

async function harnessStart(s: Sandbox): Promise<number[]> {
  const ms: number[] = []
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now()
    const boxed = await s.confineHarness(
      { command: '/bin/true', args: [], env: {}, cwd: workspace, files: [] },
      { harness: 'cmd:true', apiAddress: '127.0.0.1:1', logFile: join(dataDir, 'harness.log') }
    )
    await runLaunch(boxed.launch)
    await boxed.stop()
    ms.push(performance.now() - t)
  }
  return ms
}

async function testStart(s: Sandbox): Promise<number[]> {
  const ms: number[] = []
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now()
    await runVerify({ command: 'true', cwd: workspace, confinement: s })
    ms.push(performance.now() - t)
  }
  return ms
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const p90 = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.9)]

const box = createSandbox({ mode: 'bwrap', dataDir, support })
const none = createSandbox({ mode: 'none', dataDir })
const rows: string[] = []
try {
  for (const [what, measure] of [
    ['harness run (confine + start + exit)', harnessStart],
    ['test run (runVerify `true`)', testStart]
  ] as const) {
    const bare = await measure(none)
    const boxed = await measure(box)
    rows.push(
      `| ${what} | ${median(bare).toFixed(1)} | ${median(boxed).toFixed(1)} | ${(median(boxed) - median(bare)).toFixed(1)} | ${p90(boxed).toFixed(1)} |`
    )
    console.log(rows.at(-1))
  }
} finally {
  rmSync(root, { recursive: true, force: true })
}

const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim()
const text = `# bench:sandbox: what a box costs at start

\`npm run bench:sandbox -- ${RUNS}\`, ${new Date().toISOString().slice(0, 10)}, commit ${commit}; ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 1024 ** 3)} GiB, Node ${process.version}, shared with other work.
${RUNS} runs per case, none then bwrap, in one run of the script. A harness run here is a command
that exits at once, boxed the way agentd boxes a harness (bridges for the model endpoints and the
daemon started and stopped with it); a test run is \`runVerify\` of \`true\` (box, control group).

| case | none, median ms | bwrap, median ms | added, ms | bwrap, p90 ms |
|---|---:|---:|---:|---:|
${rows.join('\n')}
`
writeFileSync(join(OUT, 'bench-sandbox.md'), text)
console.log(text)
