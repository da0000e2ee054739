// The refusals an agent meets when it tries what only the operator may do.
import { AgencyError, FailedPreconditionError } from '../errors.js'

/** Only an operator may do this: the message says so, and how the operator does it. */
export class OperatorOnlyError extends AgencyError {
  constructor(message: string) {
    super('PERMISSION_DENIED', message)
    this.name = 'OperatorOnlyError'
  }
}

/** The swarm has no operator, so there is nobody whose action this could be. */
export class NoOperatorError extends FailedPreconditionError {
  constructor(what: string) {
    super(
      `${what} needs an operator, and this swarm has none: start every agentd with --operator <key> (agency operator keygen makes one; docs/operator.md)`
    )
    this.name = 'NoOperatorError'
  }
}
