// `npm run check:real-faults -- --schedules N --seed S [--hosts H] [--active-ms MS] [--kinds k,...] [--break settle|fence]`:
// the fault checks (src/sim/faults) over histories recorded from real agentd
// processes on network namespaces, one seeded schedule of faults after
// another. A violation prints the seed, the schedule and the history cut to
// what it names. The last line: schedules=N violations=V faults=<kinds>.
// --history-dir D writes each violating run's whole record to D/seed-<seed>.json.
// Needs root, iproute2 and a build (npm run build).
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { testbedUnavailable } from '../scenarios/multi-host/testbed.js'
import { cutHistory, formatEvent } from './history-cut.js'
import { runRealSchedule } from './real-world.js'
import { describeSchedule, FAULT_KINDS, randomRealSchedule, type RealFaultKind } from './real-schedule.js'
import { CampaignFigures } from './figures.js'

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`)
  return i >= 0 ? process.argv[i + 1] : undefined
}

async function main(): Promise<number> {
  const schedules = Number(arg('schedules') ?? 3)
  const seed = Number(arg('seed') ?? Date.now() % 1_000_000)
  const hosts = Number(arg('hosts') ?? 3)
  const activeMs = Number(arg('active-ms') ?? 30_000)
  const kinds = arg('kinds')?.split(',') as RealFaultKind[] | undefined
  if (kinds?.some(k => !FAULT_KINDS.includes(k)) === true) throw new Error(`--kinds: some of ${FAULT_KINDS.join(', ')}`)
  const figures = new CampaignFigures()
  const brk = arg('break')
  if (brk !== undefined && brk !== 'settle' && brk !== 'fence') throw new Error('--break is settle or fence')
  const why = await testbedUnavailable()
  if (why != null) {
    process.stdout.write(`check:real-faults cannot run here: ${why}\n`)
    return 2
  }
  if (!existsSync(join(fileURLToPath(new URL('../../', import.meta.url)), 'dist/src/cli/agentd.js')))
    throw new Error('build first: npm run build')

  const applied = new Map<string, number>()
  let violating = 0
  const started = Date.now()
  process.stdout.write(
    `check:real-faults: ${schedules} schedules from seed ${seed}, ${hosts} hosts, ${activeMs} ms of faults each${brk !== undefined ? `, with the ${brk} safeguard off` : ''}\n`
  )
  for (let i = 0; i < schedules; i++) {
    const s = randomRealSchedule((seed + i) >>> 0, { hosts, activeMs, kinds })
    const r = await runRealSchedule(s, {
      breakSafeguard: brk,
      log: line => {
        process.stdout.write(`${line}\n`)
      }
    })
    for (const [k, v] of r.applied) applied.set(k, (applied.get(k) ?? 0) + v)
    figures.add(r.record.history)
    const ops = r.record.history.events.filter(e => e.kind === 'invoke').length
    const landed = r.record.branch.landed.length
    process.stdout.write(
      `schedule ${i + 1}/${schedules} seed ${s.seed}: ${ops} calls, ${landed} landed, ${[...r.applied].map(([k, v]) => `${k}×${v}`).join(' ')}${r.exits.length > 0 ? `, exited on their own: ${r.exits.join(' ')}` : ''}${r.converged ? '' : ', did NOT converge'}, ${Math.round(r.wallMs / 1000)} s: ${r.violations.length === 0 ? 'ok' : `${r.violations.length} violations`}\n`
    )
    if (process.env.AGENCY_CAMPAIGN_VERBOSE === '1') for (const [k, v] of r.errors) process.stdout.write(`    ${v}× ${k}\n`)
    if (r.violations.length === 0) continue
    violating++
    process.stdout.write(
      `VIOLATION in schedule seed ${s.seed} (replay: --seed ${s.seed} --schedules 1 --hosts ${hosts} --active-ms ${activeMs}${kinds !== undefined ? ` --kinds ${kinds.join(',')}` : ''}${brk !== undefined ? ` --break ${brk}` : ''})\n${describeSchedule(s)}\n`
    )
    for (const v of r.violations) process.stdout.write(`  (${v.check}) ${v.text}\n`)
    const dir = arg('history-dir')
    if (dir !== undefined) {
      mkdirSync(dir, { recursive: true })
      writeFileSync(
        join(dir, `seed-${s.seed}.json`),
        JSON.stringify({ schedule: s, violations: r.violations, record: { ...r.record, winners: [...r.record.winners] } }, null, 1)
      )
    }
    process.stdout.write('  the history, cut to what the first violation names:\n')
    for (const e of cutHistory(r.record.history.events, r.violations[0])) process.stdout.write(`  ${formatEvent(e)}\n`)
  }
  for (const line of figures.lines()) process.stdout.write(`${line}\n`)
  process.stdout.write(`wall time ${Math.round((Date.now() - started) / 1000)} s\n`)
  process.stdout.write(`schedules=${schedules} violations=${violating} faults=${[...applied.keys()].sort().join(',')}\n`)
  return violating > 0 ? 1 : 0
}

main().then(
  code => {
    process.exitCode = code
  },
  err => {
    process.stderr.write(`check:real-faults: ${(err as Error).stack ?? String(err)}\n`)
    process.exitCode = 2
  }
)
