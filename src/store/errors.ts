// Errors raised when the data dir cannot serve as this daemon's store.
import { AgencyError } from '../core/errors.js'

/** Another agentd (in this process or another) holds the LevelDB lock on the data dir. */
export class DataDirLockedError extends AgencyError {
  readonly dataDir: string
  constructor(dataDir: string, options?: { cause?: unknown }) {
    super('FAILED_PRECONDITION', `data dir ${dataDir} is in use by another agentd`, options)
    this.name = 'DataDirLockedError'
    this.dataDir = dataDir
  }
}

/** The data dir cannot be created or opened: not a directory, no permission, no space, corrupt. */
export class DataDirError extends AgencyError {
  readonly dataDir: string
  readonly reason: string
  constructor(dataDir: string, reason: string, options?: { cause?: unknown }) {
    super('FAILED_PRECONDITION', `data dir ${dataDir} cannot be used: ${reason}`, options)
    this.name = 'DataDirError'
    this.dataDir = dataDir
    this.reason = reason
  }
}

/** Stored data that contradicts itself (an index pointing at a missing entry, undecodable bytes). */
export class StoreCorruptError extends AgencyError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('INTERNAL', message, options)
    this.name = 'StoreCorruptError'
  }
}
