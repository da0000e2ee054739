import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { mkdir, writeFile } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { Level } from 'level'
import { openStore, type AgencyStore } from '../../src/store/open-store.js'
import { DataDirError, DataDirLockedError } from '../../src/store/errors.js'
import { feed, plain, tempDirs } from './helpers.js'
import { padNumber } from '../../src/store/keys.js'
import type { StoredEntryRecord } from '../../src/store/log-store.js'

const ROOT = resolve(import.meta.dirname, '../..')
const dirs = tempDirs()
const open: AgencyStore[] = []
const children: ChildProcess[] = []
afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode == null && c.signalCode == null) c.kill('SIGKILL')
  await Promise.all(
    open.splice(0).map(async s => {
      await s.close()
    })
  )
  await dirs.cleanup()
})

/** Runs an ESM script in a child node (with tsx, so it can import src/*.ts); collects its stdout. */
function runChild(script: string, args: string[]): { child: ChildProcess; lines: AsyncIterator<string>; output: () => string } {
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script, ...args], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'inherit']
  })
  children.push(child)
  let out = ''
  const waiting: Array<(line: string) => void> = []
  const buffered: string[] = []
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk
    for (const line of chunk.split('\n').filter(l => l !== '')) {
      const w = waiting.shift()
      if (w != null) w(line)
      else buffered.push(line)
    }
  })
  const lines: AsyncIterator<string> = {
    next: async () => {
      const line = buffered.shift() ?? (await new Promise<string>(resolve => waiting.push(resolve)))
      return { value: line, done: false }
    }
  }
  return { child, lines, output: () => out }
}

describe('openStore', () => {
  it('creates the data dir and <dataDir>/db, and opens again after close', async () => {
    const dir = join(await dirs.make(), 'nested', 'data')
    const first = await openStore(dir)
    expect(first.path).toBe(join(dir, 'db'))
    await first.state.put('k', 'v')
    await first.close()
    await first.close() // a second close is harmless
    const second = await openStore(dir)
    open.push(second)
    expect(await second.state.get('k')).toBe('v')
  })

  it('refuses a second open in the same process while the first is open', async () => {
    const dir = await dirs.make()
    open.push(await openStore(dir))
    const err = await openStore(dir).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(DataDirLockedError)
    expect(err).toMatchObject({
      name: 'DataDirLockedError',
      code: 'FAILED_PRECONDITION',
      message: `data dir ${dir} is in use by another agentd`
    })
  })

  it('refuses a data dir whose LevelDB another process holds, and opens once it lets go', async () => {
    const dir = await dirs.make()
    const holder = runChild(
      `
      import { Level } from 'level'
      const db = new Level(process.argv[1])
      await db.open()
      console.log('holding')
      process.stdin.resume()
      process.stdin.on('end', async () => { await db.close(); console.log('released') })
    `,
      [join(dir, 'db')]
    )
    expect((await holder.lines.next()).value).toBe('holding')

    const err = await openStore(dir).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(DataDirLockedError)
    expect((err as Error).message).toBe(`data dir ${dir} is in use by another agentd`)

    holder.child.stdin!.end()
    const [code] = await once(holder.child, 'exit')
    expect(code).toBe(0)
    expect(holder.output()).toContain('released')
    open.push(await openStore(dir))
  })

  it("makes another process's openStore fail with DataDirLockedError while this one holds the dir", async () => {
    const dir = await dirs.make()
    open.push(await openStore(dir))
    const other = runChild(
      `
      import { openStore } from './src/store/open-store.ts'
      try {
        await openStore(process.argv[1])
        console.log(JSON.stringify({ opened: true }))
      } catch (err) {
        console.log(JSON.stringify({ name: err.name, code: err.code, message: err.message }))
      }
    `,
      [dir]
    )
    const [exitCode] = await once(other.child, 'exit')
    expect(exitCode).toBe(0)
    expect(JSON.parse(other.output())).toEqual({
      name: 'DataDirLockedError',
      code: 'FAILED_PRECONDITION',
      message: `data dir ${dir} is in use by another agentd`
    })
  })

  it('refuses a data dir that is a regular file', async () => {
    const file = join(await dirs.make(), 'not-a-dir')
    await writeFile(file, 'x')
    const err = await openStore(file).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(DataDirError)
    expect(err).toMatchObject({ code: 'FAILED_PRECONDITION' })
    expect((err as Error).message).toBe(`data dir ${file} cannot be used: ${file} (or a parent of it) is not a directory`)
  })

  it('refuses a data dir below a regular file', async () => {
    const file = join(await dirs.make(), 'file')
    await writeFile(file, 'x')
    const err = await openStore(join(file, 'data')).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(DataDirError)
    expect((err as Error).message).toContain('is not a directory')
  })

  it('refuses a data dir whose db is a regular file', async () => {
    const dir = await dirs.make()
    await writeFile(join(dir, 'db'), 'x')
    const err = await openStore(dir).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(DataDirError)
    expect((err as Error).message).toBe(`data dir ${dir} cannot be used: ${join(dir, 'db')} (or a parent of it) is not a directory`)
  })

  it('refuses a store written with a newer layout, and releases the lock when it does', async () => {
    const dir = await dirs.make()
    await mkdir(dir, { recursive: true })
    const raw = new Level<string, string>(join(dir, 'db'))
    await raw.sublevel<string, string>('meta', { valueEncoding: 'utf8' }).put('schema', '99')
    await raw.close()
    const err = await openStore(dir).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(DataDirError)
    expect((err as Error).message).toContain('newer agentd')
    // the failed open closed its LevelDB, so the dir is not left locked
    const again = await openStore(dir).catch((e: unknown) => e)
    expect(again).toBeInstanceOf(DataDirError)
  })

  it('moves a log written by store schema 1 to one key per entry, keeping every entry, the vector and the pending set', async () => {
    const dir = await dirs.make()
    const records = [...feed('12D3KooWAlice', 3, 1), ...feed('12D3KooWBob', 2, 4)]
    // schema 1: entries by id, indexes by seq and by cursor, the vector
    const raw = new Level<string, string>(join(dir, 'db'))
    const sub = (name: string, valueEncoding: 'utf8' | 'view') => raw.sublevel<string, any>(name, { keyEncoding: 'utf8', valueEncoding })
    await sub('meta', 'utf8').put('schema', '1')
    for (const r of records) {
      await sub('log-entry', 'view').put(r.id, r.bytes)
      await sub('log-seq', 'utf8').put(`${r.entry.author}/${padNumber(r.entry.seq)}`, r.id)
      await sub('log-cursor', 'utf8').put(padNumber(r.cursor), r.id)
    }
    await sub('log-vector', 'utf8').put('12D3KooWAlice', '3')
    await sub('log-vector', 'utf8').put('12D3KooWBob', '2')
    await sub('log-pending', 'view').put('ab'.repeat(32), records[0].bytes)
    await raw.close()

    for (let pass = 0; pass < 2; pass++) {
      const s = await openStore(dir)
      const all: StoredEntryRecord[] = []
      for await (const r of s.log.loadAll()) all.push(r)
      expect(all.map(plain)).toEqual(records.map(plain))
      expect(s.log.loadVector()).toEqual(
        new Map([
          ['12D3KooWAlice', 3],
          ['12D3KooWBob', 2]
        ])
      )
      expect(s.log.lastCursor()).toBe(5)
      expect((await s.log.loadPending()).map(p => p.id)).toEqual(['ab'.repeat(32)])
      expect(await s.db.sublevel<string, string>('log-cursor', { valueEncoding: 'utf8' }).keys().all()).toEqual([])
      expect(await s.db.sublevel<string, string>('meta', { valueEncoding: 'utf8' }).get('schema')).toBe('2')
      await s.close()
    }
  })
})
