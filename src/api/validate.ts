// Shared checks on request fields.
import { InvalidArgumentError } from '../core/errors.js'

/** At most `maxItems` strings, each non-empty and at most `maxChars` long. */
export function checkStrings(what: string, values: string[], maxItems: number, maxChars: number): void {
  if (values.length > maxItems) throw new InvalidArgumentError(`at most ${maxItems} ${what}s`)
  for (const v of values) {
    if (v === '') throw new InvalidArgumentError(`empty ${what}`)
    if (v.length > maxChars) throw new InvalidArgumentError(`${what} longer than ${maxChars} characters`)
  }
}
