// The shared git remote, as the fence sees it: refs/agency/tasks/<task>
// names the epoch (and agent) whose work landed, and an integration whose
// epoch is lower, or equal with another agent, is refused at the remote,
// whatever the pusher's mesh shows. Every node can reach it, partitioned from
// its peers or not (a holder cut off from the mesh but not from git).

export interface Landed {
  task: string
  epoch: number
  agent: string
  time: number
}

export class SharedBranch {
  readonly landed: Landed[] = []
  private readonly fence = new Map<string, { epoch: number; agent: string }>()

  /** An integration of `task`'s work under the claim at `epoch` by `agent`. */
  push(task: string, epoch: number, agent: string, time: number): 'landed' | { fenced: { epoch: number; agent: string } } {
    const f = this.fence.get(task)
    if (f !== undefined && (f.epoch > epoch || (f.epoch === epoch && f.agent !== agent))) return { fenced: { ...f } }
    this.fence.set(task, { epoch, agent })
    this.landed.push({ task, epoch, agent, time })
    return 'landed'
  }
}
