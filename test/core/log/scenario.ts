// Random swarms for the convergence properties: authors who write findings
// and tasks and now and then sync with each other (so lamports interleave),
// and seeded shuffles to deliver their entries in many orders.
import fc from 'fast-check'
import type { Entry } from '../../../src/gen/agency/v1/log.js'
import { LogState } from '../../../src/core/log/log-state.js'
import { FINDING_KINDS } from '../../../src/core/findings/finding-kinds.js'
import type { TestIdentity } from '../../helpers/identity.js'

export const VOCAB = [
  'cache',
  'decoder',
  'leak',
  'yamux',
  'stream',
  'backpressure',
  'gossip',
  'claim',
  'lease',
  'timeout',
  'protobuf',
  'leveldb',
  'compaction',
  'retry',
  'vector',
  'digest',
  'signature',
  'fork'
]
const PATHS = ['src/mesh/sync.ts', 'src/mesh/gossip.ts', 'src/store/log-store.ts', 'src/core/log/entry.ts', 'test/e2e/five.test.ts']
const TAGS = ['perf', 'flaky', 'api', 'security']

const stepArb = fc.record({
  who: fc.nat(4),
  op: fc.constantFrom('finding', 'finding', 'finding', 'task', 'sync'),
  from: fc.nat(4),
  words: fc.array(fc.constantFrom(...VOCAB), { minLength: 1, maxLength: 6 }),
  path: fc.constantFrom(...PATHS),
  tag: fc.constantFrom(...TAGS),
  findingKind: fc.constantFrom(...FINDING_KINDS),
  supersede: fc.boolean()
})

export type Step = typeof stepArb extends fc.Arbitrary<infer T> ? T : never

export const swarmArb = fc.record({
  authors: fc.integer({ min: 3, max: 5 }),
  steps: fc.array(stepArb, { minLength: 4, maxLength: 40 })
})

export type Swarm = typeof swarmArb extends fc.Arbitrary<infer T> ? T : never

/** Plays the swarm's steps; returns every entry written, in writing order. */
export function playSwarm(ids: TestIdentity[], swarm: Swarm): Entry[] {
  const logs = ids.slice(0, swarm.authors).map(() => new LogState())
  const written: Entry[] = []
  swarm.steps.forEach((step, i) => {
    const who = step.who % swarm.authors
    const log = logs[who]
    const signer = ids[who].signer
    // times collide now and then, so that ties in search order must break on id
    const now = 1_700_000_000_000 + Math.floor(i / 4) * 1000
    if (step.op === 'sync') {
      const from = logs[step.from % swarm.authors]
      log.ingestBatch(from.entriesAfter(log.vector()).map(s => s.entry))
    } else if (step.op === 'task') {
      written.push(log.append(signer, 'task', { id: `t${i}`, title: step.words.join(' ') }, now).entry)
    } else {
      const earlier = log
        .ordered()
        .filter(s => s.entry.kind === 'finding')
        .at(-1)
      written.push(
        log.append(
          signer,
          'finding',
          {
            kind: step.findingKind,
            text: step.words.join(' '),
            paths: [step.path],
            tags: [step.tag],
            supersedes: step.supersede && earlier != null ? earlier.id : ''
          },
          now
        ).entry
      )
    }
  })
  return written
}

/** A small seeded PRNG (mulberry32), so that fast-check's seed reproduces a delivery. */
export function rng(seed: number): () => number {
  let t = seed >>> 0
  return () => {
    t = (t + 0x6d2b79f5) >>> 0
    let r = Math.imul(t ^ (t >>> 15), 1 | t)
    r = (r + Math.imul(r ^ (r >>> 7), 61 | r)) ^ r
    return ((r ^ (r >>> 14)) >>> 0) / 4294967296
  }
}

export function shuffle<T>(items: readonly T[], random: () => number): T[] {
  const out = [...items]
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1))
    ;[out[i], out[j]] = [out[j], out[i]]
  }
  return out
}

export const deliveryArb = fc.record({
  seed: fc.integer(),
  dupRate: fc.double({ min: 0, max: 0.5, noNaN: true }),
  lateRate: fc.double({ min: 0, max: 0.4, noNaN: true }),
  batchRate: fc.double({ min: 0, max: 1, noNaN: true })
})

export type Delivery = typeof deliveryArb extends fc.Arbitrary<infer T> ? T : never

/**
 * The order one replica receives entries in: shuffled, some twice, some held
 * back to the end (gaps filled late), cut into chunks that go either through
 * ingestBatch or one by one.
 */
export function deliveryPlan(entries: readonly Entry[], d: Delivery): Array<{ batch: boolean; entries: Entry[] }> {
  const random = rng(d.seed)
  const main: Entry[] = []
  const late: Entry[] = []
  for (const e of shuffle(entries, random)) {
    ;(random() < d.lateRate ? late : main).push(e)
    if (random() < d.dupRate) main.splice(Math.floor(random() * (main.length + 1)), 0, e)
  }
  const order = [...main, ...shuffle(late, random)]
  const chunks: Array<{ batch: boolean; entries: Entry[] }> = []
  for (let i = 0; i < order.length;) {
    const n = 1 + Math.floor(random() * 6)
    chunks.push({ batch: random() < d.batchRate, entries: order.slice(i, i + n) })
    i += n
  }
  return chunks
}
