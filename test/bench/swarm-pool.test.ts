import { describe, expect, it } from 'vitest'
import { mayStart, modelledPeakBytes } from './swarm-pool.js'

const GiB = 1024 ** 3

describe('bench:swarm job pool', () => {
  it("starts a run only when free memory less the running runs' estimates holds it", () => {
    // the 24 GiB machine with 16 GiB free: two 1024-agent runs fit, a third does not
    expect(mayStart(2 * GiB, [], 16 * GiB, 2)).toBe(true)
    expect(mayStart(2 * GiB, [2 * GiB], 16 * GiB, 2)).toBe(true)
    expect(mayStart(2 * GiB, [2 * GiB, 2 * GiB], 16 * GiB, 3)).toBe(true)
    expect(mayStart(2 * GiB, [2 * GiB], 3 * GiB, 2)).toBe(false)
    // never more than maxJobs, however much is free
    expect(mayStart(1, [1, 1], 100 * GiB, 2)).toBe(false)
    // with nothing running a run starts whatever it needs: waiting frees nothing
    expect(mayStart(64 * GiB, [], 1 * GiB, 2)).toBe(true)
  })

  it('expects an agency run to grow with its replicas and the project, a baseline far less', () => {
    const agency = (agents: number, tasks: number): number =>
      modelledPeakBytes({ strategy: 'agency', agents, seed: 1, workload: { tasks } })
    expect(agency(1024, 500)).toBeGreaterThan(agency(128, 500))
    expect(agency(1024, 2000)).toBeGreaterThan(agency(1024, 500))
    expect(modelledPeakBytes({ strategy: 'none', agents: 1024, seed: 1, workload: { tasks: 500 } })).toBeLessThan(agency(1024, 500) / 4)
  })
})
