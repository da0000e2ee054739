// The one start/stop contract of agentd's long-lived parts, and the two
// functions that run a list of them: start in the list's order, stop in
// reverse. Each moment is optional; a part implements those it has.
//
// Start runs in two passes: every part's beforeStart (take in what is on disk,
// subscribe to the log: done before the mesh is up, so a peer's first entry
// finds the board and the notices ready), then every part's start (the mesh,
// the timers). Stop runs in two: every part's stop, then every part's
// afterStop (what must follow the last write of every part: a checkpoint, the
// store's close). Unlike libp2p's start(...objs), the passes run their parts
// one after the other: the order is the point.

export interface Startable {
  beforeStart?: () => void | Promise<void>
  start?: () => void | Promise<void>
  stop?: () => void | Promise<void>
  afterStop?: () => void | Promise<void>
}

/** A part and the name its start is timed and its failed stop is logged under. */
export interface NamedPart {
  name: string
  part: Startable
}

/**
 * Starts the parts in order, pass by pass; `started(name)` is called after
 * each step a part took (for start-phases.ts). A failure stops the start and
 * is thrown; the caller stops what was started (stopParts is safe on parts
 * never started).
 */
export async function startParts(parts: readonly NamedPart[], started: (name: string) => void = () => {}): Promise<void> {
  for (const { name, part } of parts) {
    if (part.beforeStart === undefined) continue
    await part.beforeStart()
    started(name)
  }
  for (const { name, part } of parts) {
    if (part.start === undefined) continue
    await part.start()
    started(name)
  }
}

/**
 * Stops the parts in reverse order, pass by pass. A part that fails to stop
 * is reported and the others still stop: a stop always reaches the store's
 * close.
 */
export async function stopParts(parts: readonly NamedPart[], failed: (name: string, err: unknown) => void): Promise<void> {
  const reversed = [...parts].reverse()
  for (const moment of ['stop', 'afterStop'] as const) {
    for (const { name, part } of reversed) {
      const step = part[moment]
      if (step === undefined) continue
      try {
        await step.call(part)
      } catch (err) {
        failed(name, err)
      }
    }
  }
}

/** A function run every `ms` while started: a part with no state of its own. */
export class Repeating implements Startable {
  private timer?: NodeJS.Timeout

  constructor(
    private readonly ms: number,
    private readonly run: () => void
  ) {}

  start(): void {
    this.timer = setInterval(this.run, this.ms)
  }

  stop(): void {
    clearInterval(this.timer)
  }
}
