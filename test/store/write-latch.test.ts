// A failed write closes the store to writes until it is opened again: on a
// full disk LevelDB can tear the write-ahead log, and what is written after
// the tear, synced and acknowledged, is dropped as corrupt on the next open.
// A direct message that could not be stored is not marked seen: retried after
// the restart it is stored, once.
import { execFileSync } from 'node:child_process'
import { mkdir, rm, writeFile } from 'node:fs/promises'
import { statfsSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { DirectMessage } from '../../src/gen/agency/v1/wire.js'
import { openLevelDb } from '../../src/store/level-db.js'
import { MessageStore } from '../../src/store/message-store.js'
import { openStore, type AgencyStore } from '../../src/store/open-store.js'
import { latchWrites, WritesClosedError } from '../../src/store/write-latch.js'
import { tempDirs } from './helpers.js'

const dirs = tempDirs()
const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
  await dirs.cleanup()
})

function message(id: string): DirectMessage {
  return DirectMessage.fromPartial({
    id,
    from: '12D3KooWSender',
    to: '12D3KooWReceiver',
    thread: id,
    replyTo: '',
    text: `text of ${id} ${'x'.repeat(400)}`,
    time: 1_700_000_000_000,
    fromName: 'sender'
  })
}

describe('a failed write', () => {
  it('closes the store to writes; the message it failed to store is stored once after a restart', async () => {
    const dir = await dirs.make()
    const db = await openLevelDb(dir)
    // The disk fills for one write.
    const impl = db as unknown as { _batch: (...args: unknown[]) => Promise<void> }
    const batch = impl._batch.bind(db)
    let full = true
    impl._batch = async (...args) => {
      if (full) {
        full = false
        throw Object.assign(new Error('IO error: 000003.log: No space left on device'), { code: 'LEVEL_IO_ERROR' })
      }
      await batch(...args)
    }
    const latch = latchWrites(db)
    const told: string[] = []
    latch.onFailure(err => {
      told.push(err.message)
    })
    const messages = await MessageStore.open(db)

    await expect(messages.deliver(message('m1'), 1)).rejects.toThrow(/no space left on device/i)
    expect(told).toEqual(['IO error: 000003.log: No space left on device'])
    // Room again, but the store takes nothing more: not the retry, not another message.
    await expect(messages.deliver(message('m1'), 2)).rejects.toThrow(WritesClosedError)
    await expect(messages.deliver(message('m2'), 3)).rejects.toThrow(
      /an earlier write to the data dir failed \(IO error: 000003\.log: No space left on device\)/
    )
    expect(latch.failure()?.message).toMatch(/no space left/i)
    expect(told).toHaveLength(1)
    expect(messages.lastCursor()).toBe(0)
    await db.close()

    // Restarted: the retry is stored, once.
    const s = await openStore(dir)
    cleanups.push(async () => {
      await s.close()
    })
    expect(await s.messages.inboxAfter(0, 10)).toEqual([])
    expect(await s.messages.deliver(message('m1'), 4)).toEqual({ stored: true, cursor: 1 })
    expect(await s.messages.deliver(message('m1'), 5)).toEqual({ stored: false, cursor: 1 })
    expect((await s.messages.inboxAfter(0, 10)).map(r => r.message.id)).toEqual(['m1'])
    expect(s.writes.failure()).toBeUndefined()
  })

  it('on a full disk (a small tmpfs): nothing is acknowledged that a restart loses', async ctx => {
    const mnt = await dirs.make()
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1M', 'tmpfs', mnt], { stdio: 'ignore' })
    } catch {
      ctx.skip('cannot mount a small tmpfs here (needs root): the full-disk case is not tested')
    }
    cleanups.push(async () => {
      try {
        execFileSync('umount', [mnt], { stdio: 'ignore' })
      } catch {
        /* not mounted */
      }
    })
    const dir = join(mnt, 'data')
    const first = await openStore(dir)
    let open: AgencyStore | undefined = first
    cleanups.push(async () => {
      await open?.close()
    })

    // Fill the disk to its last 8 KiB, then store messages until one fails.
    const st = statfsSync(mnt)
    await mkdir(join(mnt, 'filler'))
    await writeFile(join(mnt, 'filler', 'fill'), Buffer.alloc(Math.max(0, st.bavail * st.bsize - 8192)))
    const acked: string[] = []
    let failed: Error | undefined
    for (let i = 0; i < 500 && failed === undefined; i++) {
      await first.messages.deliver(message(`full-${i}`), i).then(
        r => {
          if (r.stored) acked.push(`full-${i}`)
        },
        (err: Error) => {
          failed = err
        }
      )
    }
    expect(failed?.message, 'the disk never filled').toMatch(/no space left on device/i)

    // Room again: a message now is refused (not acked), where it used to be stored and acknowledged, then lost on the restart.
    await rm(join(mnt, 'filler'), { recursive: true })
    const later = await first.messages.deliver(message('after'), 1000).then(
      () => undefined,
      (err: Error) => err
    )
    expect(later).toBeInstanceOf(WritesClosedError)

    await first.close()
    open = await openStore(dir)
    const inbox = (await open.messages.inboxAfter(0, 1000)).map(r => r.message.id)
    expect(inbox).toEqual(acked)
    // The message refused is stored once, now that the store is open again.
    expect((await open.messages.deliver(message('after'), 1001)).stored).toBe(true)
    expect((await open.messages.deliver(message('after'), 1002)).stored).toBe(false)
    await open.close()
    open = await openStore(dir)
    expect((await open.messages.inboxAfter(0, 1000)).map(r => r.message.id)).toEqual([...acked, 'after'])
  })
})
