// agency assist: when nothing is ready, help a task a peer holds on the
// critical path with an approach of your own (docs/assist.md).
import type { Command } from 'commander'
import { command, withAgency, printJson, line, short, type CommonOpts } from '../output.js'
import type { AgencyClient, AssistReply } from '../../gen/agency/v1/api.js'

/** The lines an assist answer prints: what it is about, the approaches to avoid, what to do next. */
export function assistLines(r: AssistReply): string[] {
  const out: string[] = []
  if (r.task !== '') {
    out.push(
      `${r.outcome} ${r.task}@${r.epoch}, held by ${short(r.holder)} for ${Math.round(r.heldMs / 60_000)} min; ${r.chain} task(s) wait on it; ${r.assistants} of ${r.budget} assistant(s)`
    )
  } else {
    out.push(r.outcome)
  }
  for (const a of r.approaches) {
    const state = a.kind === 'failure' ? 'failed' : a.ended ? 'tried' : 'in progress'
    out.push(`  ${state.padEnd(11)} ${short(a.author)}: ${a.text}${a.learned !== '' ? ` — learned: ${a.learned}` : ''}`)
  }
  if (r.workspace !== '') out.push(r.workspace)
  if (r.text !== '') out.push(r.text)
  return out
}

export function registerAssistCommand(program: Command): void {
  command(
    program,
    'assist',
    'nothing ready and you hold nothing? help a task a peer holds on the critical path, with an approach nobody has announced or tried; without --approach it only shows the task and the approaches to avoid'
  )
    .option('--task <task>', 'the task to assist (default: your daemon picks the held task on the critical path)')
    .option(
      '--approach <text>',
      'the approach you will try: announced to everyone, so nobody tries it twice; your workspace is put on a branch of your own'
    )
    .option('--stop <learned>', 'end your assist, recording what you learned (do it when told the task is done, or when you give up)')
    .action(
      withAgency(async (agency, opts: CommonOpts & { task?: string; approach?: string; stop?: string }) => {
        if (opts.stop !== undefined && (opts.task !== undefined || opts.approach !== undefined))
          throw new Error('--stop ends your assist: give it alone')
        if (opts.approach !== undefined && opts.approach.trim() === '')
          throw new Error('--approach needs the approach: a sentence on how you will do it, unlike the approaches listed')
        if (opts.stop !== undefined && opts.stop.trim() === '')
          throw new Error('--stop needs what you learned: what worked, what did not, and why')
        const res = await agency.call((c: AgencyClient) => c.assist, {
          task: opts.task ?? '',
          approach: opts.approach ?? '',
          stop: opts.stop ?? ''
        })
        if (opts.json === true) {
          printJson(res)
          return
        }
        for (const l of assistLines(res)) line(l)
        if (res.outcome === 'NONE') process.exitCode = 4
      })
    )
}
