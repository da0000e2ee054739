// When did this daemon last see the whole swarm, and what had been spent then.
// Fed by the daemon on each check with the members it knows and the ones it
// hears now; while some member is silent, the budget check limits this agent
// to its share (budget-check.ts). No clock: the caller decides who is a member
// (heard from within its member window) and who is live.
import { copyTotals, zeroTotals, type SpendTotals } from './spend-totals.js'
import type { SpendShare } from './budget-check.js'

export class SwarmWholeness {
  private totalAtWhole: SpendTotals = zeroTotals()
  private ownAtWhole: SpendTotals = zeroTotals()
  private members = 1
  private whole = true

  /**
   * Notes what this daemon sees now. `members`: agents of the swarm (this one
   * included); `live`: those heard from now. Returns the share to hold to, or
   * undefined while the swarm is whole.
   */
  observe(members: ReadonlySet<string>, live: ReadonlySet<string>, total: SpendTotals, own: SpendTotals): SpendShare | undefined {
    let all = true
    for (const m of members)
      if (!live.has(m)) {
        all = false
        break
      }
    if (all) {
      this.whole = true
      this.totalAtWhole = copyTotals(total)
      this.ownAtWhole = copyTotals(own)
      this.members = Math.max(1, members.size)
      return undefined
    }
    this.whole = false
    return {
      totalAtWhole: copyTotals(this.totalAtWhole),
      ownAtWhole: copyTotals(this.ownAtWhole),
      members: Math.max(this.members, members.size)
    }
  }

  get isWhole(): boolean {
    return this.whole
  }
}
