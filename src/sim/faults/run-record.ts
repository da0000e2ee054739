// What the checks judge: a run's history and the replicas' final state, as
// plain data. The simulator builds it from its objects (world.ts); the
// real-process campaign from its clients, the daemons' logs and the shared
// remote. One checker for both.

import type { HistoryData } from './history.js'
import type { Landed } from './shared-branch.js'

export interface ReplicaState {
  node: string
  up: boolean
  entryIds: string[]
  /** one line per task: state, holder@epoch, who finished it */
  board: string[]
}

export interface RunRecord {
  history: HistoryData
  /** the integrations that landed on the shared branch, in the order they landed */
  branch: { readonly landed: readonly Landed[] }
  replicas: readonly ReplicaState[]
  /** "task@epoch" -> the claim the holder rule picks at that epoch on the converged board */
  winners: ReadonlyMap<string, string>
}
