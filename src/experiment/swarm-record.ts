// What a swarm's shared record says about a run, measured the way the
// simulator measures it (src/experiment/run-recorder.ts):
// - work: from a claim that won its epoch (the smallest (lamport, author) among
//   the claims of that task and epoch) until its author released the task or
//   marked it done, or the end of the run. Duplicate work is the agent-time
//   spent on a task while another agent also worked on it.
// - a repeated failure is a failure finding whose attempt (the author's work
//   on that task) started after someone had already recorded the same failure.
//   A failure is keyed by its task and approach tags when it has them (the
//   scripted agent's), else by its paths and text.
import { RunRecorder } from './run-recorder.js'

export interface RecordEntry {
  id: string
  author: string
  lamport: number
  /** the author's wall clock, ms since the epoch */
  time: number
  kind: string
  body: Record<string, unknown>
}

export interface SwarmRecordSummary {
  /** integrations that merged into the shared branch */
  integrations: number
  /** every integration, merged, conflicting or failed */
  integrationAttempts: number
  findings: number
  failureFindings: number
  workAgentSeconds: number
  duplicateAgentSeconds: number
  repeatedFailures: number
  /** distinct failures recorded */
  failuresRecorded: number
}

interface Interval {
  author: string
  task: string
  start: number
  end: number
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '')
const num = (v: unknown): number => (typeof v === 'number' ? v : Number(v ?? 0))

/** `entries` may hold duplicates (read from several daemons); `endTime` closes work still open. */
export function summarizeRecord(entriesIn: readonly RecordEntry[], endTime: number): SwarmRecordSummary {
  const byId = new Map(entriesIn.map(e => [e.id, e]))
  const entries = [...byId.values()].sort((a, b) => a.lamport - b.lamport || (a.author < b.author ? -1 : a.author > b.author ? 1 : 0))
  const authors = [...new Set(entries.map(e => e.author))]
  const start = Math.min(...entries.map(e => e.time), endTime)

  // The winning claim of each (task, epoch), and when its author stopped.
  const winners = new Map<string, RecordEntry>()
  for (const e of entries) {
    if (e.kind !== 'claim') continue
    const key = `${str(e.body.task)}@${num(e.body.epoch)}`
    if (!winners.has(key)) winners.set(key, e) // entries are in (lamport, author) order
  }
  const intervals: Interval[] = []
  for (const claim of winners.values()) {
    const task = str(claim.body.task)
    const stop = entries.find(
      e =>
        e.author === claim.author &&
        (e.kind === 'release' || e.kind === 'done') &&
        str(e.body.task) === task &&
        e.time >= claim.time &&
        num(e.body.epoch) >= num(claim.body.epoch)
    )
    intervals.push({ author: claim.author, task, start: claim.time, end: Math.max(claim.time, stop?.time ?? endTime) })
  }

  const recorder = new RunRecorder({ strategy: 'agency', label: 'agency', agents: Math.max(1, authors.length), tasks: 1 })
  for (const w of intervals) recorder.worked(w.task, authors.indexOf(w.author), w.start - start, w.end - start)

  const failures = entries.filter(e => e.kind === 'finding' && str(e.body.kind) === 'failure').sort((a, b) => a.time - b.time)
  for (const f of failures) {
    const tags = Array.isArray(f.body.tags) ? f.body.tags.map(String) : []
    const task = tags.find(t => t.startsWith('task:'))?.slice(5)
    const approach = tags.find(t => t.startsWith('approach:'))?.slice(9)
    const paths = Array.isArray(f.body.paths) ? f.body.paths.map(String).sort() : []
    const key =
      task != null && approach != null
        ? `task:${task} approach:${approach}`
        : `${paths.join(',')}|${str(f.body.text).toLowerCase().replace(/\s+/g, ' ').trim().slice(0, 200)}`
    // The attempt: the author's work on the finding's task (or on anything) that covers the finding.
    const mine = intervals.filter(w => w.author === f.author && w.start <= f.time && (task == null || w.task === task))
    const attempt = mine.length > 0 ? Math.max(...mine.map(w => w.start)) : f.time
    recorder.trapHit(key, attempt - start)
    recorder.trapRecorded(key, f.time - start)
  }

  const r = recorder.result(endTime - start, 0, entries.length)
  const integrations = entries.filter(e => e.kind === 'integration')
  return {
    integrations: integrations.filter(e => str(e.body.result) === 'merged').length,
    integrationAttempts: integrations.length,
    findings: entries.filter(e => e.kind === 'finding').length,
    failureFindings: failures.length,
    workAgentSeconds: r.workAgentSeconds,
    duplicateAgentSeconds: r.duplicateAgentSeconds,
    repeatedFailures: r.repeatedTrapHits,
    failuresRecorded: r.trapsRecorded
  }
}
