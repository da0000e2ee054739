// `agency status` and the MCP status tool fit a context window: the agent's
// own tasks and unread count first, one line per task in play and per peer,
// the rest summarised.
import { describe, expect, it } from 'vitest'
import { digestLines, statusDigest } from '../../src/api/status-digest.js'
import { StatusReply, TaskView, PeerInfo } from '../../src/gen/agency/v1/api.js'

function bigSwarm(tasks: number, peers: number): StatusReply {
  const peerIds = Array.from({ length: peers }, (_, i) => `12D3KooWpeer${String(i).padStart(40, '0')}`)
  const ts = Array.from({ length: tasks }, (_, i) =>
    TaskView.fromPartial({
      id: `task-${i}`,
      title: `a task title that is not short at all, number ${i}`,
      description: 'a long description '.repeat(40),
      state: i % 4 === 0 ? 'done' : i % 4 === 1 ? 'claimed' : 'open',
      holder: i % 4 === 1 ? peerIds[i % peers] : '',
      epoch: i % 4 === 1 ? 1 : 0,
      deps: i > 10 ? [`task-${i - 10}`] : [],
      scope: [`src/area-${i}/**`]
    })
  )
  return StatusReply.fromPartial({
    self: PeerInfo.fromPartial({ peerId: '12D3KooWme', name: 'agent-1', status: 'planning' }),
    goal: { text: 'build the whole thing '.repeat(100), testCommand: 'npm test' },
    tasks: ts,
    tasksByState: { done: 50, claimed: 50, open: 100 },
    livePeers: peerIds.map((id, i) =>
      PeerInfo.fromPartial({
        peerId: id,
        name: `agent-${i + 2}`,
        status: `working on task-${i * 4 + 1} and thinking hard about it`,
        claims: [{ task: `task-${i * 4 + 1}`, epoch: 1 }]
      })
    ),
    peersLive: peers,
    held: [ts[1]],
    unread: 3
  })
}

describe('the status digest', () => {
  it('keeps 200 tasks and 64 peers under about 4 KiB, leading with the agent itself', () => {
    const lines = digestLines(statusDigest(bigSwarm(200, 64)))
    expect(lines[0]).toMatch(/^you: agent-1 .* hold task-1@1; 3 unread/)
    const text = lines.join('\n')
    expect(Buffer.byteLength(text)).toBeLessThan(4200)
    expect(text).toContain('more not shown')
    expect(text).toContain('more: agency peers')
    expect(text).not.toContain('a long description')
  })

  it('names holders by name and shows what can be claimed', () => {
    const d = statusDigest(bigSwarm(8, 2))
    expect(d.tasks.inPlay.map(t => `${t.id}:${t.holder}`)).toEqual(['task-1:agent-3', 'task-5:agent-3'])
    expect(d.tasks.ready).toEqual(['task-2', 'task-3', 'task-6', 'task-7'])
    expect(d.you).toMatchObject({ name: 'agent-1', unread: 3, status: 'planning' })
  })

  it('says whether a review is worth asking, as the daemon judged it', () => {
    const busy = digestLines(statusDigest({ ...bigSwarm(8, 2), agentsFree: 1, reviewersFree: false }))
    expect(busy).toContain("reviews: not now: 4 ready for 1 agent(s) with no task at work, so a review would cost a task's time")
    const idle = digestLines(statusDigest({ ...bigSwarm(8, 2), agentsFree: 6, reviewersFree: true }))
    expect(idle).toContain('reviews: worth asking: 6 agent(s) with no task at work, 4 ready')
  })
})
