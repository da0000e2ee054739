// One short schedule of the real-process fault campaign in the suite: three
// agentd processes on network namespaces, each with a scripted agent, one
// partition, one SIGKILL and restart, one clock jump; the history recorded
// from the clients and the end read from the daemons and the shared branch
// pass the fault checks (src/sim/faults). Needs root and iproute2; without
// them it skips, saying why. The long campaign is `npm run check:real-faults`.
import { describe, expect, it } from 'vitest'
import { testbedUnavailable } from '../scenarios/multi-host/testbed.js'
import { runRealSchedule } from './real-world.js'
import type { RealSchedule } from './real-schedule.js'

const why = await testbedUnavailable()
if (why != null) process.stderr.write(`real fault schedule skipped: ${why}\n`)

/** The faults overlap: host 2 is killed while host 1 is cut off, and host 3's clock is an hour ahead through both. */
const PINNED: RealSchedule = {
  seed: 36,
  hosts: 3,
  activeMs: 15_000,
  faults: [
    { kind: 'clock', host: 3, offsetMs: 3_600_000, at: 1_000, until: 12_000 },
    { kind: 'isolate', host: 1, at: 2_000, until: 9_000 },
    { kind: 'kill', host: 2, at: 4_000, until: 7_000 }
  ]
}

describe.skipIf(why != null)('a real fault schedule', () => {
  it('a partition, a kill and a clock jump on real daemons: the history passes the fault checks', async () => {
    const lines: string[] = []
    const r = await runRealSchedule(PINNED, {
      log: line => {
        lines.push(line)
      }
    })
    expect([...r.applied.keys()].sort()).toEqual(['clock-forward', 'isolate', 'kill'])
    expect(r.converged, lines.join('\n')).toBe(true)
    expect(r.record.history.events.filter(e => e.kind === 'invoke').length).toBeGreaterThan(0)
    expect(r.record.replicas.every(x => x.up)).toBe(true)
    expect(r.violations).toEqual([])
  }, 600_000)
})
