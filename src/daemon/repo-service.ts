// The shared repository as the API, the use cases and the hand-offs see it:
// one face over its parts, each with its own job and built by the wiring:
// the workspace (repo-workspace.ts), direct integration and requests
// (integration.ts), background integration (background-integration.ts) and
// the integrator (integrator.ts). It holds no state and decides nothing: each
// call goes to the part whose job it is.
import type { Workspace, IntegrationRequest as RepoRequest } from '../repo/index.js'
import type { IntegrateReply, RunIntegratorReply, WorkspaceReply } from '../gen/agency/v1/api.js'
import type { RepoWorkspace, TaskStart } from './repo-workspace.js'
import type { DirectIntegration, WrittenRequest } from './integration.js'
import type { BackgroundIntegration } from './background-integration.js'
import type { Integrator } from './integrator.js'

export { RECOVERED_RUN_FORMAT } from './test-run-record.js'
export { defaultMirrorDir, type TaskStart } from './repo-workspace.js'

export interface RepoServiceComponents {
  workspace: RepoWorkspace
  integration: DirectIntegration
  background: BackgroundIntegration
  integrator: Integrator
}

export class RepoService {
  constructor(private readonly c: RepoServiceComponents) {}

  /** this agent's clone (open once the daemon started) */
  get workspace(): Workspace {
    return this.c.workspace.workspace
  }

  async startTask(task: string, handoffBranch: string, o: { fromAssist?: string } = {}): Promise<TaskStart> {
    return await this.c.workspace.startTask(task, handoffBranch, o)
  }
  async startAssist(branchTask: string): Promise<TaskStart> {
    return await this.c.workspace.startAssist(branchTask)
  }
  async saveWork(task: string): Promise<string> {
    return await this.c.workspace.saveWork(task)
  }
  async workspaceInfo(task: string): Promise<WorkspaceReply> {
    return await this.c.workspace.workspaceInfo(task)
  }

  /** Whether this agent's work on `task` is on its way to the shared branch (integration.ts). */
  merging(task: string, epoch: number): boolean {
    return this.c.integration.merging(task, epoch)
  }
  async integrate(task: string, message: string): Promise<IntegrateReply> {
    return await this.c.integration.integrate(task, message)
  }
  async requestIntegration(task: string): Promise<WrittenRequest> {
    return await this.c.integration.requestIntegration(task)
  }
  async recoverLanding(task: string): Promise<void> {
    await this.c.integration.recoverLanding(task)
  }

  async integrateInBackground(task: string, message: string): Promise<IntegrateReply> {
    return await this.c.background.integrateInBackground(task, message)
  }
  integratorServing(): string | undefined {
    return this.c.background.integratorServing()
  }
  /** Resolves once every background integrate running now has answered its request. */
  async backgroundSettled(): Promise<void> {
    await this.c.background.backgroundSettled()
  }

  /** Integration requests in log order that no integration entry answers yet. */
  pendingRequests(): Array<RepoRequest & { id: string }> {
    return this.c.integrator.pendingRequests()
  }
  async runIntegrator(maxBatch: number): Promise<RunIntegratorReply> {
    return await this.c.integrator.runIntegrator(maxBatch)
  }
}
