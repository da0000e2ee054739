// The coordination tools an agent harness sees over MCP. Each tool validates
// its input with a schema and calls the daemon's gRPC API; a daemon error
// comes back as an MCP tool error that says what was wrong.
import { z } from 'zod'
import type { AgencyClient } from '../gen/agency/v1/api.js'
import { ClaimOutcome } from '../gen/agency/v1/api.js'
import type { Agency } from '../api/client.js'

export interface ToolDef {
  name: string
  description: string
  input: z.ZodRawShape
  run: (agency: Agency, args: any) => Promise<unknown>
}

const str = (d: string) => z.string().describe(d)
const optStr = (d: string) => z.string().optional().describe(d)
const strList = (d: string) => z.array(z.string()).optional().describe(d)

const outcomeName = (o: ClaimOutcome): string => o === ClaimOutcome.CLAIM_HELD ? 'HELD' : o === ClaimOutcome.CLAIM_LOST ? 'LOST' : 'PENDING'

export const TOOLS: ToolDef[] = [
  {
    name: 'status',
    description: 'The swarm at a glance: the goal, tasks by state and their holders, live peers and their status lines, inbox and log counts, the latest test pass rate. Optionally set your own status line first.',
    input: { set_status: optStr('your status line ("what I am doing"), shown to peers') },
    run: async (a, args) => {
      if (args.set_status != null) await a.call((c: AgencyClient) => c.setStatusLine, { status: args.set_status })
      return await a.call((c: AgencyClient) => c.getStatus, {})
    }
  },
  {
    name: 'ready',
    description: 'Tasks you can claim now: open or expired, with all dependencies done, highest priority first.',
    input: {},
    run: async (a) => (await a.call((c: AgencyClient) => c.ready, {})).tasks
  },
  {
    name: 'add_task',
    description: 'Add a task to the shared board.',
    input: {
      id: str('slug: lowercase letters, digits and dashes'),
      title: optStr('short title'),
      description: optStr('what is to be done'),
      deps: strList('ids of tasks that must be done first'),
      scope: strList('globs of the paths the task will touch'),
      priority: z.number().int().optional().describe('higher first')
    },
    run: async (a, args) => (await a.call((c: AgencyClient) => c.addTask, { id: args.id, title: args.title ?? '', description: args.description ?? '', deps: args.deps ?? [], scope: args.scope ?? [], priority: args.priority ?? 0 })).task
  },
  {
    name: 'claim',
    description: 'Claim a task and announce the paths you will touch. Answers HELD (it is yours) or LOST (naming the winner) after the settle window. On a takeover the previous holder\'s branch and hand-off notes come back.',
    input: { task: str('task id'), scope: strList('globs of the paths you will touch (default: the task\'s scope hints)') },
    run: async (a, args) => {
      const r = await a.call((c: AgencyClient) => c.claim, { task: args.task, scope: args.scope ?? [], noWait: false }, 60_000)
      return { ...r, outcome: outcomeName(r.outcome) }
    }
  },
  {
    name: 'release',
    description: 'Give a task back, with hand-off notes (what was tried, what is left) for whoever takes it next.',
    input: { task: str('task id'), note: optStr('hand-off notes'), branch: optStr('branch with the work so far') },
    run: async (a, args) => (await a.call((c: AgencyClient) => c.release, { task: args.task, note: args.note ?? '', branch: args.branch ?? '' })).task
  },
  {
    name: 'done',
    description: 'Mark a task you hold as done, naming the commit and the paths it touched.',
    input: { task: str('task id'), commit: optStr('commit sha'), paths: strList('paths the work touched') },
    run: async (a, args) => (await a.call((c: AgencyClient) => c.done, { task: args.task, commit: args.commit ?? '', paths: args.paths ?? [] })).task
  },
  {
    name: 'send_message',
    description: 'Send a direct message to one peer (peer id or name). Delivered exactly once, retried while the peer is away.',
    input: { to: str('peer id or name'), text: str('the message'), thread: optStr('thread id to continue'), reply_to: optStr('id of the message this answers') },
    run: async (a, args) => await a.call((c: AgencyClient) => c.sendMessage, { to: args.to, text: args.text, thread: args.thread ?? '', replyTo: args.reply_to ?? '' })
  },
  {
    name: 'read_inbox',
    description: 'Direct messages you received, after a cursor (pass the last cursor you saw to get only new ones).',
    input: { after: z.number().int().min(0).optional().describe('cursor of the last message already read'), limit: z.number().int().min(1).max(1000).optional() },
    run: async (a, args) => (await a.call((c: AgencyClient) => c.readInbox, { after: args.after ?? 0, limit: args.limit ?? 100 })).messages
  },
  {
    name: 'announce',
    description: 'Broadcast a short message to the whole swarm.',
    input: { text: str('the announcement') },
    run: async (a, args) => await a.call((c: AgencyClient) => c.announce, { text: args.text })
  },
  {
    name: 'record_finding',
    description: 'Record what you learned in the shared record so nobody repeats it: a discovery, a failed approach (kind "failure"), a bug, an interface decision, or a note.',
    input: {
      kind: z.enum(['discovery', 'failure', 'bug', 'decision', 'note']).describe('what sort of finding'),
      text: str('what was learned; for a failure, what was tried and why it failed'),
      paths: strList('paths it is about'),
      tags: strList('tags'),
      supersedes: optStr('id of an earlier finding this one replaces')
    },
    run: async (a, args) => (await a.call((c: AgencyClient) => c.recordFinding, { kind: args.kind, text: args.text, paths: args.paths ?? [], tags: args.tags ?? [], refs: [], supersedes: args.supersedes ?? '' })).entry
  },
  {
    name: 'search_findings',
    description: 'Full-text search over every peer\'s findings. Search before you start a task: a recorded failure saves you from repeating it.',
    input: { query: optStr('words to look for'), kind: z.enum(['discovery', 'failure', 'bug', 'decision', 'note']).optional(), path: optStr('path prefix'), tag: optStr('tag'), limit: z.number().int().min(1).max(1000).optional() },
    run: async (a, args) => (await a.call((c: AgencyClient) => c.searchFindings, { query: args.query ?? '', kind: args.kind ?? '', pathPrefix: args.path ?? '', tag: args.tag ?? '', author: '', since: 0, until: 0, limit: args.limit ?? 20 })).hits
  },
  {
    name: 'request_review',
    description: 'Ask peers to review a commit, branch or task.',
    input: { target: str('commit, branch or task'), reviewers: strList('peer ids or names to ask'), note: optStr('what to look at') },
    run: async (a, args) => (await a.call((c: AgencyClient) => c.requestReview, { target: args.target, reviewers: args.reviewers ?? [], note: args.note ?? '' })).review
  },
  {
    name: 'verdict',
    description: 'Give a review verdict: approve, reject, or retract an earlier approval (with evidence such as a counterexample).',
    input: { target: str('commit, branch or task'), verdict: z.enum(['approve', 'reject', 'retract']), evidence: optStr('why') },
    run: async (a, args) => (await a.call((c: AgencyClient) => c.submitVerdict, { target: args.target, verdict: args.verdict, evidence: args.evidence ?? '' })).review
  },
  {
    name: 'experts',
    description: 'Peers ranked by the done tasks and integrations that touched a path: who to ask about it.',
    input: { path: str('path or glob'), limit: z.number().int().min(1).max(100).optional() },
    run: async (a, args) => (await a.call((c: AgencyClient) => c.experts, { path: args.path, limit: args.limit ?? 10 })).experts
  },
  {
    name: 'integrate',
    description: 'Merge your task branch into the shared branch: fetch, merge, run the goal\'s tests, push only if they pass. On a conflict or failing tests nothing is pushed, you get the files or the failing summary, and a failure finding is recorded.',
    input: { task: optStr('task id (default: the task you hold)'), message: optStr('merge commit message') },
    run: async (a, args) => await a.call((c: AgencyClient) => c.integrate, { task: args.task ?? '', message: args.message ?? '' }, 30 * 60_000)
  }
]
