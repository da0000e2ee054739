// Whether an integrator serves the swarm (core/board/integrator-serving.ts):
// an agent that answered another agent's integration request within the
// window, while it is live. An agent answering its own request does not count.
import { describe, expect, it } from 'vitest'
import { IntegratorSightings } from '../../../src/core/board/integrator-serving.js'

const everyoneLive = (): boolean => true
const WINDOW = 60_000

describe('an integrator serving the swarm', () => {
  it('is nobody before any answer is seen', () => {
    expect(new IntegratorSightings().serving(0, WINDOW, everyoneLive)).toEqual([])
  })

  it("is an agent that answered another agent's request, until the window has passed since", () => {
    const s = new IntegratorSightings()
    s.saw('ivy', 'amy', 1_000)
    expect(s.serving(1_000, WINDOW, everyoneLive)).toEqual(['ivy'])
    expect(s.serving(1_000 + WINDOW, WINDOW, everyoneLive)).toEqual(['ivy'])
    expect(s.serving(1_001 + WINDOW, WINDOW, everyoneLive)).toEqual([])
    // a later answer starts the window again; an older one seen late does not shorten it
    s.saw('ivy', 'bob', 50_000)
    s.saw('ivy', 'cat', 10_000)
    expect(s.serving(50_000 + WINDOW, WINDOW, everyoneLive)).toEqual(['ivy'])
  })

  it('is not an agent that answered only its own requests (a background integrate with no integrator)', () => {
    const s = new IntegratorSightings()
    s.saw('amy', 'amy', 1_000)
    expect(s.serving(1_000, WINDOW, everyoneLive)).toEqual([])
    s.saw('', 'amy', 1_000)
    s.saw('amy', '', 1_000)
    expect(s.serving(1_000, WINDOW, everyoneLive)).toEqual([])
  })

  it('is not an agent that is no longer live', () => {
    const s = new IntegratorSightings()
    s.saw('ivy', 'amy', 1_000)
    s.saw('joe', 'amy', 2_000)
    expect(s.serving(3_000, WINDOW, p => p !== 'joe')).toEqual(['ivy'])
    expect(s.serving(3_000, WINDOW, () => false)).toEqual([])
  })

  it('names the most recently seen first', () => {
    const s = new IntegratorSightings()
    s.saw('ivy', 'amy', 1_000)
    s.saw('joe', 'amy', 2_000)
    expect(s.serving(3_000, WINDOW, everyoneLive)).toEqual(['joe', 'ivy'])
    s.saw('ivy', 'bob', 2_500)
    expect(s.serving(3_000, WINDOW, everyoneLive)).toEqual(['ivy', 'joe'])
  })
})
