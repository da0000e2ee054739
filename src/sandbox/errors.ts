// The sandbox's failures: each says what to do next.
import { FailedPreconditionError } from '../core/errors.js'

/** The mode asked for cannot run on this host. */
export class SandboxUnavailableError extends FailedPreconditionError {
  constructor(
    readonly mode: string,
    reason: string
  ) {
    super(`--sandbox ${mode} cannot run here: ${reason}`)
    this.name = 'SandboxUnavailableError'
  }
}

/** A harness that runs a model would run with nothing around it. */
export class UnconfinedHarnessError extends FailedPreconditionError {
  constructor(harness: string, reason: string) {
    super(
      `not starting harness ${harness} without a sandbox (${reason}): install bubblewrap and socat (apt-get install bubblewrap socat), or pass --sandbox none where something else already confines the agent (a container that is the boundary)`
    )
    this.name = 'UnconfinedHarnessError'
  }
}
