// agency goal | task | ready | claim | release | done | review | experts
import type { Command } from 'commander'
import { command, withAgency, printJson, line, short, type CommonOpts } from '../output.js'
import { ClaimOutcome, type AgencyClient, type ReviewView, type TaskView } from '../../gen/agency/v1/api.js'

function collect (value: string, previous: string[] = []): string[] {
  return [...previous, value]
}

function taskLine (t: TaskView): string {
  const holder = t.holder !== '' && t.state !== 'open' ? ` ${t.state === 'done' ? 'by' : 'held by'} ${short(t.holder)}@${t.epoch}` : ''
  const deps = t.deps.length > 0 ? ` after ${t.deps.join(',')}` : ''
  const scope = t.scope.length > 0 ? ` [${t.scope.join(', ')}]` : ''
  return `${t.id.padEnd(20)} ${t.state.padEnd(8)} p${t.priority}${holder}${deps}${scope}  ${t.title}`
}

function reviewLine (r: ReviewView): string {
  const verdicts = r.verdicts.map(v => `${short(v.reviewer)}:${v.verdict}`).join(' ')
  return `${r.target}: ${r.approvals} approvals, ${r.rejections} rejections${r.requestedBy !== '' ? `, requested by ${short(r.requestedBy)}` : ''}${verdicts !== '' ? `  (${verdicts})` : ''}`
}

export function registerBoardCommands (program: Command): void {
  command(program, 'goal', 'show the swarm\'s goal, or change it with `agency goal set <text> --test "<command>"`')
    .argument('[set]', '"set" to change the goal')
    .argument('[text...]', 'the new goal')
    .option('--test <command>', 'the test command that defines "passing"')
    .option('--file <path>', 'a file that describes the goal (repeatable)', collect)
    .option('--history', 'show every change')
    .action(withAgency(async (agency, set: string | undefined, text: string[], opts: CommonOpts & { test?: string, file?: string[], history?: boolean }) => {
      let reply
      if (set === 'set') {
        reply = await agency.call((c: AgencyClient) => c.setGoal, { text: text.join(' '), files: opts.file ?? [], testCommand: opts.test ?? '' })
      } else if (set != null) {
        throw new Error(`unknown argument "${set}": use \`agency goal\` or \`agency goal set <text>\``)
      } else {
        reply = await agency.call((c: AgencyClient) => c.getGoal, {})
      }
      if (opts.json === true) { printJson(opts.history === true ? reply : reply.goal ?? null); return }
      const goals = opts.history === true ? reply.history : (reply.goal != null ? [reply.goal] : [])
      if (goals.length === 0) line('no goal set yet (agency goal set <text> --test "<command>")')
      for (const g of goals) line(`${g.text}${g.testCommand !== '' ? `\n  tests: ${g.testCommand}` : ''}${g.files.length > 0 ? `\n  files: ${g.files.join(', ')}` : ''}\n  set by ${short(g.setBy)} at ${new Date(g.time).toISOString()}`)
    }))

  const task = program.command('task').description('add, list and show tasks')
  command(task, 'add', 'add a task to the board')
    .argument('<id>', 'a slug: lowercase letters, digits, dashes')
    .argument('[title...]', 'a short title')
    .option('--description <text>', 'what is to be done')
    .option('--dep <id>', 'a task that must be done first (repeatable)', collect)
    .option('--scope <glob>', 'paths the task is expected to touch (repeatable)', collect)
    .option('--priority <n>', 'higher first', '0')
    .action(withAgency(async (agency, id: string, title: string[], opts: CommonOpts & { description?: string, dep?: string[], scope?: string[], priority: string }) => {
      const priority = Number(opts.priority)
      if (!Number.isInteger(priority)) throw new Error(`--priority must be a whole number, got "${opts.priority}"`)
      const res = await agency.call((c: AgencyClient) => c.addTask, { id, title: title.join(' '), description: opts.description ?? '', deps: opts.dep ?? [], scope: opts.scope ?? [], priority })
      if (opts.json === true) printJson(res.task); else line(`added ${res.task?.id ?? id}`)
    }))
  command(task, 'list', 'list tasks')
    .option('--state <state>', 'open | claimed | expired | done')
    .action(withAgency(async (agency, opts: CommonOpts & { state?: string }) => {
      const { tasks } = await agency.call((c: AgencyClient) => c.listTasks, { state: opts.state ?? '' })
      if (opts.json === true) { printJson(tasks); return }
      if (tasks.length === 0) line('no tasks')
      for (const t of tasks) line(taskLine(t))
    }))
  command(task, 'show', 'one task in full, with its holder and hand-off notes')
    .argument('<id>')
    .action(withAgency(async (agency, id: string, opts: CommonOpts) => {
      const { task: t } = await agency.call((c: AgencyClient) => c.getTask, { id })
      if (opts.json === true || t == null) { printJson(t); return }
      line(taskLine(t))
      if (t.description !== '') line(`  ${t.description}`)
      if (t.claimScope.length > 0) line(`  claimed scope: ${t.claimScope.join(', ')}`)
      if (t.handoff !== '' || t.branch !== '') line(`  hand-off: ${t.handoff}${t.branch !== '' ? ` (branch ${t.branch})` : ''}`)
      if (t.commit !== '') line(`  commit: ${t.commit}`)
    }))

  command(program, 'ready', 'tasks that can be claimed now: open or expired, with their dependencies done')
    .action(withAgency(async (agency, opts: CommonOpts) => {
      const { tasks } = await agency.call((c: AgencyClient) => c.ready, {})
      if (opts.json === true) { printJson(tasks); return }
      if (tasks.length === 0) line('nothing ready')
      for (const t of tasks) line(taskLine(t))
    }))

  command(program, 'claim', 'claim a task; answers HELD or LOST (naming the winner) once the settle window has passed')
    .argument('<task>')
    .option('--scope <glob>', 'paths you will touch (repeatable; default: the task\'s scope hints)', collect)
    .option('--no-wait', 'answer PENDING at once instead of waiting for the settle window')
    .action(withAgency(async (agency, taskId: string, opts: CommonOpts & { scope?: string[], wait: boolean }) => {
      const res = await agency.call((c: AgencyClient) => c.claim, { task: taskId, scope: opts.scope ?? [], noWait: !opts.wait }, 60_000)
      const outcome = res.outcome === ClaimOutcome.CLAIM_HELD ? 'HELD' : res.outcome === ClaimOutcome.CLAIM_LOST ? 'LOST' : 'PENDING'
      if (opts.json === true) { printJson({ ...res, outcome }); return }
      line(`${outcome} ${res.task}@${res.epoch}${outcome === 'LOST' ? ` — held by ${res.winner}` : ''}`)
      if (res.handoff !== '' || res.branch !== '') line(`hand-off from the previous holder: ${res.handoff}${res.branch !== '' ? ` (branch ${res.branch})` : ''}`)
      if (res.overlaps.length > 0) line(`scope overlaps with: ${res.overlaps.join(', ')} — talk to them (agency send)`)
      if (outcome === 'LOST') process.exitCode = 4
    }))

  command(program, 'release', 'give a task back, with hand-off notes for whoever takes it next')
    .argument('<task>')
    .option('--note <text>', 'hand-off notes', '')
    .option('--branch <name>', 'the branch with the work so far', '')
    .action(withAgency(async (agency, taskId: string, opts: CommonOpts & { note: string, branch: string }) => {
      const res = await agency.call((c: AgencyClient) => c.release, { task: taskId, note: opts.note, branch: opts.branch })
      if (opts.json === true) printJson(res.task); else line(`released ${taskId}`)
    }))

  command(program, 'done', 'mark a task you hold as done')
    .argument('<task>')
    .option('--commit <sha>', 'the commit that finished it', '')
    .option('--path <path>', 'a path the work touched (repeatable; feeds `agency experts`)', collect)
    .action(withAgency(async (agency, taskId: string, opts: CommonOpts & { commit: string, path?: string[] }) => {
      const res = await agency.call((c: AgencyClient) => c.done, { task: taskId, commit: opts.commit, paths: opts.path ?? [] })
      if (opts.json === true) printJson(res.task); else line(`done ${taskId}`)
    }))

  const review = program.command('review').description('ask for reviews and give verdicts')
  command(review, 'request', 'ask for a review of a commit, branch or task')
    .argument('<target>')
    .option('--reviewer <peer>', 'a reviewer to ask (repeatable)', collect)
    .option('--note <text>', 'what to look at', '')
    .action(withAgency(async (agency, target: string, opts: CommonOpts & { reviewer?: string[], note: string }) => {
      const res = await agency.call((c: AgencyClient) => c.requestReview, { target, reviewers: opts.reviewer ?? [], note: opts.note })
      if (opts.json === true) printJson(res.review); else line(reviewLine(res.review as ReviewView))
    }))
  for (const verdict of ['approve', 'reject', 'retract'] as const) {
    command(review, verdict, `${verdict} a target${verdict === 'retract' ? ' (withdraws your earlier approval; give the counterexample as evidence)' : ''}`)
      .argument('<target>')
      .option('--evidence <text>', 'why: e.g. a failing case', '')
      .action(withAgency(async (agency, target: string, opts: CommonOpts & { evidence: string }) => {
        const res = await agency.call((c: AgencyClient) => c.submitVerdict, { target, verdict, evidence: opts.evidence })
        if (opts.json === true) printJson(res.review); else line(reviewLine(res.review as ReviewView))
      }))
  }
  command(review, 'list', 'reviews and their approval counts')
    .argument('[target]')
    .action(withAgency(async (agency, target: string | undefined, opts: CommonOpts) => {
      const res = await agency.call((c: AgencyClient) => c.listReviews, { target: target ?? '' })
      if (opts.json === true) { printJson(res.reviews); return }
      if (res.reviews.length === 0) line('no reviews')
      for (const r of res.reviews) line(reviewLine(r))
    }))

  command(program, 'experts', 'peers ranked by the done tasks and integrations that touched a path: who to ask')
    .argument('<path>')
    .option('--limit <n>', 'at most this many', '10')
    .action(withAgency(async (agency, path: string, opts: CommonOpts & { limit: string }) => {
      const res = await agency.call((c: AgencyClient) => c.experts, { path, limit: Number(opts.limit) })
      if (opts.json === true) { printJson(res.experts); return }
      if (res.experts.length === 0) line(`nobody has worked on ${path} yet`)
      for (const e of res.experts) line(`${(e.name !== '' ? e.name : short(e.peerId)).padEnd(12)} ${e.peerId}  ${e.tasks} tasks, ${e.integrations} integrations`)
    }))
}
