// The peer guard's membership: the static --allow-peers and the operator's
// allow-list add up; a member the operator removed is refused whatever
// either says; without any list every peer is admitted.
import { describe, expect, it } from 'vitest'
import { PeerGuard } from '../../src/mesh/peer-guard.js'

describe("the peer guard's membership", () => {
  it('admits anyone without a list, and refuses a removed member', () => {
    const g = new PeerGuard()
    expect(g.admits('a')).toBe(true)
    g.setMembership({ allowed: [], removed: ['a'] })
    expect(g.admits('a')).toBe(false)
    expect(g.admits('b')).toBe(true)
  })

  it('admits a peer on either list, and no other; removal wins over both', () => {
    const g = new PeerGuard({ allowPeers: ['static'] })
    expect([g.admits('static'), g.admits('new')]).toEqual([true, false])
    g.setMembership({ allowed: ['new'], removed: [] })
    expect([g.admits('static'), g.admits('new'), g.admits('other')]).toEqual([true, true, false])
    g.setMembership({ allowed: ['new'], removed: ['static', 'new'] })
    expect([g.admits('static'), g.admits('new')]).toEqual([false, false])
  })

  it("with the operator's list alone, admits only the peers on it", () => {
    const g = new PeerGuard()
    g.setMembership({ allowed: ['x'], removed: [] })
    expect([g.admits('x'), g.admits('y')]).toEqual([true, false])
  })
})
