#!/usr/bin/env node
// The scripted agent (`agentd --harness scripted`, or `sim`): follows the loop of the shared
// prompt through the daemon's gRPC API, with no model and no shortcut into the
// daemon: status -> pick a ready task and claim it -> search the findings ->
// write the task's code from its recipe, avoiding approaches peers recorded as
// failed -> run the tests -> integrate -> mark done -> record what happened.
// Holding `plan` (a goal with an empty board), it adds the recipe's tasks.
import '../../polyfill.js'
import { execFile } from 'node:child_process'
import { chmod, mkdir, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { promisify } from 'node:util'
import { connectAgency, type Agency } from '../../client/agency.js'
import { ClaimOutcome, type AgencyClient, type TaskView } from '../../gen/agency/v1/api.js'
import { attemptMs, loadRecipes, type Recipes } from './recipes.js'

const run = promisify(execFile)
const agentId = process.env.AGENCY_AGENT_ID ?? 'sim'
const say = (text: string): void => {
  process.stdout.write(`[sim ${agentId.slice(-6)} ${new Date().toISOString().slice(11, 23)}] ${text}\n`)
}
const sleep = async (ms: number): Promise<void> => {
  await new Promise(resolve => setTimeout(resolve, ms))
}

async function git(cwd: string, args: string[]): Promise<string> {
  return (await run('git', args, { cwd })).stdout.trim()
}

async function runTests(cwd: string, command: string): Promise<{ ok: boolean; output: string }> {
  try {
    const r = await run('/bin/sh', ['-c', command], { cwd, timeout: 5 * 60_000 })
    return { ok: true, output: r.stdout }
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string }
    return { ok: false, output: `${e.stdout ?? ''}${e.stderr ?? ''}` }
  }
}

function failureSummary(output: string): string {
  return output
    .split('\n')
    .filter(l => l.startsWith('not ok') || l.trim().startsWith('#'))
    .slice(0, 6)
    .join(' | ')
    .slice(0, 500)
}

/** Approaches recorded as failed by anyone, for this task or in general. */
async function failedApproaches(agency: Agency, task: string): Promise<Set<string>> {
  const { hits } = await agency.call((c: AgencyClient) => c.searchFindings, {
    query: '',
    kind: 'failure',
    pathPrefix: '',
    tag: '',
    author: '',
    since: 0,
    until: 0,
    limit: 1000
  })
  const failed = new Set<string>()
  for (const h of hits) {
    const tags = h.finding?.tags ?? []
    const approach = tags.find(t => t.startsWith('approach:'))?.slice('approach:'.length)
    if (approach != null && (tags.includes(`task:${task}`) || tags.includes('general'))) failed.add(approach)
  }
  return failed
}

/**
 * Holding `plan`: put the project's tasks on the board as one plan (tasks a
 * peer already added are kept), then mark the plan done, as the prompt says.
 */
async function plan(agency: Agency, recipes: Recipes): Promise<'done' | 'gave-up'> {
  if (recipes.plan.length === 0) {
    await agency.call((c: AgencyClient) => c.release, { task: 'plan', note: 'the scripted agent has no plan for this goal', branch: '' })
    return 'gave-up'
  }
  const tasks = recipes.plan.map(t => ({
    id: t.id,
    title: t.title ?? t.id,
    description: t.description ?? `Write ${t.file ?? t.id}; tests/${t.id}.test.mjs must pass.`,
    deps: t.deps ?? [],
    scope: t.scope ?? (t.file != null ? [t.file] : []),
    priority: t.priority ?? 0
  }))
  await agency.call((c: AgencyClient) => c.addTasks, { tasks })
  await agency.call((c: AgencyClient) => c.done, { task: 'plan', commit: '', paths: [], noChange: '' })
  say(`plan: added ${tasks.length} tasks and marked the plan done`)
  return 'done'
}

async function work(agency: Agency, recipes: Recipes, task: TaskView, testCommand: string): Promise<'done' | 'gave-up'> {
  if (task.id === 'plan') return await plan(agency, recipes)
  const recipe = recipes.tasks.get(task.id)
  if (recipe == null) {
    await agency.call((c: AgencyClient) => c.release, { task: task.id, note: 'the scripted agent has no recipe for this task', branch: '' })
    return 'gave-up'
  }
  const ws = await agency.call((c: AgencyClient) => c.getWorkspace, { task: task.id }, 5 * 60_000)
  await agency.call((c: AgencyClient) => c.setStatusLine, { status: `working on ${task.id}` })
  let avoid = await failedApproaches(agency, task.id)
  // When every approach is recorded as failed the records may be stale (a
  // dependency was missing then): try them all again rather than give up.
  if (recipe.approaches.every(a => avoid.has(a))) avoid = new Set()
  for (const approach of recipe.approaches) {
    if (avoid.has(approach)) {
      say(`${task.id}: skipping approach ${approach}, a peer recorded it as failed`)
      continue
    }
    say(`${task.id}: trying ${approach}`)
    await sleep(attemptMs(recipe, recipes.workScale)) // the "work time" of an attempt
    const files = await recipes.files(task.id, approach)
    for (const f of files) {
      const target = join(ws.path, f.path)
      await mkdir(dirname(target), { recursive: true })
      await writeFile(target, f.content)
      await chmod(target, f.mode)
    }
    const paths = files.map(f => f.path)
    await git(ws.path, ['add', '--', ...paths])
    // A retried task's branch may already hold exactly these files: then there is nothing new to commit.
    if ((await git(ws.path, ['status', '--porcelain', '--', ...paths])) !== '') {
      await git(ws.path, ['commit', '-q', '-m', `${task.id}: ${approach}`])
    }
    const local = await runTests(ws.path, testCommand)
    if (!local.ok) {
      const summary = failureSummary(local.output)
      say(`${task.id}: ${approach} fails the tests; recording it`)
      await agency.call((c: AgencyClient) => c.recordFinding, {
        kind: 'failure',
        text: `approach "${approach}" for ${paths.join(', ')} fails the tests: ${summary}`,
        paths,
        tags: [`task:${task.id}`, `approach:${approach}`, 'general'],
        refs: [],
        supersedes: ''
      })
      continue
    }
    const result = await agency.call(
      (c: AgencyClient) => c.integrate,
      { task: task.id, message: `${task.id}: ${approach}`, background: false },
      30 * 60_000
    )
    if (result.result === 'merged') {
      await agency.call((c: AgencyClient) => c.done, { task: task.id, commit: result.commit, paths, noChange: '' })
      await agency.call((c: AgencyClient) => c.recordFinding, {
        kind: 'discovery',
        text: `${task.id} done with approach "${approach}" in ${paths.join(', ')}`,
        paths,
        tags: [`task:${task.id}`, `approach:${approach}`],
        refs: [],
        supersedes: ''
      })
      say(`${task.id}: merged ${result.commit.slice(0, 10)} and done`)
      return 'done'
    }
    say(`${task.id}: integrate said ${result.result}: ${result.summary.slice(0, 200)}`)
    if (result.result === 'failed') continue
    // Conflict or contention: give the task back with notes and let the loop pick again.
    await agency.call((c: AgencyClient) => c.release, {
      task: task.id,
      note: `integrate ${result.result}: ${result.summary.slice(0, 500)}`,
      branch: ws.taskBranch
    })
    return 'gave-up'
  }
  await agency.call((c: AgencyClient) => c.release, {
    task: task.id,
    note: 'every approach I know fails; see the failure findings',
    branch: ws.taskBranch
  })
  return 'gave-up'
}

async function main(): Promise<void> {
  const agency = connectAgency()
  try {
    const ws = await agency.call((c: AgencyClient) => c.getWorkspace, { task: '' })
    const recipes = await loadRecipes(ws.path)
    let idle = 0
    while (true) {
      const status = await agency.call((c: AgencyClient) => c.getStatus, {})
      const goal = status.goal
      const tasks = status.tasks
      if (goal == null || goal.testCommand === '' || tasks.length === 0) {
        await sleep(500)
        continue
      }
      if (status.goalMet) {
        say('the goal is met; stopping')
        return
      }
      // After a restart: carry on with a task this agent still holds; its claim keeps everyone else off it.
      const held = tasks.find(t => t.state === 'claimed' && t.holder === status.self?.peerId)
      if (held != null) {
        say(`${held.id}: resuming, I still hold it`)
        await work(agency, recipes, held, goal.testCommand)
        await agency.call((c: AgencyClient) => c.setStatusLine, { status: 'looking for a task' })
        continue
      }
      const { tasks: ready } = await agency.call((c: AgencyClient) => c.ready, {})
      if (ready.length === 0) {
        if (++idle % 20 === 0) say('nothing ready; waiting for peers')
        await sleep(300 + Math.random() * 300)
        continue
      }
      idle = 0
      // Spread the swarm: a random pick among the highest-priority few.
      const top = ready.slice(0, Math.min(ready.length, 3))
      const pick = top[Math.floor(Math.random() * top.length)]
      const claim = await agency
        .call((c: AgencyClient) => c.claim, { task: pick.id, scope: [], noWait: false }, 60_000)
        .catch(err => {
          say(`claim ${pick.id}: ${(err as Error).message}`)
          return undefined
        })
      if (claim == null || claim.outcome !== ClaimOutcome.CLAIM_HELD) {
        if (claim != null) say(`${pick.id}: lost the claim to ${claim.winner.slice(-6)}`)
        continue
      }
      say(
        `${pick.id}: HELD at epoch ${claim.epoch}${claim.overlaps.length > 0 ? `; overlaps with ${claim.overlaps.map(p => p.slice(-6)).join(', ')}` : ''}`
      )
      await work(agency, recipes, pick, goal.testCommand)
      await agency.call((c: AgencyClient) => c.setStatusLine, { status: 'looking for a task' })
    }
  } finally {
    agency.close()
  }
}

main().catch(err => {
  process.stderr.write(`[sim ${agentId.slice(-6)}] failed: ${(err as Error).message}\n`)
  process.exit(1)
})
