// A resettable "something changed" signal for follow-mode streams: the
// producer calls notify(), the streaming loop awaits wait().
export class WakeSignal {
  private waiter?: () => void
  private pending = false

  notify(): void {
    this.pending = true
    const w = this.waiter
    this.waiter = undefined
    w?.()
  }

  async wait(closed: AbortSignal): Promise<void> {
    if (this.pending) {
      this.pending = false
      return
    }
    if (closed.aborted) return
    await new Promise<void>(resolve => {
      const done = (): void => {
        closed.removeEventListener('abort', done)
        this.pending = false
        resolve()
      }
      this.waiter = done
      closed.addEventListener('abort', done, { once: true })
    })
  }
}
