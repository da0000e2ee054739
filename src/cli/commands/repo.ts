// agency integrate | integrator | tests | workspace
import type { Command } from 'commander'
import { command, withAgency, printJson, line, short, type CommonOpts } from '../output.js'
import type { AgencyClient, IntegrateReply } from '../../gen/agency/v1/api.js'

function integrateLines(r: IntegrateReply): string[] {
  const tests = r.tests != null ? ` (tests: ${r.tests.passed} passed, ${r.tests.failed} failed of ${r.tests.total})` : ''
  switch (r.result) {
    case 'merged':
      return [`merged ${r.commit.slice(0, 12)} after ${r.attempts} attempt(s)${tests}`]
    case 'accepted':
      return [r.summary]
    case 'conflict':
      return [`CONFLICT: nothing pushed; conflicting files: ${r.conflicts.join(', ')}`, `recorded finding ${r.findingId}`]
    case 'failed':
      return [`TESTS FAILED: nothing pushed${tests}`, r.summary, `recorded finding ${r.findingId}`]
    default:
      return [`${r.result}: ${r.summary}`]
  }
}

export function registerRepoCommands(program: Command): void {
  command(program, 'integrate', 'merge your task branch into the shared branch: fetch, merge, run the tests, push only when they pass')
    .option('--task <task>', 'the task (default: the one you hold)', '')
    .option('--message <text>', 'merge commit message', '')
    .option(
      '--background',
      'answer at once and go on with agency claim --next: your daemon integrates the task and marks it done when it lands, and a notice tells you if it did not. With no integrator serving the swarm it writes an integration request for the task (as request-integration does) and integrates it itself; while one serves, it runs the tests on the merge first and requests integration only once they pass, and the integrator lands it'
    )
    .action(
      withAgency(async (agency, opts: CommonOpts & { task: string; message: string; background?: boolean }) => {
        const r = await agency.call(
          (c: AgencyClient) => c.integrate,
          { task: opts.task, message: opts.message, background: opts.background === true },
          60 * 60_000
        )
        if (opts.json === true) printJson(r)
        else for (const l of integrateLines(r)) line(l)
        if (r.result !== 'merged' && r.result !== 'accepted') process.exitCode = 4
      })
    )

  command(
    program,
    'request-integration',
    'push your task branch (or your assist branch) to refs/agency/<you>/<task> and ask an integrator to land it'
  )
    .option('--task <task>', 'the task (default: the one you hold, or the one you assist)', '')
    .action(
      withAgency(async (agency, opts: CommonOpts & { task: string }) => {
        const r = await agency.call((c: AgencyClient) => c.requestIntegration, { task: opts.task }, 10 * 60_000)
        if (opts.json === true) printJson(r)
        else
          line(
            `requested ${r.ref} at ${r.commit.slice(0, 12)} (entry ${r.entryId.slice(0, 12)}); as its holder, go on with agency claim --next (your daemon marks the task done when it lands); as an assistant, agency wait. A notice says if it did not land`
          )
      })
    )

  command(
    program,
    'integrator',
    'act as an integrator: take integration requests in log order, batch the ones that merge, verify once, bisect failures, land the good ones'
  )
    .option('--batch <n>', 'requests per batch', '32')
    .option('--once', 'run one batch and exit')
    .option('--interval-ms <ms>', 'pause between rounds when idle', '2000')
    .action(
      withAgency(async (agency, opts: CommonOpts & { batch: string; once?: boolean; intervalMs: string }) => {
        while (true) {
          const r = await agency.call((c: AgencyClient) => c.runIntegrator, { maxBatch: Number(opts.batch) }, 60 * 60_000)
          const did = r.landed.length + r.conflicts.length + r.failed.length
          if (opts.json === true) {
            if (did > 0 || opts.once === true) process.stdout.write(JSON.stringify(r) + '\n')
          } else if (did > 0) {
            line(
              `landed ${r.landed.join(', ') || 'none'}${r.commit !== '' ? ` at ${r.commit.slice(0, 12)}` : ''}; conflicts ${r.conflicts.join(', ') || 'none'}; failed ${r.failed.join(', ') || 'none'}; ${r.pending} pending`
            )
          } else if (opts.once === true) line(`nothing to integrate; ${r.pending} pending`)
          if (opts.once === true) return
          if (did === 0) await new Promise(resolve => setTimeout(resolve, Number(opts.intervalMs)))
        }
      })
    )

  command(program, 'tests', 'test runs on the shared branch and its pass rate over time')
    .option('--limit <n>', 'the most recent n runs', '20')
    .action(
      withAgency(async (agency, opts: CommonOpts & { limit: string }) => {
        const r = await agency.call((c: AgencyClient) => c.listTestRuns, { limit: Number(opts.limit) })
        if (opts.json === true) {
          printJson(r)
          return
        }
        if (r.runs.length === 0) {
          line('no test runs recorded yet')
          return
        }
        for (const t of r.runs)
          line(
            `${new Date(t.time).toISOString()} ${t.commit.slice(0, 12)} ${t.passed}/${t.total} passed (${Math.round(t.passRate * 100)}%), ${t.failed} failed, by ${short(t.author)}`
          )
        if (r.latest != null) line(`pass rate now: ${Math.round(r.latest.passRate * 100)}%`)
      })
    )

  command(program, 'workspace', 'where your clone of the shared repository is; with a task, switch to its branch agency/<you>/<task>')
    .argument('[task]')
    .action(
      withAgency(async (agency, task: string | undefined, opts: CommonOpts) => {
        const r = await agency.call((c: AgencyClient) => c.getWorkspace, { task: task ?? '' }, 5 * 60_000)
        if (opts.json === true) {
          printJson(r)
          return
        }
        line(`${r.path}  (shared ${r.remote} ${r.branch})${r.taskBranch !== '' ? `\non branch ${r.taskBranch}` : ''}`)
      })
    )

  command(program, 'stop', "stop this agent's harness (the daemon keeps running)").action(
    withAgency(async (agency, opts: CommonOpts) => {
      const r = await agency.call((c: AgencyClient) => c.stopHarness, {})
      if (opts.json === true) printJson(r)
      else line(r.stopped ? 'harness stopped' : 'no harness was running')
    })
  )
}
