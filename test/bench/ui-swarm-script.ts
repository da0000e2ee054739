// A swarm's work as a stream of log entries for the dashboard benchmarks:
// agents claim open tasks, record findings (a third of them failures),
// release, integrate (merged, conflict, failed) with a test run on each
// merge, the pass rate climbing. Deterministic for a seed. The entries are
// real (signed by each agent's own key when appended); only the agents'
// decisions are scripted.
import { generateKeyPair } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { randomUUID } from 'node:crypto'
import { createSigner, type Signer } from '../../src/core/log/crypto.js'
import type { EntryKind } from '../../src/core/log/kinds.js'

export interface ScriptAgent {
  id: string
  name: string
  signer: Signer
}
export interface ScriptStep {
  agent: ScriptAgent
  kind: EntryKind
  body: Record<string, unknown>
}

const WORDS = [
  'parser',
  'lexer',
  'tokens',
  'precedence',
  'overflow',
  'unicode',
  'whitespace',
  'nested',
  'parentheses',
  'rounding',
  'cache',
  'race',
  'timeout',
  'flaky',
  'regex',
  'stack',
  'recursion',
  'format',
  'locale',
  'division'
]
const KINDS = ['failure', 'discovery', 'bug', 'decision', 'note']

export function seeded(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

export async function scriptAgents(n: number, firstNumber = 1): Promise<ScriptAgent[]> {
  return await Promise.all(
    Array.from({ length: n }, async (_, i) => {
      const key = await generateKeyPair('Ed25519')
      const id = peerIdFromPrivateKey(key).toString()
      return { id, name: `agent-${firstNumber + i}`, signer: createSigner(id, key.raw) }
    })
  )
}

export class SwarmScript {
  private readonly agents: ScriptAgent[]
  private readonly r: () => number
  private readonly holder = new Map<string, { agent: ScriptAgent; epoch: number }>()
  private readonly epochs = new Map<string, number>()
  private passed = 0
  readonly tasks: string[]
  readonly testTotal = 500

  constructor(agents: ScriptAgent[], taskCount: number, seed: number) {
    this.agents = agents
    this.r = seeded(seed)
    this.tasks = Array.from({ length: taskCount }, (_, i) => `t${i}`)
  }

  private pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.r() * xs.length)]
  }

  /** The goal and the tasks, for the history's start. */
  setup(): ScriptStep[] {
    const steps: ScriptStep[] = [
      {
        agent: this.agents[0],
        kind: 'goal',
        body: { text: 'build the compiler: every test in tests/ passing', files: [], testCommand: 'npm test' }
      }
    ]
    this.tasks.forEach((id, i) => {
      const deps = i > 10 && this.r() < 0.5 ? [`t${Math.floor(this.r() * i)}`] : []
      const area = this.pick(WORDS)
      steps.push({
        agent: this.pick(this.agents),
        kind: 'task',
        body: { id, title: `${area} task ${i}`, description: '', deps, scope: [`src/${area}/**`], priority: Math.floor(this.r() * 3) }
      })
    })
    return steps
  }

  /** The tasks an agent holds now, for its heartbeat. */
  heldBy(agent: ScriptAgent): Array<{ task: string; epoch: number }> {
    return [...this.holder].filter(([, h]) => h.agent === agent).map(([task, h]) => ({ task, epoch: h.epoch }))
  }

  /** The next thing some agent does: one entry, or two (a merge and its test run). */
  next(): ScriptStep[] {
    const roll = this.r()
    const task = this.pick(this.tasks)
    const h = this.holder.get(task)
    if (roll < 0.2 && h == null) {
      const agent = this.pick(this.agents)
      const epoch = (this.epochs.get(task) ?? 0) + 1
      this.epochs.set(task, epoch)
      this.holder.set(task, { agent, epoch })
      return [{ agent, kind: 'claim', body: { task, scope: [], epoch, takeoverOf: '', branch: '', handoff: '' } }]
    }
    if (roll < 0.25 && h != null) {
      this.holder.delete(task)
      return [{ agent: h.agent, kind: 'release', body: { task, epoch: h.epoch, note: 'handing over', branch: '' } }]
    }
    if (roll < 0.3 && h != null) {
      const commit = randomUUID().replace(/-/g, '').padEnd(40, '0')
      const result = this.r() < 0.8 ? 'merged' : this.r() < 0.5 ? 'conflict' : 'failed'
      const steps: ScriptStep[] = [
        {
          agent: h.agent,
          kind: 'integration',
          body: { task, epoch: h.epoch, commit: result === 'merged' ? commit : '', result, paths: [], request: '' }
        }
      ]
      if (result === 'merged') {
        this.passed = Math.min(this.testTotal, this.passed + 1 + Math.floor(this.r() * 2))
        steps.push({
          agent: h.agent,
          kind: 'test_run',
          body: {
            commit,
            branch: 'main',
            passed: this.passed,
            failed: this.testTotal - this.passed,
            total: this.testTotal,
            durationMs: 1000,
            summary: ''
          }
        })
      }
      return steps
    }
    const a = this.pick(WORDS)
    const b = this.pick(WORDS)
    return [
      {
        agent: this.pick(this.agents),
        kind: 'finding',
        body: {
          kind: this.r() < 0.3 ? 'failure' : this.pick(KINDS),
          text: `approach ${Math.floor(this.r() * 1000)} for the ${a} breaks on ${b} input; ${this.pick(WORDS)} ${this.pick(WORDS)} ${this.pick(WORDS)}`,
          paths: [`src/${a}/${b}.ts`],
          tags: [a],
          refs: [],
          supersedes: ''
        }
      }
    ]
  }
}
