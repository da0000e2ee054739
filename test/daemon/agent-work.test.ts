// The agent's work through its daemon, with real git: a HELD claim puts the
// workspace on the task branch, integrate and done refuse with the command that
// fixes it, a release pushes the work for whoever takes the task next, the
// inbox keeps the agent's read cursor and carries the daemon's notices, and
// `wait` blocks until there is something to do.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { commitFiles, makeSharedRepo, sh, type SharedRepo } from '../repo/git-fixtures.js'
import { MemoryCluster, addrsOf, rejectionOf } from '../scenarios/board/helpers.js'
import { waitFor } from '../helpers/wait-for.js'
import type { Daemon } from '../../src/daemon/daemon.js'
import { decodeBody } from '../../src/core/log/kinds.js'
import { integrate } from '../../src/repo/integrate.js'
import type { NewTask } from '../../src/core/board/index.js'
import { RECHECK_MS } from '../../src/daemon/work-wait.js'

const cluster = new MemoryCluster()
let repo: SharedRepo
let mirrors: string
let a: Daemon
let b: Daemon

const task = (id: string, deps: string[] = []): NewTask => ({ id, title: id, description: '', deps, scope: [`${id}/**`], priority: 0 })

beforeAll(async () => {
  repo = await makeSharedRepo({ 'README.md': '# shared\n' })
  mirrors = await mkdtemp(join(tmpdir(), 'agency-mirrors-'))
  const options = { settle: { fixedMs: 300 }, repo: { remote: repo.bare, branch: 'main', mirrorDir: mirrors, wipPushMs: 0 } }
  a = await cluster.start({ ...options, name: 'amy' })
  b = await cluster.start({ ...options, name: 'bob', peers: addrsOf(a) })
  await waitFor(() => a.presence.isLive(b.peerId) && b.presence.isLive(a.peerId), { what: 'the two daemons to see each other' })
  // The test command: exit status only (no test output to parse).
  await a.boardService.setGoal({ text: 'say hello', files: [], testCommand: 'test -f hello/hello.txt' })
})

afterAll(async () => {
  await cluster.cleanup()
  await repo?.cleanup()
  await rm(mirrors, { recursive: true, force: true })
})

describe('a held task, from claim to done', () => {
  it('claim puts the workspace on the task branch; done and integrate refuse until the work has landed, naming the fix', async () => {
    await a.addTasks([task('hello')])
    const claim = await a.claimTask('hello', [], false)
    expect(claim.outcome).toBe('HELD')
    expect(claim.taskBranch).toBe(`agency/${a.peerId}/hello`)
    expect(await sh(a.workspacePath(), ['symbolic-ref', '--short', 'HEAD'])).toBe(claim.taskBranch)
    expect(claim.workspace).toContain('commit your work there')

    const early = await rejectionOf(async () => await a.doneTask('hello', '', [], ''))
    expect(early.code).toBe('FAILED_PRECONDITION')
    expect(early.message).toContain('agency integrate --task hello')
    const empty = await rejectionOf(async () => await a.repo().integrate('', ''))
    expect(empty.code).toBe('FAILED_PRECONDITION')
    expect(empty.message).toContain('git add -A && git commit')
    expect(a.boardService.board.task('hello', a.boardService.now())?.state).toBe('claimed')

    await commitFiles(a.workspacePath(), { 'hello/hello.txt': 'hello\n' })
    const merged = await a.repo().integrate('', '')
    expect(merged.result).toBe('merged')
    expect(merged.summary).toContain('agency done hello')
    // No parser read `test -f`'s (empty) output: its exit status decided, and counts as one passing run.
    expect(a.testSummary()).toMatchObject({ passed: 1, failed: 0, total: 1 })
    expect(await sh(repo.bare, ['log', '-1', '--format=%B', 'main'])).toContain('Agency-Task: hello@1')

    const done = await a.doneTask('hello', '', [], '')
    expect(done).toMatchObject({ state: 'done', commit: merged.commit })
    expect(a.goalMet()).toBe(true)
    await waitFor(() => b.goalMet(), { what: 'bob to see the goal met' })
  })

  it('done --no-change is accepted with a reason that goes on the record', async () => {
    await a.addTasks([task('noop')])
    expect((await a.claimTask('noop', [], false)).outcome).toBe('HELD')
    expect(a.goalMet()).toBe(false)
    await a.doneTask('noop', '', [], 'hello/hello.txt already says it')
    const notes = a.logService.findings.search({ query: 'noop', limit: 10 })
    expect(notes.some(h => h.finding.text.includes('noop done without a change: hello/hello.txt already says it'))).toBe(true)
  })
})

describe('a released task carries its work to the next holder', () => {
  it('the release pushes the task branch to refs/agency/wip/<task>; the takeover starts from it', async () => {
    await a.addTasks([task('greet')])
    expect((await a.claimTask('greet', [], false)).outcome).toBe('HELD')
    await commitFiles(a.workspacePath(), { 'greet/half.txt': 'half done\n' })
    const head = await sh(a.workspacePath(), ['rev-parse', 'HEAD'])
    await a.releaseTask('greet', 'half of it: see greet/half.txt', '')
    expect(await sh(repo.bare, ['rev-parse', 'refs/agency/wip/greet'])).toBe(head)

    await waitFor(() => b.boardService.board.task('greet', b.boardService.now())?.state === 'open', { what: 'bob to see the release' })
    const claim = await b.claimTask('greet', [], false)
    expect(claim).toMatchObject({ outcome: 'HELD', epoch: 2, handoff: 'half of it: see greet/half.txt', branch: 'refs/agency/wip/greet' })
    expect(claim.workspace).toContain('previous holder')
    expect(existsSync(join(b.workspacePath(), 'greet/half.txt'))).toBe(true)
  })
})

describe('a fence the board cannot see', () => {
  it("an integration refused by the remote's fence releases the closed claim, and the next claim comes above the fence and lands", async () => {
    // Work for `fenced` landed at epoch 3 under a claim no board counts (as
    // when a faulty author's claims past its fork are void but its work
    // landed): the remote's fence ref names it, the boards do not.
    const ghost = await mkdtemp(join(tmpdir(), 'agency-ghost-'))
    try {
      await sh(ghost, ['clone', '--quiet', repo.bare, '.'])
      await sh(ghost, [
        '-c',
        'user.name=ghost',
        '-c',
        'user.email=ghost@example.invalid',
        'commit',
        '--quiet',
        '--allow-empty',
        '-m',
        'landed under a void claim',
        '-m',
        'Agency-Task: fenced@3\nAgency-Agent: ghost'
      ])
      await sh(ghost, ['push', '--quiet', 'origin', 'HEAD:refs/agency/tasks/fenced'])
    } finally {
      await rm(ghost, { recursive: true, force: true })
    }
    await a.addTasks([task('fenced')])
    expect((await a.claimTask('fenced', [], false)).epoch).toBe(1)
    await commitFiles(a.workspacePath(), { 'fenced/work.txt': 'work\n' })
    const refused = await rejectionOf(async () => await a.repo().integrate('fenced', ''))
    expect(refused.message).toMatch(/fenced is at epoch 3 on the shared remote \(ghost\)/)
    expect(a.boardService.board.task('fenced', a.boardService.now())?.state).toBe('open')

    const again = await a.claimTask('fenced', [], false)
    expect(again).toMatchObject({ outcome: 'HELD', epoch: 4 })
    // The released work comes back with the takeover of its own task branch.
    expect(existsSync(join(a.workspacePath(), 'fenced/work.txt'))).toBe(true)
    const merged = await a.repo().integrate('fenced', '')
    expect(merged.result).toBe('merged')
    expect(await sh(repo.bare, ['log', '-1', '--format=%B', 'main'])).toContain('Agency-Task: fenced@4')
  })
})

describe('the inbox and wait', () => {
  it('keeps a read cursor: unread items once, history with all; a review asked of you arrives as a notice', async () => {
    const before = a.inbox.unread()
    await a.readAgentInbox({}) // everything so far is read
    expect(a.inbox.unread()).toBe(0)
    expect(before).toBeGreaterThanOrEqual(0)
    await b.boardService.requestReview('hello', ['amy'], 'check the greeting')
    await waitFor(() => a.inbox.unread() === 1, { what: 'the review notice' })
    const unread = await a.readAgentInbox({})
    expect(unread).toHaveLength(1)
    expect(unread[0]).toMatchObject({ kind: 'review_requested' })
    expect(unread[0].record.message.text).toContain('check the greeting')
    expect(await a.readAgentInbox({})).toEqual([])
    const history = await a.readAgentInbox({ all: true })
    expect(history.map(i => i.record.cursor)).toContain(unread[0].record.cursor)
    expect(a.inbox.unread()).toBe(0)
  })

  it('wait blocks while nothing is ready and answers when a task appears', async () => {
    await b.readAgentInbox({})
    await b.releaseTask('greet', 'bob stops here', '')
    await waitFor(() => a.boardService.board.task('greet', a.boardService.now())?.state === 'open', { what: 'amy to see greet released' })
    expect((await a.claimTask('greet', [], false)).outcome).toBe('HELD')
    await waitFor(() => b.boardService.board.task('greet', b.boardService.now())?.holder === a.peerId, {
      what: 'bob to see amy holding greet'
    })
    await b.readAgentInbox({})
    let answered = false
    const waiting = b.waitForWork(60_000).then(r => {
      answered = true
      return r
    })
    // A second wait bounded by the recheck period times out only after the
    // first wait has looked again at least once (its tick was set first).
    expect((await b.waitForWork(RECHECK_MS)).reason).toBe('timeout')
    expect(answered).toBe(false)
    await a.addTasks([task('farewell', ['hello'])])
    const r = await waiting
    expect(r.reason).toBe('ready')
    expect(r.ready.map(t => t.id)).toEqual(['farewell'])
  })
})

describe('a push that landed without its integration entry (the daemon died between the two)', () => {
  const integrationsOf = (t: string): unknown[] =>
    a.logService.state
      .ordered()
      .filter(e => e.entry.kind === 'integration')
      .map(e => decodeBody('integration', e.entry.body))
      .filter(i => i.task === t)

  /** What the crash leaves: the merge and the task's fence on the remote (pushed by the repo layer), no entry on the log. */
  async function landWithoutEntry(t: string): Promise<{ epoch: number; commit: string }> {
    await a.addTasks([task(t)])
    const claim = await a.claimTask(t, [], false)
    expect(claim.outcome).toBe('HELD')
    await commitFiles(a.workspacePath(), { [`${t}/work.txt`]: 'work\n' })
    const r = await integrate({
      workspace: a.repo().workspace,
      task: t,
      epoch: claim.epoch,
      agentId: a.peerId,
      verify: 'true',
      checkFence: async () => {}
    })
    if (r.result !== 'merged') throw new Error(`the landing did not land: ${JSON.stringify(r)}`)
    expect(integrationsOf(t)).toEqual([])
    return { epoch: claim.epoch, commit: r.commit }
  }

  /** A fence made by hand: a merge on main whose trailers name `agent` at `epoch` for `t`. */
  async function forgeFence(t: string, epoch: number, agent: string): Promise<void> {
    const forger = await mkdtemp(join(tmpdir(), 'agency-forger-'))
    try {
      await sh(forger, ['clone', '--quiet', repo.bare, '.'])
      await sh(forger, [
        '-c',
        'user.name=forger',
        '-c',
        'user.email=forger@example.invalid',
        'commit',
        '--quiet',
        '--allow-empty',
        '-m',
        `landed ${t}`,
        '-m',
        `Agency-Task: ${t}@${epoch}\nAgency-Agent: ${agent}`
      ])
      await sh(forger, ['push', '--quiet', '--atomic', 'origin', 'HEAD:refs/heads/main', `HEAD:refs/agency/tasks/${t}`])
    } finally {
      await rm(forger, { recursive: true, force: true })
    }
  }

  it('the retried integrate records the landing once and says it was recovered; done then succeeds', async () => {
    const landed = await landWithoutEntry('crashed')
    const tip = await repo.tip()
    const [first, second] = await Promise.all([a.repo().integrate('crashed', ''), a.repo().integrate('crashed', '')])
    for (const r of [first, second]) expect(r).toMatchObject({ result: 'merged', commit: landed.commit, epoch: landed.epoch })
    expect([first.summary, second.summary].some(s => s.includes('recovered'))).toBe(true)
    expect(integrationsOf('crashed')).toEqual([
      expect.objectContaining({ epoch: landed.epoch, commit: landed.commit, result: 'merged', paths: ['crashed/work.txt'], request: '' })
    ])
    expect(await repo.tip()).toBe(tip)

    expect(await a.doneTask('crashed', '', [], '')).toMatchObject({ state: 'done', commit: landed.commit })
    expect(integrationsOf('crashed')).toHaveLength(1)
  })

  it('done alone records the landing the fence proves, and is accepted', async () => {
    const landed = await landWithoutEntry('crashed-done')
    expect(await a.doneTask('crashed-done', '', [], '')).toMatchObject({ state: 'done', commit: landed.commit })
    expect(integrationsOf('crashed-done')).toEqual([
      expect.objectContaining({ epoch: landed.epoch, commit: landed.commit, result: 'merged' })
    ])
  })

  it('a fence naming another agent, or this agent at another epoch, records nothing: done is still refused', async () => {
    await forgeFence('not-mine', 1, b.peerId)
    await forgeFence('not-now', 7, a.peerId)
    await a.addTasks([task('not-mine'), task('not-now')])
    for (const t of ['not-mine', 'not-now']) {
      expect(await a.claimTask(t, [], false)).toMatchObject({ outcome: 'HELD', epoch: 1 })
      const refused = await rejectionOf(async () => await a.doneTask(t, '', [], ''))
      expect(refused.code).toBe('FAILED_PRECONDITION')
      expect(refused.message).toContain(`agency integrate --task ${t}`)
      expect(integrationsOf(t)).toEqual([])
      expect(a.boardService.board.task(t, a.boardService.now())?.state).toBe('claimed')
    }
  })
})
