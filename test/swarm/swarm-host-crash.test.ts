// `agency swarm up` restarts an agentd process that crashed: the calc example
// with two processes of two agents, one of them killed with SIGKILL once work
// is under way. Its agents come back on the same data dirs (the same peers),
// and the swarm still finishes with every task done exactly once.
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { swarmDown, swarmUp, type SwarmState } from '../../src/swarm/swarm.js'
import { loadExample } from '../../src/swarm/example-project.js'
import { connectAgency } from '../../src/client/agency.js'
import type { AgencyClient } from '../../src/gen/agency/v1/api.js'
import { assertBuilt } from '../helpers/agent-loop.js'

describe('agency swarm up, a host process killed mid-run', () => {
  it(
    'starts it again on the same data dirs and finishes every task once',
    async () => {
      assertBuilt()
      const taskIds = (await loadExample('calc')).tasks.map(t => t.id).sort()
      const dir = await mkdtemp(join(tmpdir(), 'agency-swarm-crash-'))
      const progress: string[] = []
      let killed: { pid: number; peers: string[] } | undefined
      try {
        const { state, finished } = await swarmUp({
          n: 4,
          perProcess: 2,
          dir,
          example: 'calc',
          harness: 'sim',
          swarm: `swarm-crash-${process.pid}-${Date.now()}`,
          downWhenDone: false,
          timeoutMs: 6 * 60_000,
          progress: line => {
            progress.push(line)
            // Once the first task is done, the second process (agents 3 and 4) dies without a word.
            if (killed == null && /tasks [1-9]\d*\/\d+ done/.test(line)) {
              void readFile(join(dir, 'swarm.json'), 'utf8').then(text => {
                const s = JSON.parse(text) as SwarmState
                const second = s.daemons.filter(d => d.name === 'agent-3' || d.name === 'agent-4')
                killed = { pid: second[0].pid, peers: second.map(d => d.dataDir) }
                process.kill(second[0].pid, 'SIGKILL')
              })
              killed = { pid: 0, peers: [] }
            }
          }
        })
        expect(finished, `the swarm did not finish; last progress:\n${progress.slice(-5).join('\n')}`).toBe(true)
        expect(killed?.pid).toBeGreaterThan(0)
        expect(
          progress.some(l => /the process of agent-3, agent-4 ended \(SIGKILL\); started again/.test(l)),
          progress.join('\n')
        ).toBe(true)
        // Both agents back in a new process, with their data dirs.
        const back = state.daemons.filter(d => d.name === 'agent-3' || d.name === 'agent-4')
        expect(back.map(d => d.dataDir)).toEqual(killed?.peers)
        expect(new Set(back.map(d => d.pid)).size).toBe(1)
        expect(back[0].pid).not.toBe(killed?.pid)
        const api = connectAgency(state.daemons[0].grpc)
        try {
          const tasks = (await api.call((c: AgencyClient) => c.listTasks, { state: '' })).tasks
          expect(tasks.map(t => t.id).sort()).toEqual(taskIds)
          expect(tasks.filter(t => t.state !== 'done').map(t => t.id)).toEqual([])
          const info = await api.call((c: AgencyClient) => c.logInfo, {})
          expect(info.byKind.done).toBe(taskIds.length)
        } finally {
          api.close()
        }
      } finally {
        await swarmDown(dir).catch(() => {})
        await rm(dir, { recursive: true, force: true })
      }
    },
    8 * 60_000
  )
})
