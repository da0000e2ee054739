// A checkpoint of the log's index: a log restored from one, plus the entries
// after it, is the log a full restore gives; a corrupt checkpoint, one of
// another log, or one ahead of the store is refused and changes nothing.
import { beforeAll, describe, expect, it } from 'vitest'
import { MemoryArchive } from '../../../src/core/log/accepted-entries.js'
import { LogState } from '../../../src/core/log/log-state.js'
import { FailedPreconditionError, InvalidArgumentError } from '../../../src/core/errors.js'
import { makeIdentities, type TestIdentity } from '../../helpers/identity.js'

let ids: TestIdentity[]
beforeAll(async () => {
  ids = await makeIdentities(3)
})

const KINDS = ['finding', 'goal', 'task', 'claim'] as const

/** A log of `n` entries by three authors, interleaved, with a few kinds, in an archive. */
function buildLog(n: number, archive = new MemoryArchive()): { log: LogState; archive: MemoryArchive } {
  const log = new LogState({ archive })
  for (let i = 0; i < n; i++) {
    const kind = KINDS[i % KINDS.length]
    const body =
      kind === 'finding'
        ? { kind: 'note', text: `finding ${i}` }
        : kind === 'goal'
          ? { text: `goal ${i}` }
          : kind === 'task'
            ? { id: `t${i}`, title: `task ${i}` }
            : { task: `t${i - 1}`, epoch: 1 }
    log.append(ids[(i * 7) % 3].signer, kind, body, 1000 + i)
  }
  return { log, archive }
}

/** Everything a reader of the log sees, for comparing two logs. */
function view(log: LogState): unknown {
  return {
    size: log.size,
    cursor: log.cursor,
    lamport: log.lamport,
    vector: [...log.vector()],
    summaries: log.summaries(),
    counts: [...log.countsByKind()].sort(),
    ordered: log.ordered().map(e => [e.id, e.cursor]),
    after: log.afterCursor(0).map(e => e.id),
    authors: log.authors(),
    // the counts per kind up to a few cursors, in one pass as one kind at a time gives them
    countsUpTo: [0, 1, 7, Math.floor(log.cursor / 2), log.cursor, log.cursor + 5].map(c => {
      const counts = [...log.countsByKindUpTo(c)].sort()
      expect(counts).toEqual(
        KINDS.map(k => [k, log.countOfKind(k, c)] as const)
          .filter(([, n]) => n > 0)
          .sort()
      )
      return counts
    })
  }
}

/** A log restored from `archive` the slow way: every entry read, decoded and hashed. */
function fullRestore(archive: MemoryArchive, source: LogState): LogState {
  const log = new LogState({ archive })
  log.restoreEntries(source.afterCursor(0).map(e => ({ cursor: e.cursor, bytes: e.bytes, id: e.id, entry: e.entry })))
  log.restoreFinish({})
  return log
}

describe('a log checkpoint', () => {
  it('restores the log it was taken of, and the entries after it fold on top', () => {
    const { log, archive } = buildLog(60)
    const ckpt = log.checkpoint(40) as Uint8Array
    expect(ckpt).toBeInstanceOf(Uint8Array)

    const restored = new LogState({ archive })
    const from = restored.restoreCheckpoint(ckpt, { lastCursor: 60, vector: log.vector() })
    expect(from).toBe(40)
    restored.restoreEntries(log.afterCursor(40).map(e => ({ cursor: e.cursor, bytes: e.bytes, id: e.id, entry: e.entry })))
    restored.restoreFinish({})
    expect(view(restored)).toEqual(view(fullRestore(archive, log)))
    expect(view(restored)).toEqual(view(log))
    // read back from a file: a Buffer that is a view at an odd offset into a larger one
    const pooled = Buffer.alloc(ckpt.length + 3)
    pooled.set(ckpt, 3)
    const fromFile = new LogState({ archive })
    expect(fromFile.restoreCheckpoint(pooled.subarray(3))).toBe(40)
    // it reads entries as the log does, and goes on appending where the log left off
    const some = log.byAuthorSeq(ids[1].id, 3)
    expect(restored.byAuthorSeq(ids[1].id, 3)).toEqual(some)
    expect(restored.get(some?.id ?? '')).toEqual(some)
    const next = restored.append(ids[0].signer, 'finding', { kind: 'note', text: 'after' }, 9999)
    expect(next.entry.seq).toBe((log.vector().get(ids[0].id) ?? 0) + 1)
    expect(next.cursor).toBe(61)
  })

  it('covering the whole log, restores it with nothing left to fold', () => {
    const { log, archive } = buildLog(25)
    const restored = new LogState({ archive })
    expect(restored.restoreCheckpoint(log.checkpoint() as Uint8Array, { lastCursor: 25, vector: log.vector() })).toBe(25)
    restored.restoreFinish({})
    expect(view(restored)).toEqual(view(log))
  })

  it('is refused, changing nothing, when a byte of it is changed or it is cut short', () => {
    const { log, archive } = buildLog(30)
    const ckpt = log.checkpoint() as Uint8Array
    const store = { lastCursor: 30, vector: log.vector() }
    for (const at of [0, 9, 20, Math.floor(ckpt.length / 2), ckpt.length - 1]) {
      const bad = Uint8Array.from(ckpt)
      bad[at] ^= 0x40
      const fresh = new LogState({ archive })
      expect(() => fresh.restoreCheckpoint(bad, store)).toThrow(InvalidArgumentError)
      expect(fresh.size).toBe(0)
    }
    const fresh = new LogState({ archive })
    expect(() => fresh.restoreCheckpoint(ckpt.subarray(0, ckpt.length - 100), store)).toThrow(InvalidArgumentError)
    expect(() => fresh.restoreCheckpoint(new Uint8Array(0), store)).toThrow(InvalidArgumentError)
    // the same log still restores in full after the refusals
    expect(view(fullRestore(archive, log))).toEqual(view(log))
  })

  it('is refused when it is ahead of the store (the store lost writes the checkpoint covers)', () => {
    const { log, archive } = buildLog(30)
    const ckpt = log.checkpoint() as Uint8Array
    const fresh = new LogState({ archive })
    expect(() => fresh.restoreCheckpoint(ckpt, { lastCursor: 29, vector: log.vector() })).toThrow(FailedPreconditionError)
    const behind = new Map(log.vector())
    behind.set(ids[2].id, (behind.get(ids[2].id) ?? 1) - 1)
    expect(() => fresh.restoreCheckpoint(ckpt, { lastCursor: 30, vector: behind })).toThrow(FailedPreconditionError)
    expect(fresh.size).toBe(0)
  })

  it('is refused when the entries it names are not those the archive holds (another log)', () => {
    const { log } = buildLog(20)
    // the same authors, feeds of the same lengths, other entries
    const otherArchive = new MemoryArchive()
    const replay = new LogState({ archive: otherArchive })
    for (const e of log.afterCursor(0))
      replay.append(ids.find(i => i.id === e.entry.author)?.signer as any, 'finding', { kind: 'note', text: `other ${e.cursor}` }, 5)
    expect(replay.vector()).toEqual(log.vector())
    const fresh = new LogState({ archive: otherArchive })
    expect(() => fresh.restoreCheckpoint(log.checkpoint() as Uint8Array, { lastCursor: 20, vector: replay.vector() })).toThrow(
      FailedPreconditionError
    )
    expect(fresh.size).toBe(0)
  })

  it('is not taken of an empty log', () => {
    expect(new LogState().checkpoint()).toBeUndefined()
    const { log } = buildLog(5)
    expect(log.checkpoint(0)).toBeUndefined()
  })
})
