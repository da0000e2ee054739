import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { testFaults } from '../src/test-faults.js'
import { waitFor } from './helpers/wait-for.js'

const dir = mkdtempSync(join(tmpdir(), 'agency-test-faults-'))
afterAll(() => {
  rmSync(dir, { recursive: true, force: true })
})

describe('test-only fault switches', () => {
  it('are off without AGENCY_TEST_FAULTS=1, whatever else is set', () => {
    const f = testFaults({ AGENCY_TEST_BREAK: 'settle,fence', AGENCY_TEST_CLOCK_FILE: join(dir, 'none') })
    expect(f.breaks.size).toBe(0)
    expect(f.wallClock).toBeUndefined()
  })

  it('read the breaks, and a wall clock that follows the offset file', async () => {
    const file = join(dir, 'clock')
    writeFileSync(file, '3600000\n')
    const f = testFaults({ AGENCY_TEST_FAULTS: '1', AGENCY_TEST_BREAK: 'fence,bogus', AGENCY_TEST_CLOCK_FILE: file })
    expect([...f.breaks]).toEqual(['fence'])
    expect(f.wallClock!() - Date.now()).toBeGreaterThan(3_500_000)
    writeFileSync(file, '-60000\n')
    await waitFor(() => f.wallClock!() < Date.now())
    expect(Date.now() - f.wallClock!()).toBeGreaterThan(50_000)
  })
})
