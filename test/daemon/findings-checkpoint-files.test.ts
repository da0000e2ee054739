// The findings checkpoint's files in a data dir: a later checkpoint writes
// only the segments filled since and a new head, leaving the parts written
// before as they were; the parts no head names are removed; what is read back
// is the index; a part missing or torn makes the read an error (the log
// service then indexes the log), and a head of another data dir's index is
// not mixed with this one's parts.
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { FindingsIndex } from '../../src/core/findings/findings-index.js'
import { FindingsCheckpointWriter, partFile, readFindingsCheckpointNow } from '../../src/daemon/findings/findings-checkpoint-files.js'
import { checkpointPath, FINDINGS_CHECKPOINT_FILE } from '../../src/store/checkpoint-file.js'
import { answers, buildLog, sourceOf, useIdentities, type Step } from '../core/findings/checkpoint-log.js'

useIdentities()
const made: string[] = []
afterAll(async () => {
  for (const d of made) await rm(d, { recursive: true, force: true })
})

const steps = (n: number, shift = 0): Step[] =>
  Array.from({ length: n }, (_, i) => ({
    author: (i + shift) % 3,
    finding: i % 4 !== 0,
    kind: i % 5,
    words: [i % 13, (i * 3) % 13],
    path: i % 6,
    tag: i % 5,
    supersedes: i % 7 === 0 ? i % 5 : -1
  }))

async function dir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'agency-fparts-'))
  made.push(d)
  return d
}

const partFiles = async (d: string): Promise<string[]> => (await readdir(d)).filter(f => f.startsWith('findings-part-')).sort()

describe('the findings checkpoint files', () => {
  it('write each full segment once, keep the parts a later head names, remove the others, and read back the index', async () => {
    const d = await dir()
    const { log, entries } = buildLog(steps(80))
    const init = { ...sourceOf(log), segmentDocs: 8 }
    const index = FindingsIndex.fromEntries(entries, init)
    const writer = new FindingsCheckpointWriter(d)

    const first = await writer.write(index, 30)
    expect(first?.newParts).toBe(2)
    const firstParts = await partFiles(d)
    expect(firstParts).toHaveLength(2)
    const mtimes = await Promise.all(firstParts.map(async f => (await stat(join(d, f))).mtimeMs))
    await writeFile(join(d, `${partFile(9, 'f'.repeat(64))}.tmp`), 'left by a crash')

    const second = await writer.write(index, log.cursor)
    expect(second?.newParts).toBe(5)
    const secondParts = await partFiles(d)
    expect(secondParts).toHaveLength(7)
    expect(secondParts).toEqual(expect.arrayContaining(firstParts))
    expect(await Promise.all(firstParts.map(async f => (await stat(join(d, f))).mtimeMs))).toEqual(mtimes)

    const read = readFindingsCheckpointNow(d)
    if (!('snapshot' in read)) throw new Error(`not read: ${JSON.stringify(read)}`)
    expect(read.parts).toHaveLength(7)
    const restored = FindingsIndex.fromSnapshot(read.snapshot, init, log)
    expect(answers(restored, entries)).toEqual(answers(index, entries))

    // the restored index's parts are taken as written: the next checkpoint writes the head alone
    const again = new FindingsCheckpointWriter(d)
    again.adopt(restored, read.parts)
    expect((await again.write(restored, log.cursor))?.newParts).toBe(0)
    expect(await partFiles(d)).toEqual(secondParts)

    // an index of another log in the same data dir: its parts replace these
    const other = buildLog(steps(80, 1))
    const otherIndex = FindingsIndex.fromEntries(other.entries, { ...sourceOf(other.log), segmentDocs: 8 })
    expect((await again.write(otherIndex, other.log.cursor))?.newParts).toBe(7)
    const otherParts = await partFiles(d)
    expect(otherParts).toHaveLength(7)
    expect(otherParts.filter(f => secondParts.includes(f))).toEqual([])
  })

  it('is refused with a part missing or torn, or with a head of another index over these parts', async () => {
    const d = await dir()
    const { log, entries } = buildLog(steps(60))
    const index = FindingsIndex.fromEntries(entries, { ...sourceOf(log), segmentDocs: 8 })
    await new FindingsCheckpointWriter(d).write(index, log.cursor)
    const parts = await partFiles(d)
    expect(parts.length).toBeGreaterThan(2)
    expect('snapshot' in readFindingsCheckpointNow(d)).toBe(true)

    const torn = join(d, parts[1])
    const bytes = await readFile(torn)
    await writeFile(torn, bytes.subarray(0, bytes.length >> 1))
    expect(readFindingsCheckpointNow(d)).toHaveProperty('error')
    await rm(torn)
    expect(readFindingsCheckpointNow(d)).toHaveProperty('error')
    await writeFile(torn, bytes)
    expect('snapshot' in readFindingsCheckpointNow(d)).toBe(true)

    // the head of another data dir's index, its parts not there: refused, these parts are not taken for its
    const d2 = await dir()
    const other = buildLog(steps(60, 2))
    await new FindingsCheckpointWriter(d2).write(
      FindingsIndex.fromEntries(other.entries, { ...sourceOf(other.log), segmentDocs: 8 }),
      other.log.cursor
    )
    await writeFile(checkpointPath(d, FINDINGS_CHECKPOINT_FILE), await readFile(checkpointPath(d2, FINDINGS_CHECKPOINT_FILE)))
    expect(readFindingsCheckpointNow(d)).toHaveProperty('error')

    await rm(checkpointPath(d, FINDINGS_CHECKPOINT_FILE))
    expect(readFindingsCheckpointNow(d)).toEqual({ missing: true })
  })
})
