// Polls until a condition holds, with a generous deadline. Tests use it to wait
// for a distributed outcome without asserting how fast it happens. The one
// waitFor of the test suite: the check first, then what is awaited (for the
// timeout message), the deadline and the poll interval.
import { setTimeout as sleep } from 'node:timers/promises'

export interface WaitForOptions {
  timeoutMs?: number
  intervalMs?: number
  /** what is being waited for, for the timeout message */
  what?: string
}

/**
 * Calls `check` until it returns something other than undefined, null or false
 * (and does not throw), and returns that value. On timeout it throws, quoting
 * the last value or error so a failing test says what it saw.
 */
export async function waitFor<T>(check: () => T | Promise<T>, opts: WaitForOptions = {}): Promise<Exclude<T, undefined | null | false>> {
  const timeoutMs = opts.timeoutMs ?? 30_000
  const intervalMs = opts.intervalMs ?? 100
  const deadline = Date.now() + timeoutMs
  let last: unknown
  while (true) {
    try {
      const value = await check()
      if (value !== undefined && value !== null && value !== false) return value as Exclude<T, undefined | null | false>
      last = value
    } catch (err) {
      last = err
    }
    if (Date.now() >= deadline) {
      const seen = last instanceof Error ? `${last.name}: ${last.message}` : JSON.stringify(last)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${opts.what ?? 'a condition'}; last saw ${seen}`)
    }
    await sleep(intervalMs)
  }
}
