import { afterEach, describe, expect, it } from 'vitest'
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

describe('StateStore', () => {
  it('keeps JSON values across a restart until deleted', async () => {
    const dir = await dirs.make()
    const first = await openStore(dir)
    await first.state.put('status', { line: 'testing the store', since: 12 }, { sync: true })
    await first.state.put('claims', [{ task: 't1', epoch: 2 }])
    await first.close()

    const s = await openStore(dir)
    open.push(s)
    expect(await s.state.get('status')).toEqual({ line: 'testing the store', since: 12 })
    expect(await s.state.get<Array<{ task: string }>>('claims')).toEqual([{ task: 't1', epoch: 2 }])
    await s.state.del('status')
    expect(await s.state.get('status')).toBeUndefined()
    expect(await s.state.get('never-set')).toBeUndefined()
  })

  it('refuses values that are not JSON and an empty key, keeping the old value', async () => {
    const s = await openStore(await dirs.make())
    open.push(s)
    await s.state.put('k', 1)
    await expect(s.state.put('k', 10n)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' })
    await expect(s.state.put('k', undefined)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' })
    const cyclic: Record<string, unknown> = {}
    cyclic.self = cyclic
    await expect(s.state.put('k', cyclic)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' })
    await expect(s.state.put('', 1)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' })
    expect(await s.state.get('k')).toBe(1)
  })
})
