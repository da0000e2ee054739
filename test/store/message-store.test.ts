import { afterEach, describe, expect, it } from 'vitest'
import { DirectMessage } from '../../src/gen/agency/v1/wire.js'
import { openStore, type AgencyStore } from '../../src/store/open-store.js'
import { tempDirs } from './helpers.js'

const dirs = tempDirs()
const open: AgencyStore[] = []
afterEach(async () => {
  await Promise.all(
    open.splice(0).map(async s => {
      await s.close()
    })
  )
  await dirs.cleanup()
})

async function storeIn(dir: string): Promise<AgencyStore> {
  const s = await openStore(dir)
  open.push(s)
  return s
}

function message(id: string, from = '12D3KooWSender', time = 1_700_000_000_000): DirectMessage {
  return DirectMessage.fromPartial({
    id,
    from,
    to: '12D3KooWReceiver',
    thread: 't1',
    replyTo: '',
    text: `text of ${id}`,
    time,
    fromName: 'sender'
  })
}

describe('outbox', () => {
  it('keeps queued messages across a restart until delivered or dropped', async () => {
    const dir = await dirs.make()
    const first = await openStore(dir)
    await first.messages.enqueue(message('m2', undefined, 2), { expiresAt: 5000 })
    await first.messages.enqueue(message('m1', undefined, 1), { expiresAt: 6000 })
    await first.messages.enqueue(message('m3', undefined, 3), { expiresAt: 7000 })
    await first.close()

    const s = await storeIn(dir)
    const queued = await s.messages.listOutbox()
    expect(queued.map(r => r.message)).toEqual([message('m1', undefined, 1), message('m2', undefined, 2), message('m3', undefined, 3)])
    expect(queued.map(r => [r.attempts, r.expiresAt])).toEqual([
      [0, 6000],
      [0, 5000],
      [0, 7000]
    ])

    expect(await s.messages.markDelivered('m1')).toBe(true)
    expect(await s.messages.markDelivered('m1')).toBe(false)
    expect(await s.messages.drop('m3', 'expired')).toBe(true)
    expect((await s.messages.listOutbox()).map(r => r.message.id)).toEqual(['m2'])
    expect(await s.messages.outboxCount()).toBe(1)
  })

  it('counts delivery attempts durably', async () => {
    const dir = await dirs.make()
    const first = await openStore(dir)
    await first.messages.enqueue(message('m1'), { expiresAt: 9000 })
    await first.messages.recordAttempt('m1', 100)
    const after = await first.messages.recordAttempt('m1', 200)
    expect(after).toMatchObject({ attempts: 2, lastAttemptAt: 200, expiresAt: 9000 })
    expect(await first.messages.recordAttempt('gone', 300)).toBeUndefined()
    await first.close()

    const s = await storeIn(dir)
    expect(await s.messages.getOutbox('m1')).toMatchObject({ attempts: 2, lastAttemptAt: 200 })
  })

  it('refuses a message id already queued, and bad input, without changing the outbox', async () => {
    const s = await storeIn(await dirs.make())
    await s.messages.enqueue(message('m1'), { expiresAt: 100 })
    await expect(s.messages.enqueue({ ...message('m1'), text: 'other' }, { expiresAt: 200 })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT'
    })
    await expect(s.messages.enqueue(message(''), { expiresAt: 200 })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' })
    await expect(s.messages.enqueue({ ...message('m2'), to: '' }, { expiresAt: 200 })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' })
    await expect(s.messages.enqueue(message('m3'), { expiresAt: Number.NaN })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' })
    const queued = await s.messages.listOutbox()
    expect(queued.map(r => [r.message.text, r.expiresAt])).toEqual([['text of m1', 100]])
  })
})

describe('inbox', () => {
  it('stores each message once, with cursors from 1', async () => {
    const s = await storeIn(await dirs.make())
    expect(s.messages.lastCursor()).toBe(0)
    expect(await s.messages.deliver(message('a'), 10)).toEqual({ stored: true, cursor: 1 })
    expect(await s.messages.deliver(message('b'), 11)).toEqual({ stored: true, cursor: 2 })
    expect(await s.messages.deliver({ ...message('a'), text: 'replayed' }, 12)).toEqual({ stored: false, cursor: 1 })
    expect(s.messages.inboxCount()).toBe(2)
    expect(await s.messages.inboxAfter(0, 10)).toEqual([
      { cursor: 1, receivedAt: 10, message: message('a') },
      { cursor: 2, receivedAt: 11, message: message('b') }
    ])
    expect((await s.messages.inboxAfter(1, 10)).map(r => r.cursor)).toEqual([2])
    expect(await s.messages.inboxAfter(2, 10)).toEqual([])
  })

  it('dedupes and continues cursors across a restart', async () => {
    const dir = await dirs.make()
    const first = await openStore(dir)
    await first.messages.deliver(message('a'), 10)
    await first.messages.deliver(message('b'), 11)
    await first.close()

    const s = await storeIn(dir)
    expect(s.messages.lastCursor()).toBe(2)
    expect(s.messages.inboxCount()).toBe(2)
    expect(await s.messages.deliver(message('b'), 20)).toEqual({ stored: false, cursor: 2 })
    expect(await s.messages.deliver(message('c'), 21)).toEqual({ stored: true, cursor: 3 })
    expect((await s.messages.inboxAfter(0, 10)).map(r => [r.cursor, r.message.id])).toEqual([
      [1, 'a'],
      [2, 'b'],
      [3, 'c']
    ])
  })

  it('stores a message delivered concurrently many times exactly once', async () => {
    const s = await storeIn(await dirs.make())
    const results = await Promise.all(Array.from({ length: 25 }, async (_, i) => await s.messages.deliver(message('same'), i)))
    expect(results.filter(r => r.stored)).toHaveLength(1)
    expect(new Set(results.map(r => r.cursor))).toEqual(new Set([1]))
    expect(s.messages.inboxCount()).toBe(1)
    expect(await s.messages.inboxAfter(0, 100)).toHaveLength(1)
  })

  it('gives concurrent distinct messages distinct consecutive cursors', async () => {
    const s = await storeIn(await dirs.make())
    const results = await Promise.all(Array.from({ length: 25 }, async (_, i) => await s.messages.deliver(message(`m${i}`), i)))
    expect(results.every(r => r.stored)).toBe(true)
    expect(results.map(r => r.cursor).sort((a, b) => a - b)).toEqual(Array.from({ length: 25 }, (_, i) => i + 1))
  })

  it("scopes seen ids by sender, so one peer cannot suppress another peer's message", async () => {
    const s = await storeIn(await dirs.make())
    expect((await s.messages.deliver(message('x', '12D3KooWMallory'), 1)).stored).toBe(true)
    expect((await s.messages.deliver(message('x', '12D3KooWAlice'), 2)).stored).toBe(true)
  })

  it('orders cursors numerically past 9, 99 and 999', async () => {
    const s = await storeIn(await dirs.make())
    for (let i = 1; i <= 1002; i++) await s.messages.deliver(message(`m${i}`), i)
    for (const after of [9, 99, 999]) {
      expect((await s.messages.inboxAfter(after, 2)).map(r => [r.cursor, r.message.id])).toEqual([
        [after + 1, `m${after + 1}`],
        [after + 2, `m${after + 2}`]
      ])
    }
    const everything = await s.messages.inboxAfter(0, 5000)
    expect(everything.map(r => r.cursor)).toEqual(Array.from({ length: 1002 }, (_, i) => i + 1))
  })

  it('refuses bad input and changes nothing', async () => {
    const s = await storeIn(await dirs.make())
    await expect(s.messages.deliver(message(''), 1)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' })
    await expect(s.messages.deliver(message('a', 'x/y'), 1)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' })
    await expect(s.messages.deliver(message('a'), -1)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' })
    await expect(s.messages.inboxAfter(-1, 10)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' })
    await expect(s.messages.inboxAfter(0, 0)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' })
    expect(s.messages.inboxCount()).toBe(0)
    expect(await s.messages.deliver(message('a'), 1)).toEqual({ stored: true, cursor: 1 })
  })
})
