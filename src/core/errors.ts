// Named errors with a stable `code`. The gRPC layer maps codes to status codes;
// callers match on `code`, never on message text.

export const ERROR_CODES = [
  'INVALID_ARGUMENT',
  'NOT_FOUND',
  'FAILED_PRECONDITION',
  'ALREADY_EXISTS',
  'RESOURCE_EXHAUSTED',
  'UNAVAILABLE',
  'PERMISSION_DENIED',
  'INTERNAL'
] as const

export type ErrorCode = (typeof ERROR_CODES)[number]

export function isErrorCode(value: unknown): value is ErrorCode {
  return (ERROR_CODES as readonly unknown[]).includes(value)
}

export class AgencyError extends Error {
  readonly code: ErrorCode
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.code = code
    this.name = 'AgencyError'
  }
}

export class InvalidArgumentError extends AgencyError {
  constructor(message: string) {
    super('INVALID_ARGUMENT', message)
    this.name = 'InvalidArgumentError'
  }
}

export class NotFoundError extends AgencyError {
  constructor(message: string) {
    super('NOT_FOUND', message)
    this.name = 'NotFoundError'
  }
}

export class FailedPreconditionError extends AgencyError {
  constructor(message: string) {
    super('FAILED_PRECONDITION', message)
    this.name = 'FailedPreconditionError'
  }
}

export class TooLargeError extends AgencyError {
  constructor(what: string, size: number, limit: number) {
    super('INVALID_ARGUMENT', `${what} is ${size} bytes, over the limit of ${limit} bytes`)
    this.name = 'TooLargeError'
  }
}

export class UnavailableError extends AgencyError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('UNAVAILABLE', message, options)
    this.name = 'UnavailableError'
  }
}

export function isAgencyError(err: unknown): err is AgencyError {
  return err instanceof AgencyError
}

/** Why an agent's ACP session cannot go on. */
export type AgentProtocolFault =
  'unsupported_version' | 'malformed' | 'flood' | 'oversized' | 'auth_required' | 'refused' | 'unresponsive' | 'closed'

/** The agent process broke the Agent Client Protocol, or its session cannot go on: the harness is restarted or reported broken. */
export class AgentProtocolError extends AgencyError {
  readonly fault: AgentProtocolFault
  constructor(fault: AgentProtocolFault, message: string, options?: { cause?: unknown }) {
    super('UNAVAILABLE', message, options)
    this.name = 'AgentProtocolError'
    this.fault = fault
  }
}
