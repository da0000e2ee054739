// A synthetic project, like ProgramBench: M tasks in a wide dependency DAG,
// grouped into areas (modules) whose files the tasks' scopes name, so scopes
// sometimes overlap. Each task has a hidden test that passes once a sound
// attempt is merged. Each area offers a few approaches; some are traps that
// always fail. A trap is an area's, not a task's, so an agent that reads the
// findings recorded by whoever hit it first avoids it on every task there.
// Every number comes from the seed: all strategies get the same project.

import { Hazards, type HazardInit } from './hazards.js'
import { createRandom, type Random } from '../engine/random.js'

export interface WorkloadInit {
  /** M, the number of tasks */
  tasks?: number
  /** depth of the dependency DAG */
  layers?: number
  tasksPerArea?: number
  /** approaches an area offers */
  approaches?: number
  /** chance that an approach is a trap (every area keeps at least one sound approach) */
  trapChance?: number
  /** chance that an attempt with a sound approach still fails (and is simply retried) */
  flakeChance?: number
  /** median work time of a task's attempt, ms (log-normal across tasks) */
  medianEffortMs?: number
  /** sigma of the log-normal effort */
  effortSpread?: number
  /** an attempt takes the task's effort times uniform [1 - jitter, 1 + jitter] */
  attemptJitter?: number
  /** an attempt that passes after another agent merged into one of its files pays this share of its time again to rebase */
  rebaseFraction?: number
  /** what goes wrong, the same for every strategy (src/sim/swarm-model/hazards.ts) */
  hazards?: HazardInit
}

export const WORKLOAD_DEFAULTS: Required<Omit<WorkloadInit, 'hazards'>> = {
  tasks: 2000,
  layers: 6,
  tasksPerArea: 50,
  approaches: 4,
  trapChance: 0.4,
  flakeChance: 0.1,
  medianEffortMs: 10 * 60_000,
  effortSpread: 0.5,
  attemptJitter: 0.3,
  rebaseFraction: 0.2
}

export interface ProjectTask {
  id: string
  index: number
  layer: number
  area: number
  deps: string[]
  /** the same dependencies as task indices */
  depIndices: number[]
  /** indices of the tasks that depend on this one */
  dependentIndices: number[]
  /** files the task touches: its scope */
  files: string[]
  /** typical work time of one attempt, ms */
  effortMs: number
  /** higher first; earlier layers are more urgent */
  priority: number
  /**
   * the longest chain of typical efforts from this task to the end of the project (its own included): the critical path runs through the
   * largest
   */
  tailMs: number
  /**
   * the longest chain of dependents from this task, itself included (1 for a task nothing depends on): what agentd can see of the critical
   * path
   */
  chain: number
}

export interface ProjectArea {
  name: string
  approaches: string[]
  traps: ReadonlySet<string>
}

export type AttemptResult = 'pass' | 'trap' | 'flaky'

export interface Attempt {
  task: string
  approach: string
  /** trap key `area/approach` */
  trap: string
  durationMs: number
  result: AttemptResult
  /** the attempt took more than twice its usual time (a stall or a slow agent) */
  slowed: boolean
}

export class Project {
  readonly options: Required<Omit<WorkloadInit, 'hazards'>>
  readonly seed: number
  readonly hazards: Hazards
  readonly tasks: ProjectTask[] = []
  readonly areas: ProjectArea[] = []
  private readonly byId = new Map<string, ProjectTask>()
  private readonly dependentsOf = new Map<string, string[]>()

  constructor(seed: number, init: WorkloadInit = {}) {
    const o = { ...WORKLOAD_DEFAULTS, ...init }
    if (!Number.isSafeInteger(o.tasks) || o.tasks < 1) throw new RangeError('tasks must be a positive whole number')
    if (
      !Number.isSafeInteger(o.layers) ||
      o.layers < 1 ||
      !Number.isSafeInteger(o.approaches) ||
      o.approaches < 1 ||
      !(o.tasksPerArea >= 1)
    ) {
      throw new RangeError('layers, approaches and tasksPerArea must be positive')
    }
    this.options = o
    this.seed = seed
    this.hazards = new Hazards(seed, init.hazards)
    const rng = createRandom(seed)
    const areaCount = Math.max(1, Math.ceil(o.tasks / o.tasksPerArea))
    const filesPerArea = Math.max(1, Math.ceil(o.tasksPerArea / 4))
    for (let a = 0; a < areaCount; a++) {
      const approaches = Array.from({ length: o.approaches }, (_, i) => `approach-${i}`)
      const sound = rng.int(o.approaches)
      const traps = new Set(approaches.filter((_, i) => i !== sound && rng.chance(o.trapChance)))
      this.areas.push({ name: `mod-${String(a).padStart(3, '0')}`, approaches, traps })
    }
    const layerOf = (i: number): number => Math.min(o.layers - 1, Math.floor((i * o.layers) / o.tasks))
    const byLayer: string[][] = Array.from({ length: o.layers }, () => [])
    for (let i = 0; i < o.tasks; i++) {
      const layer = layerOf(i)
      const area = rng.int(areaCount)
      const id = `task-${String(i).padStart(5, '0')}`
      const deps = new Set<string>()
      if (layer > 0) {
        const want = 1 + rng.int(3)
        for (let k = 0; k < want; k++) {
          const from = rng.chance(0.75) ? layer - 1 : rng.int(layer)
          deps.add(rng.pick(byLayer[from]))
        }
      }
      const areaName = this.areas[area].name
      const files = new Set([`src/${areaName}/f${rng.int(filesPerArea)}.ts`])
      if (rng.chance(0.3)) files.add(`src/${areaName}/f${rng.int(filesPerArea)}.ts`)
      const effortMs = o.medianEffortMs * Math.exp(o.effortSpread * gaussian(rng))
      const depList = [...deps].sort()
      const depIndices = depList.map(d => (this.byId.get(d) as ProjectTask).index)
      const task: ProjectTask = {
        id,
        index: i,
        layer,
        area,
        deps: depList,
        depIndices,
        dependentIndices: [],
        files: [...files].sort(),
        effortMs,
        priority: o.layers - layer,
        tailMs: effortMs,
        chain: 1
      }
      for (const d of depIndices) this.tasks[d].dependentIndices.push(i)
      this.tasks.push(task)
      this.byId.set(id, task)
      byLayer[layer].push(id)
      for (const d of task.deps) {
        const list = this.dependentsOf.get(d)
        if (list === undefined) this.dependentsOf.set(d, [id])
        else list.push(id)
      }
    }
    for (let i = this.tasks.length - 1; i >= 0; i--) {
      const t = this.tasks[i]
      for (const d of t.dependentIndices) {
        t.tailMs = Math.max(t.tailMs, t.effortMs + this.tasks[d].tailMs)
        t.chain = Math.max(t.chain, 1 + this.tasks[d].chain)
      }
    }
  }

  task(id: string): ProjectTask {
    const t = this.byId.get(id)
    if (t === undefined) throw new RangeError(`no task ${id} in the project`)
    return t
  }

  /** Tasks that name `id` as a dependency. */
  dependents(id: string): readonly string[] {
    return this.dependentsOf.get(id) ?? []
  }

  get trapCount(): number {
    return this.areas.reduce((n, a) => n + a.traps.size, 0)
  }

  trapKey(task: ProjectTask, approach: string): string {
    return `${this.areas[task.area].name}/${approach}`
  }

  /**
   * One attempt at `task` by an agent that knows the traps in `knownTraps`
   * (trap keys): it picks at random among the approaches it does not know to
   * fail, works for a random time, and the hidden test decides. `slowdown`
   * (from Hazards.slowdown: a stall, a slow agent) stretches the time;
   * `approach` forces the approach (a helper trying one nobody else is).
   */
  attempt(rng: Random, task: ProjectTask, knownTraps: ReadonlySet<string>, slowdown = 1, approach?: string): Attempt {
    const area = this.areas[task.area]
    const open = area.approaches.filter(a => !knownTraps.has(`${area.name}/${a}`))
    const chosen = approach ?? rng.pick(open.length > 0 ? open : area.approaches)
    const j = this.options.attemptJitter
    const durationMs = task.effortMs * rng.between(1 - j, 1 + j) * slowdown
    const result: AttemptResult = area.traps.has(chosen) ? 'trap' : rng.chance(this.options.flakeChance) ? 'flaky' : 'pass'
    return { task: task.id, approach: chosen, trap: `${area.name}/${chosen}`, durationMs, result, slowed: slowdown > 2 }
  }
}

export function createProject(seed: number, init?: WorkloadInit): Project {
  return new Project(seed, init)
}

/** Standard normal (Box-Muller). */
function gaussian(rng: Random): number {
  const u = 1 - rng.next()
  const v = rng.next()
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v)
}
