// Runs async tasks one at a time, in call order. A store's read-check-write
// sequences (next cursor, seen-id check, vector update) go through one queue
// so two concurrent calls cannot both pass the check.
export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve()

  run<T>(task: () => Promise<T>): Promise<T> {
    const result = this.tail.then(task)
    // The chain must survive a failed task; the caller still sees the failure.
    this.tail = result.catch(() => undefined)
    return result
  }
}
