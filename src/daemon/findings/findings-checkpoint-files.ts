// The files of the findings checkpoint in a data dir (its format:
// core/findings/findings-checkpoint-parts.ts): the head, under the name the
// single file had, and a file per part named by its segment and digest. Each
// is written to a temporary name, synced and renamed (store/checkpoint-file),
// the parts before the head that names them; the parts no head names any
// more are removed after. A crash leaves the old head with its parts or the
// new one with its own.
import { readFileSync } from 'node:fs'
import { readdir, rm } from 'node:fs/promises'
import { join } from 'node:path'
import {
  decodeFindingsCheckpointParts,
  encodeFindingsHead,
  encodeFindingsPart,
  partDigest
} from '../../core/findings/findings-checkpoint-parts.js'
import type { FindingsSnapshot } from '../../core/findings/findings-checkpoint.js'
import type { FindingsIndex } from '../../core/findings/findings-index.js'
import { checkpointPath, FINDINGS_CHECKPOINT_FILE, writeCheckpoint } from '../../store/checkpoint-file.js'

const PART_PREFIX = 'findings-part-'

/** The file of part `i` named by `digest` (the head keeps the whole digest; 16 hex digits tell parts apart in a name). */
export function partFile(i: number, digest: string): string {
  return `${PART_PREFIX}${i}-${digest.slice(0, 16)}`
}

/** What a read of the checkpoint gives: the snapshot and the digests of its parts, none, or why it cannot be used. */
export type FindingsCheckpointRead = { snapshot: FindingsSnapshot; parts: string[] } | { missing: true } | { error: string }

/** The data dir's findings checkpoint, read and checked at once (the worker's read, and a search's that cannot wait). Never throws. */
export function readFindingsCheckpointNow(dataDir: string): FindingsCheckpointRead {
  let head: Uint8Array
  try {
    head = readFileSync(checkpointPath(dataDir, FINDINGS_CHECKPOINT_FILE))
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT' ? { missing: true } : { error: (err as Error).message }
  }
  try {
    return decodeFindingsCheckpointParts(head, (i, digest) => {
      try {
        return readFileSync(join(dataDir, partFile(i, digest)))
      } catch {
        return undefined
      }
    })
  } catch (err) {
    return { error: (err as Error).message }
  }
}

/** What a checkpoint wrote: bytes and milliseconds spent encoding them (parts and head). */
export interface FindingsCheckpointWritten {
  bytes: number
  encodeMs: number
  parts: number
  newParts: number
}

/**
 * Writes the findings checkpoints of one data dir, one at a time, keeping the
 * parts it wrote (or read) as long as the index still holds their segments:
 * a later checkpoint writes the new full segments and the head.
 */
export class FindingsCheckpointWriter {
  /** part i: the segment it holds (FindingsIndex.segmentToken) and its digest */
  private parts: Array<{ token: object; digest: string }> = []

  constructor(private readonly dataDir: string) {}

  /** The parts of a checkpoint just read are those of `index`, restored from it. */
  adopt(index: FindingsIndex, digests: readonly string[]): void {
    this.parts = []
    for (const [i, digest] of digests.entries()) {
      const token = index.segmentToken(i)
      if (token === undefined) break
      this.parts.push({ token, digest })
    }
  }

  /**
   * Writes the checkpoint of `index` up to log cursor `upTo` (the index holds every finding to it); undefined when the index cannot be cut
   * there.
   */
  async write(index: FindingsIndex, upTo: number): Promise<FindingsCheckpointWritten | undefined> {
    let kept = 0
    while (kept < this.parts.length && this.parts[kept].token === index.segmentToken(kept)) kept++
    this.parts.length = kept
    let bytes = 0
    let encodeMs = 0
    let newParts = 0
    for (let i = kept; i < index.frozenSegments; i++) {
      const t = performance.now()
      const part = index.part(i)
      // a segment past the cut stays in the head's tail (cut within it) or out of it
      if (part.docCursor[part.docCursor.length - 1] > upTo) break
      const encoded = encodeFindingsPart(part)
      encodeMs += performance.now() - t
      const digest = partDigest(encoded)
      await writeCheckpoint(this.dataDir, encoded, partFile(i, digest))
      this.parts.push({ token: index.segmentToken(i) as object, digest })
      bytes += encoded.byteLength
      newParts++
    }
    const t = performance.now()
    const snap = index.snapshot(upTo, this.parts.length)
    if (snap === undefined) return undefined
    const digests = this.parts.map(p => p.digest)
    const head = encodeFindingsHead(snap, digests)
    encodeMs += performance.now() - t
    await writeCheckpoint(this.dataDir, head, FINDINGS_CHECKPOINT_FILE)
    await this.removeUnnamed(new Set(digests.map((d, i) => partFile(i, d))))
    return { bytes: bytes + head.byteLength, encodeMs, parts: digests.length, newParts }
  }

  /** Removes part files (and their temporary files) the head does not name. */
  private async removeUnnamed(named: ReadonlySet<string>): Promise<void> {
    const files = await readdir(this.dataDir)
    for (const f of files) {
      if (!f.startsWith(PART_PREFIX) || named.has(f)) continue
      await rm(join(this.dataDir, f), { force: true })
    }
  }
}
