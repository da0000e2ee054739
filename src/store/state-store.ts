// Small local daemon state (status line, own claims, ...) as JSON values.
// Not replicated; lost with the data dir.
import { InvalidArgumentError } from '../core/errors.js'
import type { LevelBatch, LevelDb } from './level-db.js'
import { assertNonEmptyString } from './keys.js'

export class StateStore {
  private readonly db: LevelDb
  private readonly state

  constructor(db: LevelDb) {
    this.db = db
    this.state = db.sublevel<string, unknown>('state', { keyEncoding: 'utf8', valueEncoding: 'json' })
  }

  async get<T = unknown>(key: string): Promise<T | undefined> {
    assertNonEmptyString('state key', key)
    return (await this.state.get(key)) as T | undefined
  }

  /** Stores a JSON value; `sync` puts it on disk before this returns. */
  async put(key: string, value: unknown, opts: { sync?: boolean } = {}): Promise<void> {
    assertNonEmptyString('state key', key)
    let json: string | undefined
    try {
      json = JSON.stringify(value)
    } catch (err) {
      throw new InvalidArgumentError(`state ${key}: value is not JSON-serialisable (${(err as Error).message})`)
    }
    if (json === undefined) throw new InvalidArgumentError(`state ${key}: value is not JSON-serialisable`)
    const ops: LevelBatch = [{ type: 'put', sublevel: this.state, key, value }]
    await this.db.batch(ops, { sync: opts.sync ?? false })
  }

  async del(key: string): Promise<void> {
    assertNonEmptyString('state key', key)
    const ops: LevelBatch = [{ type: 'del', sublevel: this.state, key }]
    await this.db.batch(ops)
  }
}
