import { describe, expect, it } from 'vitest'
import { SimNetwork } from '../../../src/sim/engine/network.js'
import { createRandom } from '../../../src/sim/engine/random.js'

function trace(seed: number, loss = 0): string[] {
  const net = new SimNetwork<string>({ rng: createRandom(seed), loss })
  const log: string[] = []
  for (const id of ['a', 'b', 'c'])
    net.register(id, (msg, from, sentAt) => log.push(`${net.now.toFixed(3)} ${from}->${id} ${msg} sent ${sentAt}`))
  net.broadcast('a', 'hello')
  net.schedule(10, () => net.broadcast('b', 'later'))
  net.run()
  return log
}

describe('simulated network', () => {
  it('a seed replays the same run; another seed gives another', () => {
    expect(trace(1)).toEqual(trace(1))
    expect(trace(1)).not.toEqual(trace(2))
    expect(trace(1)).toHaveLength(4)
  })

  it('delivers in time order, after a latency within the configured bounds', () => {
    const net = new SimNetwork<number>({ rng: createRandom(3), minLatencyMs: 10, maxLatencyMs: 20, jitterMs: 0 })
    const seen: Array<[number, number]> = []
    net.register('a', () => {})
    net.register('b', (msg, _from, sentAt) => seen.push([msg, net.now - sentAt]))
    for (let i = 0; i < 50; i++) net.send('a', 'b', i)
    net.run()
    expect(seen.map(([m]) => m)).toEqual([...Array(50).keys()]) // one link, one base latency: FIFO
    for (const [, latency] of seen) expect(latency >= 10 && latency < 20).toBe(true)
  })

  it('loses messages at the configured rate, cuts partitions and down nodes', () => {
    const net = new SimNetwork<number>({ rng: createRandom(4), loss: 0.5 })
    let got = 0
    net.register('a', () => {})
    net.register('b', () => {
      got++
    })
    for (let i = 0; i < 1000; i++) net.send('a', 'b', i)
    net.run()
    expect(got).toBeGreaterThan(400)
    expect(got).toBeLessThan(600)

    const clean = new SimNetwork<number>({ rng: createRandom(5) })
    const at: string[] = []
    for (const id of ['a', 'b', 'c']) clean.register(id, (_m, from) => at.push(`${from}->${id}`))
    clean.partition([['a', 'b'], ['c']])
    clean.broadcast('a', 1)
    clean.run()
    expect(at).toEqual(['a->b'])
    clean.heal()
    clean.setDown('b', true)
    clean.broadcast('a', 2)
    clean.run()
    expect(at).toEqual(['a->b', 'a->c'])
    // a message in flight when the partition starts is cut too
    clean.setDown('b', false)
    clean.send('a', 'b', 3)
    clean.partition([['a'], ['b', 'c']])
    clean.run()
    expect(at).toEqual(['a->b', 'a->c'])
    expect(clean.stats.cut).toBeGreaterThan(0)
  })
})
