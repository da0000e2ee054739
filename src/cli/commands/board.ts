// agency goal | task | ready | claim | release | done | review | experts
import { readFile } from 'node:fs/promises'
import type { Command } from 'commander'
import { parse as parseYaml } from 'yaml'
import { command, withAgency, printJson, line, short, type CommonOpts } from '../output.js'
import { givenOperator, submitAction } from '../operator-client.js'
import { ClaimOutcome, type AgencyClient, type PendingTask, type ReviewView, type TaskView } from '../../gen/agency/v1/api.js'

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value]
}

function taskLine(t: TaskView): string {
  const holder = t.holder !== '' && t.state !== 'open' ? ` ${t.state === 'done' ? 'by' : 'held by'} ${short(t.holder)}@${t.epoch}` : ''
  const deps = t.deps.length > 0 ? ` after ${t.deps.join(',')}` : ''
  const scope = t.scope.length > 0 ? ` [${t.scope.join(', ')}]` : ''
  return `${t.id.padEnd(20)} ${t.state.padEnd(8)} p${t.priority}${holder}${deps}${scope}  ${t.title}`
}

function pendingLine(p: PendingTask): string {
  return `${p.task.padEnd(20)} pending  ${short(p.peer)}@${p.epoch} is settling its claim (${Math.ceil(p.settlesInMs)} ms left)`
}

/** A claim's outcome by name. */
export function outcomeName(o: ClaimOutcome): 'HELD' | 'LOST' | 'PENDING' | 'NONE_READY' {
  return o === ClaimOutcome.CLAIM_HELD
    ? 'HELD'
    : o === ClaimOutcome.CLAIM_LOST
      ? 'LOST'
      : o === ClaimOutcome.CLAIM_NONE_READY
        ? 'NONE_READY'
        : 'PENDING'
}

function reviewLine(r: ReviewView): string {
  const verdicts = r.verdicts.map(v => `${short(v.reviewer)}:${v.verdict}`).join(' ')
  return `${r.target}: ${r.approvals} approvals, ${r.rejections} rejections${r.requestedBy !== '' ? `, requested by ${short(r.requestedBy)}` : ''}${verdicts !== '' ? `  (${verdicts})` : ''}`
}

interface PlanTask {
  id: string
  title: string
  description: string
  deps: string[]
  scope: string[]
  priority: number
}

/** A plan file: a list of tasks, or {tasks: [...]}, in JSON or YAML. */
export function parsePlan(text: string, file: string): PlanTask[] {
  let doc: unknown
  try {
    doc = parseYaml(text)
  } catch (err) {
    throw new Error(`${file} is not JSON or YAML: ${(err as Error).message}`, { cause: err })
  }
  const list = Array.isArray(doc) ? doc : (doc as { tasks?: unknown } | null)?.tasks
  if (!Array.isArray(list)) throw new Error(`${file} must hold a list of tasks (or {tasks: [...]})`)
  return list.map((item: unknown, i: number) => {
    const t = (typeof item === 'object' && item !== null ? item : {}) as {
      id?: unknown
      title?: unknown
      description?: unknown
      deps?: unknown
      scope?: unknown
      priority?: unknown
    }
    const id = t.id
    if (typeof id !== 'string') throw new Error(`${file}: task ${i + 1} needs an id`)
    const strings = (v: unknown, what: string): string[] => {
      if (v == null) return []
      if (typeof v === 'string')
        return v
          .split(',')
          .map(x => x.trim())
          .filter(x => x !== '')
      if (!Array.isArray(v) || v.some(x => typeof x !== 'string')) throw new Error(`${file}: task ${id}: ${what} must be a list of strings`)
      return v as string[]
    }
    const priority = t.priority ?? 0
    if (typeof priority !== 'number' || !Number.isInteger(priority)) throw new Error(`${file}: task ${id}: priority must be a whole number`)
    return {
      id,
      title: planText(t.title),
      description: planText(t.description),
      deps: strings(t.deps, 'deps'),
      scope: strings(t.scope, 'scope'),
      priority
    }
  })
}

/** A plan's text field: a string as it is, a number written out, anything else empty. */
function planText(v: unknown): string {
  return typeof v === 'string' ? v : typeof v === 'number' ? String(v) : ''
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = []
  for await (const c of process.stdin) chunks.push(c as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}

export function registerBoardCommands(program: Command): void {
  command(program, 'goal', 'show the swarm\'s goal, or change it with `agency goal set <text> --test "<command>"`')
    .argument('[set]', '"set" to change the goal')
    .argument('[text...]', 'the new goal')
    .option('--test <command>', 'the test command that defines "passing"')
    .option('--file <path>', 'a file that describes the goal (repeatable)', collect)
    .option('--history', 'show every change')
    .action(
      withAgency(
        async (
          agency,
          set: string | undefined,
          text: string[],
          opts: CommonOpts & { test?: string; file?: string[]; history?: boolean }
        ) => {
          let reply
          const operator = set === 'set' ? await givenOperator(opts) : undefined
          if (operator !== undefined) {
            // the first goal carries the operator's key, so members started without --operator learn it from the log
            await submitAction(agency, operator, {
              kind: 'goal',
              goal: { text: text.join(' '), files: opts.file ?? [], testCommand: opts.test ?? '' },
              operators: [operator.author]
            })
            reply = await agency.call((c: AgencyClient) => c.getGoal, {})
          } else if (set === 'set') {
            reply = await agency.call((c: AgencyClient) => c.setGoal, {
              text: text.join(' '),
              files: opts.file ?? [],
              testCommand: opts.test ?? ''
            })
          } else if (set != null) {
            throw new Error(`unknown argument "${set}": use \`agency goal\` or \`agency goal set <text>\``)
          } else {
            reply = await agency.call((c: AgencyClient) => c.getGoal, {})
          }
          if (opts.json === true) {
            printJson(opts.history === true ? reply : (reply.goal ?? null))
            return
          }
          const goals = opts.history === true ? reply.history : reply.goal != null ? [reply.goal] : []
          if (goals.length === 0) line('no goal set yet (agency goal set <text> --test "<command>")')
          for (const g of goals)
            line(
              `${g.text}${g.testCommand !== '' ? `\n  tests: ${g.testCommand}` : ''}${g.files.length > 0 ? `\n  files: ${g.files.join(', ')}` : ''}\n  set by ${short(g.setBy)} at ${new Date(g.time).toISOString()}`
            )
        }
      )
    )

  const task = program.command('task').description('add, list and show tasks')
  command(task, 'add', 'add a task to the board; its dependencies must already be on it (or use task add-plan for several at once)')
    .argument('<id>', 'a slug: lowercase letters, digits, dashes')
    .argument('[title...]', 'a short title (or --title)')
    .option('--title <text>', 'a short title')
    .option('--description <text>', 'what is to be done')
    .option('--dep <id>', 'a task that must be done first (repeatable, or comma-separated)', collect)
    .option('--deps <ids>', 'the same, comma-separated', collect)
    .option('--scope <glob>', 'paths the task is expected to touch (repeatable)', collect)
    .option('--priority <n>', 'higher first', '0')
    .action(
      withAgency(
        async (
          agency,
          id: string,
          title: string[],
          opts: CommonOpts & { title?: string; description?: string; dep?: string[]; deps?: string[]; scope?: string[]; priority: string }
        ) => {
          const priority = Number(opts.priority)
          if (!Number.isInteger(priority)) throw new Error(`--priority must be a whole number, got "${opts.priority}"`)
          if (opts.title != null && title.length > 0) throw new Error('give the title once: as words after the id, or with --title')
          const deps = [...(opts.dep ?? []), ...(opts.deps ?? [])]
            .flatMap(d => d.split(','))
            .map(d => d.trim())
            .filter(d => d !== '')
          const spec = {
            id,
            title: opts.title ?? title.join(' '),
            description: opts.description ?? '',
            deps,
            scope: opts.scope ?? [],
            priority
          }
          const operator = await givenOperator(opts)
          if (operator !== undefined) {
            await submitAction(agency, operator, { kind: 'task', task: spec })
            if (opts.json === true) printJson((await agency.call((c: AgencyClient) => c.getTask, { id })).task)
            else line(`added ${id} as the operator`)
            return
          }
          const res = await agency.call((c: AgencyClient) => c.addTask, spec)
          if (opts.json === true) printJson(res.task)
          else line(`added ${res.task?.id ?? id}`)
        }
      )
    )
  command(
    task,
    'add-plan',
    'add several tasks at once from a JSON or YAML file (a list of {id, title, description, deps, scope, priority}); checked as one graph: an unknown dependency or a cycle adds nothing'
  )
    .argument('<file>', 'the plan file, or - for standard input')
    .action(
      withAgency(async (agency, file: string, opts: CommonOpts) => {
        const tasks = parsePlan(file === '-' ? await readStdin() : await readFile(file, 'utf8'), file)
        const res = await agency.call((c: AgencyClient) => c.addTasks, { tasks })
        if (opts.json === true) printJson(res.tasks)
        else line(`added ${res.tasks.length} tasks: ${res.tasks.map(t => t.id).join(', ')}`)
      })
    )
  command(task, 'list', 'list tasks')
    .option('--state <state>', 'open | claimed | expired | done')
    .action(
      withAgency(async (agency, opts: CommonOpts & { state?: string }) => {
        const { tasks } = await agency.call((c: AgencyClient) => c.listTasks, { state: opts.state ?? '' })
        if (opts.json === true) {
          printJson(tasks)
          return
        }
        if (tasks.length === 0) line('no tasks')
        for (const t of tasks) line(taskLine(t))
      })
    )
  command(task, 'show', 'one task in full, with its holder and hand-off notes')
    .argument('<id>')
    .action(
      withAgency(async (agency, id: string, opts: CommonOpts) => {
        const { task: t } = await agency.call((c: AgencyClient) => c.getTask, { id })
        if (opts.json === true || t == null) {
          printJson(t)
          return
        }
        line(taskLine(t))
        if (t.description !== '') line(`  ${t.description}`)
        if (t.claimScope.length > 0) line(`  claimed scope: ${t.claimScope.join(', ')}`)
        if (t.handoff !== '' || t.branch !== '') line(`  hand-off: ${t.handoff}${t.branch !== '' ? ` (branch ${t.branch})` : ''}`)
        if (t.commit !== '') line(`  commit: ${t.commit}`)
      })
    )

  command(
    program,
    'ready',
    "tasks that can be claimed now: open or expired, with their dependencies done; and those a peer's claim is settling on (pending)"
  ).action(
    withAgency(async (agency, opts: CommonOpts) => {
      const { tasks, pending } = await agency.call((c: AgencyClient) => c.ready, {})
      if (opts.json === true) {
        printJson({ tasks, pending })
        return
      }
      if (tasks.length === 0) line(pending.length > 0 ? 'nothing ready but pending tasks (agency wait)' : 'nothing ready')
      for (const t of tasks) line(taskLine(t))
      for (const p of pending) line(pendingLine(p))
    })
  )

  command(
    program,
    'claim',
    'claim a task (or --next: the daemon picks one); answers HELD or LOST (naming the winner) once the settle window has passed'
  )
    .argument('[task]', 'the task; omit it with --next')
    .option(
      '--next',
      "let the daemon pick a ready task (each agent prefers different ones; tasks a peer's claim is settling on are skipped) and try the next on LOST, up to 3"
    )
    .option('--scope <glob>', "paths you will touch (repeatable; default: the task's scope hints)", collect)
    .option('--no-wait', 'answer PENDING at once instead of waiting for the settle window (not with --next)')
    .action(
      withAgency(async (agency, taskId: string | undefined, opts: CommonOpts & { scope?: string[]; wait: boolean; next?: boolean }) => {
        const next = opts.next === true
        if (next && taskId != null) throw new Error('give a task or --next, not both')
        if (!next && taskId == null) throw new Error('name the task to claim, or let your daemon pick one: agency claim --next')
        if (next && !opts.wait) throw new Error('--next waits for the answer (it may try another task on LOST): drop --no-wait')
        const res = await agency.call(
          (c: AgencyClient) => c.claim,
          { task: taskId ?? '', scope: opts.scope ?? [], noWait: !opts.wait, next },
          next ? 180_000 : 60_000
        )
        const outcome = outcomeName(res.outcome)
        if (opts.json === true) {
          printJson({ ...res, outcome })
          return
        }
        if (outcome === 'NONE_READY') {
          const offer = res.assist?.outcome === 'OFFER' ? res.assist : undefined
          line(
            `nothing to claim${res.pending.length > 0 ? `: ${res.pending.length} ready task(s) pending` : ''} — ${offer !== undefined ? `assist ${offer.task} instead (agency assist --task ${offer.task} shows the approaches to avoid), or agency wait` : 'agency wait'}`
          )
          for (const p of res.pending) line(`  ${pendingLine(p)}`)
          process.exitCode = 4
          return
        }
        const tries = next && res.attempts > 1 ? ` (after ${res.attempts} claims)` : ''
        line(
          `${outcome} ${res.task}@${res.epoch}${tries}${outcome === 'LOST' ? ` — held by ${res.winner}; ${next ? 'agency claim --next again' : 'pick another task (agency claim --next)'}` : ''}`
        )
        if (res.workspace !== '') line(res.workspace)
        if (res.handoff !== '' || res.branch !== '')
          line(`hand-off from the previous holder: ${res.handoff}${res.branch !== '' ? ` (branch ${res.branch})` : ''}`)
        if (res.overlaps.length > 0) line(`scope overlaps with: ${res.overlaps.join(', ')} — talk to them (agency send)`)
        if (outcome === 'LOST') process.exitCode = 4
      })
    )

  command(program, 'release', 'give a task back, with hand-off notes for whoever takes it next')
    .argument('<task>')
    .option('--note <text>', 'hand-off notes', '')
    .option('--branch <name>', 'the branch with the work so far', '')
    .action(
      withAgency(async (agency, taskId: string, opts: CommonOpts & { note: string; branch: string }) => {
        const res = await agency.call((c: AgencyClient) => c.release, { task: taskId, note: opts.note, branch: opts.branch })
        if (opts.json === true) printJson(res.task)
        else line(`released ${taskId}`)
      })
    )

  command(
    program,
    'done',
    'mark a task you hold as done: once `agency integrate` has landed its work on the shared branch (or with --no-change)'
  )
    .argument('<task>')
    .option('--commit <sha>', 'the commit that finished it (default: the merge integrate made)', '')
    .option('--path <path>', 'a path the work touched (repeatable; feeds `agency experts`)', collect)
    .option('--no-change <reason>', 'the task needed no change on the shared branch: why (goes on the record)')
    .action(
      withAgency(async (agency, taskId: string, opts: CommonOpts & { commit: string; path?: string[]; change?: string | boolean }) => {
        // commander turns --no-change <reason> into change: <reason>; without it, change is true.
        const noChange = typeof opts.change === 'string' ? opts.change : ''
        const res = await agency.call((c: AgencyClient) => c.done, { task: taskId, commit: opts.commit, paths: opts.path ?? [], noChange })
        if (opts.json === true) printJson(res.task)
        else line(`done ${taskId}`)
      })
    )

  command(
    program,
    'wait',
    'block until there is something for you: a ready task, an unread message or notice, a task you hold, or the goal met; says which'
  )
    .option('--timeout <seconds>', 'give up after this long', '600')
    .action(
      withAgency(async (agency, opts: CommonOpts & { timeout: string }) => {
        const seconds = Number(opts.timeout)
        if (!Number.isFinite(seconds) || seconds <= 0 || seconds > 3600)
          throw new Error(`--timeout must be between 1 and 3600 seconds, got "${opts.timeout}"`)
        const res = await agency.call((c: AgencyClient) => c.wait, { timeoutMs: Math.round(seconds * 1000) }, seconds * 1000 + 30_000)
        if (opts.json === true) {
          printJson(res)
          return
        }
        line(`${res.reason}: ${res.text}`)
        for (const t of res.ready.slice(0, 20)) line(`  ${taskLine(t)}`)
      })
    )

  const review = program.command('review').description('ask for reviews and give verdicts')
  command(review, 'request', 'ask for a review of a commit, branch or task')
    .argument('<target>')
    .option('--reviewer <peer>', 'a reviewer to ask (repeatable)', collect)
    .option('--note <text>', 'what to look at', '')
    .action(
      withAgency(async (agency, target: string, opts: CommonOpts & { reviewer?: string[]; note: string }) => {
        const res = await agency.call((c: AgencyClient) => c.requestReview, { target, reviewers: opts.reviewer ?? [], note: opts.note })
        if (opts.json === true) printJson(res.review)
        else line(reviewLine(res.review as ReviewView))
      })
    )
  for (const verdict of ['approve', 'reject', 'retract'] as const) {
    command(
      review,
      verdict,
      `${verdict} a target${verdict === 'retract' ? ' (withdraws your earlier approval; give the counterexample as evidence)' : ''}`
    )
      .argument('<target>')
      .option('--evidence <text>', 'why: e.g. a failing case', '')
      .action(
        withAgency(async (agency, target: string, opts: CommonOpts & { evidence: string }) => {
          const res = await agency.call((c: AgencyClient) => c.submitVerdict, { target, verdict, evidence: opts.evidence })
          if (opts.json === true) printJson(res.review)
          else line(reviewLine(res.review as ReviewView))
        })
      )
  }
  command(review, 'list', 'reviews and their approval counts')
    .argument('[target]')
    .action(
      withAgency(async (agency, target: string | undefined, opts: CommonOpts) => {
        const res = await agency.call((c: AgencyClient) => c.listReviews, { target: target ?? '' })
        if (opts.json === true) {
          printJson(res.reviews)
          return
        }
        if (res.reviews.length === 0) line('no reviews')
        for (const r of res.reviews) line(reviewLine(r))
      })
    )

  command(program, 'experts', 'peers ranked by the done tasks and integrations that touched a path: who to ask')
    .argument('<path>')
    .option('--limit <n>', 'at most this many', '10')
    .action(
      withAgency(async (agency, path: string, opts: CommonOpts & { limit: string }) => {
        const res = await agency.call((c: AgencyClient) => c.experts, { path, limit: Number(opts.limit) })
        if (opts.json === true) {
          printJson(res.experts)
          return
        }
        if (res.experts.length === 0) line(`nobody has worked on ${path} yet`)
        for (const e of res.experts)
          line(`${(e.name !== '' ? e.name : short(e.peerId)).padEnd(12)} ${e.peerId}  ${e.tasks} tasks, ${e.integrations} integrations`)
      })
    )
}
