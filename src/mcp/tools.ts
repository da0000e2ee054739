// The coordination tools an agent harness sees over MCP. Each tool validates
// its input with a schema and calls the daemon's gRPC API; a daemon error
// comes back as an MCP tool error that says what was wrong.
import { z } from 'zod'
import type { AgencyClient } from '../gen/agency/v1/api.js'
import { ClaimOutcome } from '../gen/agency/v1/api.js'
import type { Agency } from '../client/agency.js'
import { statusDigest } from '../api/status-digest.js'

export interface ToolDef {
  name: string
  description: string
  input: z.ZodRawShape
  /** Called with the arguments the MCP server has already checked against `input`. */
  run: (agency: Agency, args: unknown) => Promise<unknown>
}

/** A tool whose `run` sees its arguments typed by its own schema. */
function tool<S extends z.ZodRawShape>(def: {
  name: string
  description: string
  input: S
  run: (agency: Agency, args: z.infer<z.ZodObject<S>>) => Promise<unknown>
}): ToolDef {
  return { ...def, run: async (agency, args) => await def.run(agency, args as z.infer<z.ZodObject<S>>) }
}

const str = (d: string) => z.string().describe(d)
const optStr = (d: string) => z.string().optional().describe(d)
const strList = (d: string) => z.array(z.string()).optional().describe(d)

const outcomeName = (o: ClaimOutcome): string =>
  o === ClaimOutcome.CLAIM_HELD
    ? 'HELD'
    : o === ClaimOutcome.CLAIM_LOST
      ? 'LOST'
      : o === ClaimOutcome.CLAIM_NONE_READY
        ? 'NONE_READY'
        : 'PENDING'

/** A task as add_task and add_tasks take it. */
const TASK_INPUT = {
  id: str('slug: lowercase letters, digits and dashes'),
  title: optStr('short title'),
  description: optStr('what is to be done'),
  deps: strList('ids of tasks that must be done first'),
  scope: strList('globs of the paths the task will touch'),
  priority: z.number().int().optional().describe('higher first')
}

export const TOOLS: ToolDef[] = [
  tool({
    name: 'status',
    description:
      'The swarm at a glance, compact: you (the tasks you hold, your unread count), the goal and whether it is met, the tasks in play with their holders, the tasks ready to claim, live peers and their status lines, the latest shared test run, and whether a review is worth asking now (only while some agent has nothing to claim). Optionally set your own status line first; full=true for every task and peer in full.',
    input: {
      set_status: optStr('your status line ("what I am doing"), shown to peers'),
      full: z.boolean().optional().describe('every task and peer in full (large)')
    },
    run: async (a, args) => {
      if (args.set_status != null) await a.call((c: AgencyClient) => c.setStatusLine, { status: args.set_status })
      const s = await a.call((c: AgencyClient) => c.getStatus, {})
      return args.full === true ? s : statusDigest(s)
    }
  }),
  tool({
    name: 'ready',
    description:
      "Tasks you can claim now: open or expired, with all dependencies done, highest priority first; and pending: tasks a peer's claim is settling on (with the peer), not worth claiming.",
    input: {},
    run: async a => {
      const r = await a.call((c: AgencyClient) => c.ready, {})
      return { tasks: r.tasks, pending: r.pending }
    }
  }),
  tool({
    name: 'add_task',
    description:
      'Add a task to the shared board. Its dependencies must be on the board already (add them first, or use add_tasks for a whole plan).',
    input: TASK_INPUT,
    run: async (a, args) =>
      (
        await a.call((c: AgencyClient) => c.addTask, {
          id: args.id,
          title: args.title ?? '',
          description: args.description ?? '',
          deps: args.deps ?? [],
          scope: args.scope ?? [],
          priority: args.priority ?? 0
        })
      ).task
  }),
  tool({
    name: 'add_tasks',
    description:
      'Add a plan: several tasks at once, checked as one graph (dependencies may name tasks of the same plan); an unknown dependency, a cycle or a task id that exists with another definition adds nothing.',
    input: {
      tasks: z.array(z.object(TASK_INPUT)).min(1).max(1000).describe('the tasks of the plan')
    },
    run: async (a, args) => {
      const r = await a.call((c: AgencyClient) => c.addTasks, {
        tasks: args.tasks.map(t => ({
          id: t.id,
          title: t.title ?? '',
          description: t.description ?? '',
          deps: t.deps ?? [],
          scope: t.scope ?? [],
          priority: t.priority ?? 0
        }))
      })
      return { added: r.tasks.map(t => t.id) }
    }
  }),
  tool({
    name: 'wait',
    description:
      'Block until there is something for you: a task ready to claim, an unread message or notice, a task you hold, or the goal met. Use it instead of polling when nothing is ready. Says which, and what to do.',
    input: { timeout_seconds: z.number().int().min(1).max(3600).optional().describe('give up after this long (default 600)') },
    run: async (a, args) => {
      const ms = (args.timeout_seconds ?? 600) * 1000
      const r = await a.call((c: AgencyClient) => c.wait, { timeoutMs: ms }, ms + 30_000)
      return { reason: r.reason, text: r.text, unread: r.unread, ready: r.ready.map(t => t.id) }
    }
  }),
  tool({
    name: 'claim',
    description:
      "Claim a task and announce the paths you will touch. With no task, your daemon picks one among the ready tasks (each agent prefers different ones, and tasks a peer's claim is settling on are skipped), trying the next on LOST, up to 3; the answer names the task, or NONE_READY when there is nothing to claim (then assist the task its assist field offers, or wait). Answers HELD (it is yours: your workspace is switched to its task branch; commit there) or LOST (naming the winner) after the settle window. On a takeover the previous holder's pushed work is where your branch starts, and their hand-off notes come back.",
    input: {
      task: optStr('task id; leave it out to let your daemon pick the next ready task'),
      scope: strList("globs of the paths you will touch (default: the task's scope hints)")
    },
    run: async (a, args) => {
      const task = args.task ?? ''
      const next = task === ''
      const r = await a.call((c: AgencyClient) => c.claim, { task, scope: args.scope ?? [], noWait: false, next }, next ? 180_000 : 60_000)
      return { ...r, outcome: outcomeName(r.outcome) }
    }
  }),
  tool({
    name: 'assist',
    description:
      'Nothing ready and you hold nothing? Help a task a peer holds on the critical path instead of idling, with an approach of your own. Without approach: only look (the task your daemon picks, or the one named, with the approaches announced or failed on it: do not repeat one). With approach: it is announced to everyone, the holder is told, and your workspace is put on a branch of your own; commit there and integrate (or, while a peer has announced it is the integrator, request_integration): the first passing integration of the task wins (it is then done by you). Not a claim: the holder keeps the task. With stop: end your assist, recording what you learned (do it when told the task is done, or when you give up).',
    input: {
      task: optStr('the task to assist (default: your daemon picks)'),
      approach: optStr('your approach, unlike those announced on the task'),
      stop: optStr('end your assist: what you learned')
    },
    run: async (a, args) => {
      if (args.approach != null && String(args.approach).trim() === '')
        throw new Error('approach needs the approach: a sentence on how you will do it, unlike those announced on the task')
      if (args.stop != null && String(args.stop).trim() === '')
        throw new Error('stop needs what you learned: what worked, what did not, and why')
      return await a.call((c: AgencyClient) => c.assist, { task: args.task ?? '', approach: args.approach ?? '', stop: args.stop ?? '' })
    }
  }),
  tool({
    name: 'release',
    description: 'Give a task back, with hand-off notes (what was tried, what is left) for whoever takes it next.',
    input: { task: str('task id'), note: optStr('hand-off notes'), branch: optStr('branch with the work so far') },
    run: async (a, args) =>
      (await a.call((c: AgencyClient) => c.release, { task: args.task, note: args.note ?? '', branch: args.branch ?? '' })).task
  }),
  tool({
    name: 'done',
    description:
      'Mark a task you hold as done, once integrate has landed its work on the shared branch. If the task needed no change, say why in no_change instead (it goes on the record).',
    input: {
      task: str('task id'),
      commit: optStr('commit sha (default: the merge integrate made)'),
      paths: strList('paths the work touched'),
      no_change: optStr('the task needed no change on the shared branch: why')
    },
    run: async (a, args) =>
      (
        await a.call((c: AgencyClient) => c.done, {
          task: args.task,
          commit: args.commit ?? '',
          paths: args.paths ?? [],
          noChange: args.no_change ?? ''
        })
      ).task
  }),
  tool({
    name: 'send_message',
    description: 'Send a direct message to one peer (peer id or name). Delivered exactly once, retried while the peer is away.',
    input: {
      to: str('peer id or name'),
      text: str('the message'),
      thread: optStr('thread id to continue'),
      reply_to: optStr('id of the message this answers')
    },
    run: async (a, args) =>
      await a.call((c: AgencyClient) => c.sendMessage, {
        to: args.to,
        text: args.text,
        thread: args.thread ?? '',
        replyTo: args.reply_to ?? ''
      })
  }),
  tool({
    name: 'read_inbox',
    description:
      "What you have not read yet: peers' direct messages and your daemon's notices (kind: claim_lost, claim_superseded, overlap, review_requested, integration, goal_changed, assist, handoff), and the operator's: operator (a message from the person steering the swarm: read it first), paused, resumed, approval. Reading marks them read; all=true shows the history instead.",
    input: {
      all: z.boolean().optional().describe('the history too (after the cursor `after`), without marking anything read'),
      after: z.number().int().min(0).optional().describe('with all: the cursor to start after'),
      limit: z.number().int().min(1).max(1000).optional()
    },
    run: async (a, args) => {
      const r = await a.call((c: AgencyClient) => c.readInbox, {
        after: args.after ?? 0,
        limit: args.limit ?? 100,
        all: args.all === true,
        peek: false
      })
      return {
        messages: r.messages.map(m => ({
          cursor: m.cursor,
          kind: m.kind,
          id: m.id,
          from: m.from,
          fromName: m.fromName,
          task: m.task,
          text: m.text,
          thread: m.thread,
          replyTo: m.replyTo,
          time: m.time
        })),
        unread: r.unread
      }
    }
  }),
  tool({
    name: 'announce',
    description: 'Broadcast a short message to the whole swarm.',
    input: { text: str('the announcement') },
    run: async (a, args) => await a.call((c: AgencyClient) => c.announce, { text: args.text })
  }),
  tool({
    name: 'record_finding',
    description:
      'Record what you learned in the shared record so nobody repeats it: a discovery, a failed approach (kind "failure"), a bug, an interface decision, or a note.',
    input: {
      kind: z.enum(['discovery', 'failure', 'bug', 'decision', 'note']).describe('what sort of finding'),
      text: str('what was learned; for a failure, what was tried and why it failed'),
      paths: strList('paths it is about'),
      tags: strList('tags'),
      supersedes: optStr('id of an earlier finding this one replaces')
    },
    run: async (a, args) =>
      (
        await a.call((c: AgencyClient) => c.recordFinding, {
          kind: args.kind,
          text: args.text,
          paths: args.paths ?? [],
          tags: args.tags ?? [],
          refs: [],
          supersedes: args.supersedes ?? ''
        })
      ).entry
  }),
  tool({
    name: 'search_findings',
    description:
      "Full-text search over every peer's findings. Search before you start a task: a recorded failure saves you from repeating it.",
    input: {
      query: optStr('words to look for'),
      kind: z.enum(['discovery', 'failure', 'bug', 'decision', 'note']).optional(),
      path: optStr('path prefix'),
      tag: optStr('tag'),
      limit: z.number().int().min(1).max(1000).optional()
    },
    run: async (a, args) =>
      await a.call((c: AgencyClient) => c.searchFindings, {
        query: args.query ?? '',
        kind: args.kind ?? '',
        pathPrefix: args.path ?? '',
        tag: args.tag ?? '',
        author: '',
        since: 0,
        until: 0,
        limit: args.limit ?? 20
      })
  }),
  tool({
    name: 'request_review',
    description: 'Ask peers to review a commit, branch or task.',
    input: { target: str('commit, branch or task'), reviewers: strList('peer ids or names to ask'), note: optStr('what to look at') },
    run: async (a, args) =>
      (await a.call((c: AgencyClient) => c.requestReview, { target: args.target, reviewers: args.reviewers ?? [], note: args.note ?? '' }))
        .review
  }),
  tool({
    name: 'verdict',
    description: 'Give a review verdict: approve, reject, or retract an earlier approval (with evidence such as a counterexample).',
    input: { target: str('commit, branch or task'), verdict: z.enum(['approve', 'reject', 'retract']), evidence: optStr('why') },
    run: async (a, args) =>
      (await a.call((c: AgencyClient) => c.submitVerdict, { target: args.target, verdict: args.verdict, evidence: args.evidence ?? '' }))
        .review
  }),
  tool({
    name: 'experts',
    description: 'Peers ranked by the done tasks and integrations that touched a path: who to ask about it.',
    input: { path: str('path or glob'), limit: z.number().int().min(1).max(100).optional() },
    run: async (a, args) => await a.call((c: AgencyClient) => c.experts, { path: args.path, limit: args.limit ?? 10 })
  }),
  tool({
    name: 'integrate',
    description:
      "Merge your task branch into the shared branch: fetch, merge, run the goal's tests, push only if they pass. On a conflict or failing tests nothing is pushed, you get the files or the failing summary, and a failure finding is recorded.",
    input: {
      task: optStr('task id (default: the task you hold)'),
      message: optStr('merge commit message'),
      background: z
        .boolean()
        .optional()
        .describe(
          'answer at once (result "accepted"): your daemon writes an integration request for the task you hold, integrates it itself and marks it done when it lands. Go on with claim (no task); an integration notice tells you if it did not land, and claim then returns that task first. An integrator serving the swarm may land the request first: then it answers it, as for request_integration'
        )
    },
    run: async (a, args) =>
      await a.call(
        (c: AgencyClient) => c.integrate,
        { task: args.task ?? '', message: args.message ?? '', background: args.background ?? false },
        30 * 60_000
      )
  }),
  tool({
    name: 'request_integration',
    description:
      "While a peer has announced it is the integrator: hand it your work instead of integrate. Pushes your branch (of the task you hold, or of the task you assist) to refs/agency/<you>/<task> and asks the integrator to land it at the holder's epoch; it merges requests in batches, tests them and lands the good ones. A holder does not wait for it: it goes on with claim (no task) and keeps the task until it lands, when its daemon marks it done; an assistant waits: one whose request lands first finishes the task (its daemon marks it done) and the holder is told. Your inbox gets an integration notice when it landed or why not; when it did not, go back to that task first (claim with no task returns it). Refused, with nothing pushed, when the task is done already, moved to another epoch, you no longer assist it, or your assist branch has no commits of its own.",
    input: { task: optStr('task id (default: the task you hold, or the one you assist)') },
    run: async (a, args) => await a.call((c: AgencyClient) => c.requestIntegration, { task: args.task ?? '' }, 10 * 60_000)
  })
]
