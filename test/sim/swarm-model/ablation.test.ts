import { describe, expect, it } from 'vitest'
import { ablationJobs } from '../../../src/sim/swarm-model/ablation.js'
import { ablations, ALL_MECHANISMS, MECHANISMS } from '../../../src/sim/swarm-model/strategies/agency-mechanisms.js'
import { runSwarmJob } from '../../../src/sim/swarm-model/swarm-job.js'

describe('the ablation runner', () => {
  it('runs all mechanisms once, then turns exactly one off per run, each in turn', () => {
    const runs = ablations()
    expect(runs[0]).toEqual({ off: null, mechanisms: ALL_MECHANISMS })
    expect(runs.slice(1).map(r => r.off)).toEqual([...MECHANISMS])
    for (const r of runs.slice(1)) {
      const off = MECHANISMS.filter(m => !r.mechanisms[m])
      expect(off).toEqual([r.off])
    }
  })

  it('builds one agency job per size, seed and configuration, with fewer seeds where asked', () => {
    const jobs = ablationJobs([8, 1024], n => (n > 100 ? [1] : [1, 2, 3]), { tasks: 50 })
    expect(jobs).toHaveLength((3 + 1) * (MECHANISMS.length + 1))
    expect(jobs.every(j => j.strategy === 'agency')).toBe(true)
    expect(new Set(jobs.map(j => j.label)).size).toBe(MECHANISMS.length + 1)
    expect(jobs.filter(j => j.agents === 1024).map(j => j.seed)).toEqual(Array(MECHANISMS.length + 1).fill(1))
  })

  it('a job with a mechanism off runs without it', () => {
    const [all, noReviews] = ablationJobs([6], () => [2], { tasks: 40, layers: 3, tasksPerArea: 20 }).filter(
      j => j.label === 'agency, all mechanisms' || j.label === 'agency without reviews'
    )
    // every change others build on asks for a review (by default only while a peer has nothing to claim)
    const a = runSwarmJob({ ...all, settings: { reviewWhenIdle: 0 } })
    const b = runSwarmJob({ ...noReviews, settings: { reviewWhenIdle: 0 } })
    expect(a.completed && b.completed).toBe(true)
    expect(a.extra.reviews).toBeGreaterThan(0)
    expect(b.extra.reviews ?? 0).toBe(0)
  })
})
