// Key helpers. LevelDB sorts keys bytewise, so numbers in keys are zero-padded
// to the width of Number.MAX_SAFE_INTEGER to sort numerically.
import { InvalidArgumentError } from '../core/errors.js'

const NUMBER_WIDTH = String(Number.MAX_SAFE_INTEGER).length

export function padNumber(n: number): string {
  return String(n).padStart(NUMBER_WIDTH, '0')
}

export function parsePadded(key: string): number {
  return Number(key)
}

export function assertNonNegativeInteger(what: string, n: unknown): asserts n is number {
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) {
    throw new InvalidArgumentError(`${what} must be a non-negative safe integer, got ${String(n)}`)
  }
}

export function assertPositiveInteger(what: string, n: unknown): asserts n is number {
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1) {
    throw new InvalidArgumentError(`${what} must be a positive safe integer, got ${String(n)}`)
  }
}

export function assertNonEmptyString(what: string, s: unknown): asserts s is string {
  if (typeof s !== 'string' || s.length === 0) {
    throw new InvalidArgumentError(`${what} must be a non-empty string`)
  }
}
