// agency operator keygen | operator actions | pause | resume | broadcast |
// approvals | approve | deny | task cancel | task priority: the operator's
// commands (docs/operator.md). Each action is signed here with the operator's
// key; the daemon only carries it.
import { Option, type Command } from 'commander'
import type { Agency } from '../../client/agency.js'
import type { AgencyClient, ApprovalInfo, OperatorActionInfo } from '../../gen/agency/v1/api.js'
import { durationFlag } from '../duration.js'
import { writeOperatorKey } from '../operator-key.js'
import { requireOperator, submitAction } from '../operator-client.js'
import { command, fail, line, printJson, short, withAgency, type CommonOpts } from '../output.js'

/** How long a paused holder's leases are kept by default: long enough for a pause over lunch. */
export const DEFAULT_PAUSE_LEASE_MS = 60 * 60_000

function actionLine(a: OperatorActionInfo): string {
  const when = a.time > 0 ? new Date(a.time).toISOString() : '-'
  return `${when} ${a.verdict.padEnd(13)} ${a.summary}  (signed ${a.operator !== '' ? short(a.operator) : '?'}, carried by ${short(a.carrier)})`
}

function approvalLine(a: ApprovalInfo): string {
  const who = a.agentName !== '' ? a.agentName : short(a.agent)
  const left = a.state === 'pending' && a.expiresAt > 0 ? `, denied unanswered at ${new Date(a.expiresAt).toISOString()}` : ''
  const by = a.answeredBy !== '' ? ` by ${short(a.answeredBy)}` : ''
  return `${a.id}  ${a.state}${by}  ${who} asks: ${a.title} [needs ${a.grant}]${a.task !== '' ? ` (task ${a.task})` : ''}${left}`
}

/** Prints the audit: every carried operator action and what it came to. */
export async function printOperatorActions(agency: Agency, opts: CommonOpts): Promise<void> {
  const r = await agency.call((c: AgencyClient) => c.listOperatorActions, {})
  if (opts.json === true) {
    printJson(r)
    return
  }
  line(
    r.operators.length === 0
      ? 'operators: none (any member may set the goal)'
      : `operators (${r.source === 'goal' ? 'from the first goal' : 'configured'}): ${r.operators.join(', ')}`
  )
  if (r.actions.length === 0) line('no operator actions')
  for (const a of r.actions) line(actionLine(a))
  for (const x of r.refusals) line(`refused: ${x.count} from ${x.author} (operator actions it could not make)`)
}

export function registerOperatorCommands(program: Command): void {
  const operator = program
    .command('operator')
    .description(
      "the swarm's operator: a person's key that alone may change the goal, pause, resume and answer approvals (docs/operator.md)"
    )
  operator
    .command('keygen')
    .description(
      'make an operator key pair: the private key in FILE (mode 0600; keep it where no agent can read it), the public key printed on the last line; start every agentd with --operator <public key>'
    )
    .requiredOption('--out <file>', 'where to write the private key')
    .option('--force', 'overwrite an existing file')
    .action(async (opts: { out: string; force?: boolean }) => {
      try {
        const key = await writeOperatorKey(opts.out, opts.force === true)
        line(
          `wrote the operator key to ${opts.out}; start every agentd of the swarm with --operator ${key}, and sign with agency --operator-key ${opts.out}`
        )
        line(key)
      } catch (err) {
        fail(err)
      }
    })
  command(
    operator,
    'actions',
    'every operator action the log carries, who signed and who carried it, and whether it counts (the same as agency log --kind operator)'
  ).action(
    withAgency(async (agency, opts: CommonOpts) => {
      await printOperatorActions(agency, opts)
    })
  )

  command(
    program,
    'pause',
    "as the operator: pause the swarm; no new harness run or turn starts, running ones finish their step and push their work to the wip ref, and the holders' leases are kept"
  )
    .argument('[reason...]', 'why, shown to every agent')
    .addOption(
      new Option('--keep-leases <duration>', 'how long the holders keep their tasks while paused')
        .argParser(durationFlag('--keep-leases'))
        .default(DEFAULT_PAUSE_LEASE_MS, '1h')
    )
    .action(
      withAgency(async (agency, reason: string[], opts: CommonOpts & { keepLeases: number }) => {
        const signer = await requireOperator(opts, 'pausing the swarm')
        const r = await submitAction(agency, signer, { kind: 'pause', text: reason.join(' '), leaseKeepMs: opts.keepLeases })
        if (opts.json === true) printJson(r)
        else line(`paused (${r.entryId.slice(0, 12)}); agency resume to go on`)
      })
    )
  command(program, 'resume', 'as the operator: resume a paused swarm').action(
    withAgency(async (agency, opts: CommonOpts) => {
      const signer = await requireOperator(opts, 'resuming the swarm')
      const r = await submitAction(agency, signer, { kind: 'resume' })
      if (opts.json === true) printJson(r)
      else line(`resumed (${r.entryId.slice(0, 12)})`)
    })
  )
  command(program, 'broadcast', 'as the operator: a message to every agent, first in their inboxes and pushed into running sessions')
    .argument('<text...>')
    .action(
      withAgency(async (agency, text: string[], opts: CommonOpts) => {
        const signer = await requireOperator(opts, 'a broadcast')
        const r = await submitAction(agency, signer, { kind: 'message', text: text.join(' ') })
        if (opts.json === true) printJson(r)
        else line(`sent to every agent (${r.entryId.slice(0, 12)})`)
      })
    )

  command(program, 'approvals', "agents' permission requests waiting for the operator (--acp-permissions ask), from every daemon")
    .option('--all', 'answered, timed-out and withdrawn ones too')
    .action(
      withAgency(async (agency, opts: CommonOpts & { all?: boolean }) => {
        const { approvals } = await agency.call((c: AgencyClient) => c.listApprovals, { all: opts.all === true })
        if (opts.json === true) {
          printJson(approvals)
          return
        }
        if (approvals.length === 0) line(opts.all === true ? 'no approval requests' : 'nothing waits for approval')
        for (const a of approvals) line(approvalLine(a))
      })
    )
  for (const allow of [true, false]) {
    const c = command(
      program,
      allow ? 'approve' : 'deny',
      `as the operator: ${allow ? 'approve' : 'deny'} an agent's permission request (agency approvals lists them)`
    ).argument('<id>', 'the request id')
    if (allow) c.option('--always', 'and let that agent do the same again without asking')
    c.action(
      withAgency(async (agency, id: string, opts: CommonOpts & { always?: boolean }) => {
        const signer = await requireOperator(opts, allow ? 'approving' : 'denying')
        const { approvals } = await agency.call((cl: AgencyClient) => cl.listApprovals, { all: true })
        const found = approvals.find(a => a.id === id)
        if (found === undefined) throw new Error(`no approval request ${JSON.stringify(id)} (agency approvals lists them)`)
        if (found.state !== 'pending') throw new Error(`approval request ${id} is ${found.state} already`)
        const r = await submitAction(agency, signer, { kind: 'approval', request: id, allow, always: opts.always === true })
        if (opts.json === true) printJson(r)
        else line(`${allow ? 'approved' : 'denied'} ${id}${opts.always === true ? ' (always)' : ''}`)
      })
    )
  }

  const task = program.commands.find(c => c.name() === 'task') ?? program.command('task')
  command(task, 'cancel', 'as the operator: cancel a task; nobody is to work on it, and the goal is met without it')
    .argument('<id>')
    .argument('[reason...]')
    .action(
      withAgency(async (agency, id: string, reason: string[], opts: CommonOpts) => {
        const signer = await requireOperator(opts, 'cancelling a task')
        const r = await submitAction(agency, signer, { kind: 'task_cancel', task: { id }, text: reason.join(' ') })
        if (opts.json === true) printJson(r)
        else line(`cancelled ${id}`)
      })
    )
  command(task, 'priority', "as the operator: set a task's priority (higher first)")
    .argument('<id>')
    .argument('<priority>')
    .action(
      withAgency(async (agency, id: string, priority: string, opts: CommonOpts) => {
        const n = Number(priority)
        if (!Number.isSafeInteger(n) || Math.abs(n) > 2 ** 31 - 1) throw new Error(`the priority must be a whole number, got "${priority}"`)
        const signer = await requireOperator(opts, 'reprioritising a task')
        const r = await submitAction(agency, signer, { kind: 'task_priority', task: { id, priority: n } })
        if (opts.json === true) printJson(r)
        else line(`task ${id} priority ${n}`)
      })
    )
}
