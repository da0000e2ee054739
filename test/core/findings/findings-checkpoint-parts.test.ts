// The findings checkpoint in parts: restored from its head and parts, with
// the findings after its cut added on top, an index answers every search as
// the index of the whole log does, at any cut and after later checkpoints
// that add parts and keep the old ones as they were; a part missing, torn or
// of another index refuses the whole checkpoint; the single-file checkpoint
// is still read.
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { FindingsIndex } from '../../../src/core/findings/findings-index.js'
import { encodeFindingsCheckpoint } from '../../../src/core/findings/findings-checkpoint.js'
import {
  decodeFindingsCheckpointParts,
  encodeFindingsHead,
  encodeFindingsPart,
  partDigest
} from '../../../src/core/findings/findings-checkpoint-parts.js'
import { InvalidArgumentError } from '../../../src/core/errors.js'
import { answers, buildLog, sourceOf, step, useIdentities, type Step } from './checkpoint-log.js'

useIdentities()

/** A checkpoint up to `upTo` as a writer keeps it: the parts written before kept, the full segments below the cut added, a new head. */
function checkpoint(index: FindingsIndex, upTo: number, parts: Uint8Array[]): { head: Uint8Array; parts: Uint8Array[] } {
  const kept = [...parts]
  for (let i = kept.length; i < index.frozenSegments; i++) {
    const part = index.part(i)
    if (part.docCursor[part.docCursor.length - 1] > upTo) break
    kept.push(encodeFindingsPart(part))
  }
  const snap = index.snapshot(upTo, kept.length)
  expect(snap).toBeDefined()
  return { head: encodeFindingsHead(snap!, kept.map(partDigest)), parts: kept }
}

/** Part i as kept (the decoder checks it is the one the head names). */
const reader =
  (parts: Uint8Array[]) =>
  (i: number): Uint8Array | undefined =>
    parts[i]

describe('a findings checkpoint in parts', () => {
  it('restored at any cut, the findings after it added, answers as the index of the whole log; a later checkpoint keeps the parts as they were', () => {
    fc.assert(
      fc.property(
        fc.array(step, { minLength: 1, maxLength: 60 }),
        fc.nat(),
        fc.nat(),
        fc.integer({ min: 1, max: 6 }),
        (steps, a, b, segmentDocs) => {
          const { log, entries } = buildLog(steps)
          const init = { ...sourceOf(log), segmentDocs }
          const whole = FindingsIndex.fromEntries(entries, init)
          const [first, second] = [a % (entries.length + 1), b % (entries.length + 1)].sort((x, y) => x - y)
          const early = checkpoint(whole, first, [])
          const late = checkpoint(whole, second, early.parts)
          // the parts of the first are those a fresh checkpoint at the second cut writes, byte for byte
          expect(checkpoint(whole, second, []).parts.slice(0, early.parts.length)).toEqual(early.parts)
          for (const [cut, c] of [
            [first, early],
            [second, late]
          ] as const) {
            const read = decodeFindingsCheckpointParts(c.head, reader(c.parts))
            expect(read.parts).toEqual(c.parts.map(partDigest))
            const restored = FindingsIndex.fromSnapshot(read.snapshot, init, log)
            for (const e of entries) if (e.cursor > cut) restored.add(e)
            expect(answers(restored, entries)).toEqual(answers(whole, entries))
          }
        }
      ),
      { numRuns: 100 }
    )
  })

  it('is refused with a part missing, torn or of another index, and reads the single-file checkpoint', () => {
    const steps: Step[] = Array.from({ length: 40 }, (_, i) => ({
      author: i % 3,
      finding: i % 4 !== 0,
      kind: i % 5,
      words: [i % 13, (i * 3) % 13],
      path: i % 6,
      tag: i % 5,
      supersedes: i % 7 === 0 ? i % 5 : -1
    }))
    const { log, entries } = buildLog(steps)
    const init = { ...sourceOf(log), segmentDocs: 4 }
    const index = FindingsIndex.fromEntries(entries, init)
    const { head, parts } = checkpoint(index, log.cursor, [])
    expect(parts.length).toBe(7)
    const findings = entries.filter(e => e.entry.kind === 'finding').length
    expect(FindingsIndex.fromSnapshot(decodeFindingsCheckpointParts(head, reader(parts)).snapshot, init, log).size).toBe(findings)

    const refused = (read: (i: number, digest: string) => Uint8Array | undefined): void => {
      expect(() => decodeFindingsCheckpointParts(head, read)).toThrow(InvalidArgumentError)
    }
    // missing
    refused(i => (i === 3 ? undefined : parts[i]))
    // torn: cut short, or a byte changed
    refused(i => (i === 5 ? parts[i].subarray(0, parts[i].length - 40) : parts[i]))
    for (const at of [0, 12, 200]) {
      const bad = Uint8Array.from(parts[2])
      bad[at] ^= 0x20
      refused(i => (i === 2 ? bad : parts[i]))
    }
    // another part in its place, or the same segment of an index of another log
    refused(i => parts[i === 1 ? 2 : i])
    const other = buildLog(steps.map(s => ({ ...s, author: (s.author + 1) % 3 })))
    const otherParts = checkpoint(
      FindingsIndex.fromEntries(other.entries, { ...sourceOf(other.log), segmentDocs: 4 }),
      other.log.cursor,
      []
    ).parts
    refused(i => (i === 4 ? otherParts[4] : parts[i]))
    // the head torn
    const badHead = Uint8Array.from(head)
    badHead[head.length >> 1] ^= 0x01
    expect(() => decodeFindingsCheckpointParts(badHead, reader(parts))).toThrow(InvalidArgumentError)

    // the single-file format: read whole, without parts
    const single = decodeFindingsCheckpointParts(encodeFindingsCheckpoint(index.snapshot(log.cursor)!), () => undefined)
    expect(single.parts).toEqual([])
    const restored = FindingsIndex.fromSnapshot(single.snapshot, init, log)
    expect(answers(restored, entries)).toEqual(answers(index, entries))
  })
})
