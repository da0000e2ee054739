// A findings index restored from its checkpoint, with the findings after the
// checkpoint's cursor added on top, answers every search as the index built
// from the whole log does; a corrupt checkpoint, or one of another log, is
// refused and changes nothing.
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { FindingsIndex } from '../../../src/core/findings/findings-index.js'
import { decodeFindingsCheckpoint, encodeFindingsCheckpoint } from '../../../src/core/findings/findings-checkpoint.js'
import { FailedPreconditionError, InvalidArgumentError } from '../../../src/core/errors.js'
import { answers, buildLog, sourceOf, step, useIdentities, type Step } from './checkpoint-log.js'

useIdentities()

describe('a findings index checkpoint', () => {
  it('restored, with the findings after it added, answers as the index of the whole log (any log, any cut, small segments)', () => {
    fc.assert(
      fc.property(
        fc.array(step, { minLength: 1, maxLength: 60 }),
        fc.nat(),
        fc.integer({ min: 1, max: 9 }),
        (steps, cutAt, segmentDocs) => {
          const { log, entries } = buildLog(steps)
          const init = { ...sourceOf(log), segmentDocs }
          const whole = FindingsIndex.fromEntries(entries, init)
          const cut = cutAt % (entries.length + 1)
          // taken while the index holds findings past the cut (accepted, not yet on disk)
          const snap = whole.snapshot(cut)
          expect(snap).toBeDefined()
          const restored = FindingsIndex.fromSnapshot(decodeFindingsCheckpoint(encodeFindingsCheckpoint(snap!)), init, log)
          for (const e of entries) if (e.cursor > cut) restored.add(e)
          expect(answers(restored, entries)).toEqual(answers(whole, entries))
        }
      ),
      { numRuns: 120 }
    )
  })

  it('is refused when corrupt, of another log, or past the log', () => {
    const steps: Step[] = Array.from({ length: 30 }, (_, i) => ({
      author: i % 3,
      finding: i % 4 !== 0,
      kind: i % 5,
      words: [i % 13, (i * 3) % 13],
      path: i % 6,
      tag: i % 5,
      supersedes: i % 7 === 0 ? i % 5 : -1
    }))
    const { log, entries } = buildLog(steps)
    const init = sourceOf(log)
    const bytes = encodeFindingsCheckpoint(FindingsIndex.fromEntries(entries, init).snapshot(log.cursor)!)
    expect(FindingsIndex.fromSnapshot(decodeFindingsCheckpoint(bytes), init, log).size).toBe(
      entries.filter(e => e.entry.kind === 'finding').length
    )

    for (const at of [0, 9, 40, Math.floor(bytes.length / 2), bytes.length - 1]) {
      const bad = Uint8Array.from(bytes)
      bad[at] ^= 0x20
      expect(() => decodeFindingsCheckpoint(bad)).toThrow(InvalidArgumentError)
    }
    expect(() => decodeFindingsCheckpoint(bytes.subarray(0, bytes.length - 8))).toThrow(InvalidArgumentError)

    // another log with the same shape: other ids
    const other = buildLog(steps.map(s => ({ ...s, author: (s.author + 1) % 3 })))
    expect(() => FindingsIndex.fromSnapshot(decodeFindingsCheckpoint(bytes), sourceOf(other.log), other.log)).toThrow(
      FailedPreconditionError
    )
    // a log that holds fewer entries than the checkpoint covers
    const shorter = buildLog(steps.slice(0, 20))
    expect(() => FindingsIndex.fromSnapshot(decodeFindingsCheckpoint(bytes), sourceOf(shorter.log), shorter.log)).toThrow(
      FailedPreconditionError
    )
  })
})
