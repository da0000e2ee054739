import { describe, expect, it } from 'vitest'
import { createRandom } from '../../../src/sim/engine/random.js'
import { createProject } from '../../../src/sim/swarm-model/workload.js'

describe('synthetic project', () => {
  const project = createProject(5, { tasks: 400, layers: 5, tasksPerArea: 40 })

  it('is the same for the same seed and different for another', () => {
    const again = createProject(5, { tasks: 400, layers: 5, tasksPerArea: 40 })
    expect(again.tasks).toEqual(project.tasks)
    expect(createProject(6, { tasks: 400, layers: 5, tasksPerArea: 40 }).tasks).not.toEqual(project.tasks)
  })

  it('is a DAG whose dependencies come from earlier layers, with a wide first layer', () => {
    for (const t of project.tasks) {
      for (const d of t.deps) expect(project.task(d).layer).toBeLessThan(t.layer)
      if (t.layer === 0) expect(t.deps).toEqual([])
      else expect(t.deps.length).toBeGreaterThan(0)
      expect(t.depIndices.map(i => project.tasks[i].id)).toEqual(t.deps)
      for (const d of t.dependentIndices) expect(project.tasks[d].deps).toContain(t.id)
    }
    expect(project.tasks.filter(t => t.layer === 0)).toHaveLength(80)
  })

  it('has scopes that sometimes overlap, and areas with traps and at least one sound approach', () => {
    const byFile = new Map<string, number>()
    for (const t of project.tasks) for (const f of t.files) byFile.set(f, (byFile.get(f) ?? 0) + 1)
    expect([...byFile.values()].some(n => n > 1)).toBe(true)
    for (const a of project.areas) expect(a.traps.size).toBeLessThan(a.approaches.length)
    expect(project.trapCount).toBeGreaterThan(0)
  })

  it('an agent that knows the traps never hits one; one that knows none does', () => {
    const rng = createRandom(1)
    const task = project.tasks.find(t => project.areas[t.area].traps.size > 0)!
    const area = project.areas[task.area]
    const all = new Set([...area.traps].map(a => `${area.name}/${a}`))
    const results = Array.from({ length: 200 }, () => project.attempt(rng, task, all))
    expect(results.every(r => r.result !== 'trap')).toBe(true)
    expect(results.some(r => r.result === 'pass')).toBe(true)
    const blind = Array.from({ length: 200 }, () => project.attempt(rng, task, new Set()))
    expect(blind.some(r => r.result === 'trap')).toBe(true)
    for (const r of blind) expect(r.durationMs).toBeGreaterThan(0)
  })

  it('refuses a bad shape', () => {
    expect(() => createProject(1, { tasks: 0 })).toThrow(RangeError)
    expect(() => createProject(1, { layers: 0 })).toThrow(RangeError)
  })
})
