// The swarm the assist tests run: in-process daemons on the memory transport
// sharing a real git repository, with assists open at once (no floor); the
// first daemon holds `core`, which `api` and `ui` wait on.
import { EventEmitter } from 'node:events'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect } from 'vitest'
import { makeSharedRepo, type SharedRepo } from '../../repo/git-fixtures.js'
import { MemoryCluster, addrsOf, type MemoryDaemonOptions } from './helpers.js'
import { waitFor } from '../../helpers/wait-for.js'
import type { Daemon, DaemonParts } from '../../../src/daemon/daemon.js'
import { repoHandlers } from '../../../src/api/repo-handlers.js'
import type { IntegrateReply, IntegrateRequest } from '../../../src/gen/agency/v1/api.js'

export interface AssistSwarm {
  repo: SharedRepo
  /** in the order named; the first holds core */
  daemons: Daemon[]
  /** what started them: restart one with cluster.restart */
  cluster: MemoryCluster
  cleanup: () => Promise<void>
}

/** `extra`: options over the swarm's for every daemon, and parts per daemon by name (a clock of its own). */
export async function startAssistSwarm(
  names: string[],
  testCommand: string,
  extra: { options?: MemoryDaemonOptions; parts?: (name: string) => DaemonParts } = {}
): Promise<AssistSwarm> {
  const cluster = new MemoryCluster()
  const repo = await makeSharedRepo({ 'README.md': '# shared\n' })
  const mirrors = await mkdtemp(join(tmpdir(), 'agency-mirrors-'))
  const cleanup = async (): Promise<void> => {
    await cluster.cleanup()
    await repo.cleanup()
    await rm(mirrors, { recursive: true, force: true })
  }
  const options = {
    settle: { fixedMs: 300 },
    assist: { budget: 2, floorMs: 0 },
    repo: { remote: repo.bare, branch: 'main', mirrorDir: mirrors, wipPushMs: 0 },
    ...extra.options
  }
  const daemons: Daemon[] = []
  for (const name of names)
    daemons.push(
      await cluster.start({ ...options, name, ...(daemons.length > 0 ? { peers: addrsOf(daemons[0]) } : {}) }, extra.parts?.(name))
    )
  const holder = daemons[0]
  await waitFor(() => daemons.every(d => daemons.every(o => o === d || d.presence.isLive(o.peerId))), {
    what: `the ${names.length} daemons to see each other`,
    timeoutMs: 60_000
  })
  await holder.boardService.setGoal({ text: 'say hello', files: [], testCommand })
  await holder.addTasks(
    ['core', 'api', 'ui'].map((id, i, ids) => ({
      id,
      title: id,
      description: '',
      deps: i === 0 ? [] : [ids[i - 1]],
      scope: [`${id}/**`],
      priority: 0
    }))
  )
  expect((await holder.claimTask('core', [], false)).outcome).toBe('HELD')
  await waitFor(() => daemons.every(d => d.boardService.board.task('core', d.boardService.now())?.state === 'claimed'), {
    what: 'everyone to see core held'
  })
  return { repo, daemons, cluster, cleanup }
}

/** The texts of a daemon's inbox notices of one kind, read or not. */
export async function notices(d: Daemon, kind: string): Promise<string[]> {
  return (await d.readAgentInbox({ all: true, limit: 1000 })).filter(i => i.kind === kind).map(i => i.record.message.text)
}

/** The gRPC integrate handler's answer to `request` (what agency integrate and the MCP tool call). */
export async function integrateCall(d: Daemon, request: IntegrateRequest): Promise<IntegrateReply> {
  const call = Object.assign(new EventEmitter(), { request })
  return await new Promise((resolve, reject) => {
    repoHandlers(d).integrate(call as never, (err, reply) => {
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- a gRPC ServiceError is an Error
      if (err != null) reject(err)
      else resolve(reply as IntegrateReply)
    })
  })
}
