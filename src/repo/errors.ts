// Named errors of the shared-repository layer. Callers (gRPC, CLI) match on
// `code` and `name`; messages are for people and say what to do next.
import { AgencyError, FailedPreconditionError, InvalidArgumentError, UnavailableError } from '../core/errors.js'

/** The workspace has uncommitted or untracked changes; integration would silently leave them out. */
export class DirtyWorkspaceError extends FailedPreconditionError {
  readonly files: string[]
  constructor(dir: string, files: string[]) {
    const shown = files.slice(0, 10).join(', ') + (files.length > 10 ? `, … (${files.length} in all)` : '')
    super(
      `workspace ${dir} has uncommitted changes (${shown}); commit them on your task branch first (git add -A && git commit -m "<what you did>"), or discard them (git stash)`
    )
    this.name = 'DirtyWorkspaceError'
    this.files = files
  }
}

/** The shared remote cannot be reached or read (missing path, network, auth). */
export class RemoteUnavailableError extends UnavailableError {
  readonly remote: string
  constructor(remote: string, detail: string, options?: { cause?: unknown }) {
    super(`shared repository ${remote} is unavailable: ${detail}`, options)
    this.name = 'RemoteUnavailableError'
    this.remote = remote
  }
}

/** The remote answers but has no shared branch to work from. */
export class RemoteBranchNotFoundError extends FailedPreconditionError {
  constructor(remote: string, branch: string) {
    super(`shared repository ${remote} has no branch "${branch}"; push an initial commit to it first`)
    this.name = 'RemoteBranchNotFoundError'
  }
}

/** An existing workdir belongs to another repository, or is not a git clone at all. */
export class WorkspaceMismatchError extends FailedPreconditionError {
  constructor(message: string) {
    super(message)
    this.name = 'WorkspaceMismatchError'
  }
}

/** The agent has no branch for the task it asks to integrate. */
export class TaskBranchNotFoundError extends FailedPreconditionError {
  constructor(branch: string) {
    super(
      `no local branch ${branch}: claim the task (agency claim <task>) to put your workspace on it, or switch to it with agency workspace --task <task>; then commit your work there and integrate again`
    )
    this.name = 'TaskBranchNotFoundError'
  }
}

/** A branch published for an integrator has no commits beyond the shared branch: there is nothing to land. */
export class NoNewCommitsError extends FailedPreconditionError {
  readonly branch: string
  constructor(branch: string, shared: string) {
    super(`branch ${branch} has no commits beyond ${shared}: commit your work there (git add -A && git commit -m "<what you did>") first`)
    this.name = 'NoNewCommitsError'
    this.branch = branch
  }
}

/** The verify command names a program that does not exist. */
export class VerifyCommandNotFoundError extends InvalidArgumentError {
  readonly command: string
  constructor(command: string, detail: string) {
    super(`verify command not found: ${detail} (command: ${command})`)
    this.name = 'VerifyCommandNotFoundError'
    this.command = command
  }
}

/** The remote refused a push for a reason retrying will not fix (hook, protection, permissions). */
export class PushRejectedError extends FailedPreconditionError {
  constructor(ref: string, reason: string) {
    super(`push to ${ref} was rejected: ${reason}`)
    this.name = 'PushRejectedError'
  }
}

/**
 * The shared remote's task fence names a later claim (a higher epoch, or the
 * same epoch held by someone else) than the one integrating: the work is
 * superseded and nothing was pushed, whatever the local board believes.
 */
export class FencedError extends FailedPreconditionError {
  readonly task: string
  readonly epoch: number
  readonly remoteEpoch: number
  readonly remoteAgent: string
  constructor(task: string, epoch: number, remote: { epoch: number; agent: string }) {
    const why = remote.epoch > epoch ? 'a later claim' : 'another holder at the same epoch'
    super(
      `task ${task} is at epoch ${remote.epoch} on the shared remote (${remote.agent}); your claim is at epoch ${epoch}: ${why} landed its work, so yours is superseded and nothing was pushed. See who holds it (agency status) and claim again (agency claim ${task}) or pick another task`
    )
    this.name = 'FencedError'
    this.task = task
    this.epoch = epoch
    this.remoteEpoch = remote.epoch
    this.remoteAgent = remote.agent
  }
}

/** A git command failed in a way none of the named errors describes. */
export class GitCommandError extends AgencyError {
  readonly args: string[]
  readonly exitCode: number | null
  readonly stderr: string
  constructor(args: string[], exitCode: number | null, stderr: string) {
    const detail = lastLines(stderr, 3) || `exit code ${String(exitCode)}`
    super('INTERNAL', `git ${args.slice(0, 3).join(' ')} failed: ${detail}`)
    this.name = 'GitCommandError'
    this.args = args
    this.exitCode = exitCode
    this.stderr = stderr
  }
}

/** The git executable itself is missing. */
export class GitNotFoundError extends FailedPreconditionError {
  constructor() {
    super('git was not found on PATH; install git to use the shared repository')
    this.name = 'GitNotFoundError'
  }
}

export function lastLines(text: string, n: number): string {
  return text.trim().split('\n').slice(-n).join(' | ').trim()
}
