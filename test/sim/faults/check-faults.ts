// The fault-schedule checker. Not a vitest test; run it with
//
//   npm run check:faults -- --schedules N --seed S [--shrink K] [--out DIR]
//
// Runs N seeded schedules of crashes (some losing unsynced writes) and
// restarts, partitions and heals, message loss, duplication and reordering,
// and clock skew through the simulator, which runs the core claim protocol;
// records each run's history and checks it (src/sim/faults/checks.ts). A
// failing schedule is printed with its seed, its violations and the shrunk
// schedule that still fails. The last line is `schedules=N violations=V`; the
// exit status is 1 when V > 0. With --out, the summary also goes to
// DIR/check-faults.md.
import '../../../src/polyfill.js'
import { mkdir, writeFile } from 'node:fs/promises'
import { cpus } from 'node:os'
import { join } from 'node:path'
import { checkFaults, scheduleSeed } from '../../../src/sim/faults/check-faults.js'

interface Args {
  schedules: number
  seed: number
  shrink: number
  out?: string
}

function parseArgs(argv: string[]): Args {
  const args: Args = { schedules: 100, seed: 1, shrink: 1 }
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]
    const n = Number(argv[i + 1])
    const whole = (): number => {
      if (!Number.isSafeInteger(n) || n < 0) throw new Error(`${flag} takes a whole number`)
      i++
      return n
    }
    switch (flag) {
      case '--schedules':
        args.schedules = whole()
        break
      case '--seed':
        args.seed = whole()
        break
      case '--shrink':
        args.shrink = whole()
        break
      case '--out':
        args.out = argv[++i]
        if (args.out === undefined || args.out === '') throw new Error('--out needs a folder')
        break
      default:
        throw new Error(`unknown argument ${flag} (--schedules N --seed S [--shrink K] [--out DIR])`)
    }
  }
  return args
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2))
  const started = performance.now()
  const summary = checkFaults({ schedules: args.schedules, seed: args.seed, shrink: args.shrink })
  const wall = (performance.now() - started) / 1000
  const lines: string[] = []
  for (const f of summary.failed) {
    lines.push(`FAILED schedule seed ${f.seed} (replay: --schedules 1 --seed ${f.seed}):`)
    for (const v of f.violations.slice(0, 10)) lines.push(`  (${v.check}) ${v.text}`)
    lines.push(`shrunk schedule, still failing (${f.shrunkViolations.map(v => v.check).join('') || 'none'}):`)
    lines.push(`  ${JSON.stringify(f.shrunk)}`)
    for (const v of f.shrunkViolations.slice(0, 5)) lines.push(`  (${v.check}) ${v.text}`)
  }
  const last = scheduleSeed(args.seed, Math.max(0, args.schedules - 1))
  lines.push(
    `${summary.schedules} schedules (seeds ${args.seed} to ${last}), ${summary.faults} crashes and partitions, ${summary.operations} agent operations, in ${wall.toFixed(1)} s on ${cpus().length} cores`
  )
  lines.push(`schedules=${summary.schedules} violations=${summary.violations}`)
  process.stdout.write(lines.join('\n') + '\n')
  if (args.out !== undefined) {
    await mkdir(args.out, { recursive: true })
    const command = ['npm run check:faults --', ...process.argv.slice(2)].join(' ')
    await writeFile(
      join(args.out, 'check-faults.md'),
      report(command, summary.schedules, summary.violations, summary.faults, summary.operations, wall, lines)
    )
  }
  if (summary.violations > 0) process.exitCode = 1
}

function report(
  command: string,
  schedules: number,
  violations: number,
  faults: number,
  operations: number,
  wall: number,
  lines: string[]
): string {
  return [
    '# Fault-schedule checker',
    '',
    `Command: \`${command}\``,
    '',
    `${schedules} seeded schedules, ${violations} with a violation. ${faults} crashes and partitions and ${operations} agent operations in all; ${wall.toFixed(0)} s of wall time on ${cpus().length} cores.`,
    '',
    'Each schedule: 3 to 6 daemons (the simulator running the core claim protocol: gossip, anti-entropy, presence and leases,',
    'pings for the settle window, direct messages with an outbox), a scripted agent beside each, 3 to 10 tasks, one to two',
    'minutes of virtual time with crashes and restarts (half of them lose the writes not yet synced), partitions and heals,',
    'message loss, duplication and reordering (up to 20 % each), and every clock off by up to 10 minutes (monotonic) and',
    'an hour (wall); then the network heals and goes quiet for 30 s and the replicas are compared. Every agent call is',
    "recorded as an invocation and its completion, with the daemons' notices, the inbox deliveries and the faults, and checked:",
    '',
    '- (a) no two agents are told HELD for the same task and epoch unless a fault separated them while they settled',
    "  (a partition, one of them down, a claim between them lost); then, after the heal, only the holder rule's claim keeps",
    '  it and every other holder is told; and no HELD comes sooner than the shortest settle window after its claim;',
    "- (b) no superseded claim's work reaches the shared branch: a landed integration was HELD, not told lost before it",
    "  landed, and no work of a higher epoch (or another agent's at its epoch) had landed before;",
    '- (c) every acknowledged entry is at every replica after the heal;',
    '- (d) every acknowledged direct message is delivered exactly once;',
    '- (e) all replicas end with the same entries and the same board.',
    '',
    'Output:',
    '',
    '```',
    ...lines,
    '```',
    ''
  ].join('\n')
}

main().catch(err => {
  process.stderr.write(`${(err as Error).message}\n`)
  process.exit(2)
})
