// agency swarm up | down | export
import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { Command } from 'commander'
import { fail, line } from '../output.js'
import { defaultSwarmDir, swarmDown, swarmNameFor, swarmUp, type SwarmState } from '../../swarm/swarm.js'
import { exportCommand, exportResult } from '../../swarm/shared-repo.js'
import { HARNESS_NAMES } from '../../harness/index.js'
import { createSandbox } from '../../sandbox/index.js'
import { parseDuration } from '../duration.js'
import { requireOperator, submitAction } from '../operator-client.js'

function swarmDirOf(opts: { dir?: string; swarm?: string; repo?: string; example?: string }): string {
  return opts.dir ?? defaultSwarmDir(opts.swarm ?? swarmNameFor(opts.repo, opts.example ?? 'local'))
}

const DEFAULT_UI = '127.0.0.1:7464'

export function registerSwarmCommands(program: Command): void {
  const swarm = program
    .command('swarm')
    .description('run a local swarm: N agents, each with its own daemon and harness, in a few agentd processes wired to each other')
  swarm
    .command('up')
    .description(
      'start N local agents (a few agents per agentd process) on one shared repository, with a live progress view (Ctrl-C leaves the swarm running; `agency swarm down` stops it).\nYour project: agency swarm up -n 4 --repo . --goal "<what to build>" --test "npm test" --harness claude'
    )
    .option('-n, --agents <n>', 'how many agents', '4')
    .option(
      '--repo <path-or-url>',
      "your repository: a working repository is copied (its current branch) into a bare shared repository in the swarm's directory and left untouched; a bare repository or URL is used as it is"
    )
    .option('--branch <name>', "the shared branch (default: the repository's current branch)")
    .option('--goal <text>', 'what the swarm is to build; the first agent to claim the plan task turns it into tasks')
    .option('--test <command>', 'the command whose passing tests mean the goal is met (required with --goal)')
    .option(
      '--example <name>',
      'an example project from examples/ instead: seeds the repository and puts its goal and tasks on the board (default without --repo: calc)'
    )
    .option('--harness <name>', HARNESS_NAMES.join(', '), 'sim')
    .option('--harness-run-timeout <duration>', 'kill and restart an agent run that goes on longer than this', '30m')
    .option(
      '--sandbox <mode>',
      'what each agent and its test runs run in: auto, bwrap, docker or none (docs/sandbox.md)',
      process.env.AGENCY_SANDBOX ?? 'auto'
    )
    .option('--sandbox-allow <hosts>', 'more hosts the agents may reach, comma-separated: host or host:port')
    .option('--dir <dir>', 'where the swarm keeps its data dirs, logs and state (default: ~/.agency/swarms/<name>)')
    .option('--swarm <name>', "swarm name (default: the repository's name)")
    .option('--down-when-done', 'stop every daemon once the goal is met')
    .option('--timeout <seconds>', 'stop watching after this long (0: never)', '0')
    .option(
      '--operator',
      'the swarm has an operator: the key of --operator-key (or AGENCY_OPERATOR_KEY) signs the goal, and every daemon obeys only it (docs/operator.md)'
    )
    .option(
      '--per-process <k>',
      'agents per agentd process (default: enough processes for every core, at most 32 agents each; 1: a process per agent)'
    )
    .option(
      '--ui [host:port]',
      "serve the live dashboard from the first agent's daemon (default 127.0.0.1:7464; a port of 0 picks a free one)"
    )
    .action(
      async (opts: {
        agents: string
        repo?: string
        branch?: string
        goal?: string
        test?: string
        example?: string
        harness: string
        harnessRunTimeout: string
        dir?: string
        swarm?: string
        downWhenDone?: boolean
        timeout: string
        ui?: string | boolean
        perProcess?: string
        sandbox: string
        sandboxAllow?: string
        operator?: boolean
        operatorKey?: string
      }) => {
        try {
          const n = Number(opts.agents)
          const perProcess = opts.perProcess != null ? Number(opts.perProcess) : undefined
          const operator = opts.operator === true ? await requireOperator(opts, 'a swarm with an operator') : undefined
          const example = opts.example ?? (opts.repo == null && opts.goal == null ? 'calc' : undefined)
          const name = opts.swarm ?? swarmNameFor(opts.repo, example ?? 'local')
          const dir = swarmDirOf({ ...opts, swarm: name, example })
          const runTimeout = parseDuration('--harness-run-timeout', opts.harnessRunTimeout)
          // Checked here, before any daemon starts: a bad mode or host, or a model-running harness with no box.
          const allow = opts.sandboxAllow != null ? [opts.sandboxAllow] : []
          createSandbox({ mode: opts.sandbox, allow, dataDir: dir }).admit(opts.harness)
          let stopping = false
          process.once('SIGINT', () => {
            if (stopping) return
            stopping = true
            line(`\nleaving the swarm running; stop it with: agency swarm down --dir ${dir}`)
            process.exit(0)
          })
          line(`swarm ${name} in ${dir}`)
          const { finished, state } = await swarmUp({
            n,
            dir,
            repo: opts.repo,
            branch: opts.branch,
            example,
            goal: opts.goal,
            testCommand: opts.test,
            harness: opts.harness,
            swarm: name,
            agentdArgs: [
              '--harness-run-timeout',
              String(runTimeout),
              '--sandbox',
              opts.sandbox,
              ...(opts.sandboxAllow != null ? ['--sandbox-allow', opts.sandboxAllow] : []),
              ...(operator != null ? ['--operator', operator.author] : [])
            ],
            setGoal:
              operator != null
                ? async (agency, goal) => {
                    await submitAction(agency, operator, { kind: 'goal', goal, operators: [operator.author] })
                  }
                : undefined,
            downWhenDone: opts.downWhenDone === true,
            timeoutMs: Number(opts.timeout) * 1000,
            perProcess,
            ui: opts.ui === true ? DEFAULT_UI : opts.ui === false ? undefined : opts.ui,
            progress: line
          })
          line(finished ? 'the goal is met: every task is done and the shared tests pass' : 'stopped watching before the goal was met')
          if (!finished) process.exitCode = 4
          else if (opts.downWhenDone !== true) line(`the swarm is still running; stop it with: agency swarm down --dir ${dir}`)
          if (state.source != null)
            line(
              `bring the result back: agency swarm export --dir ${dir}   (or: ${exportCommand({ remote: state.repo, branch: state.branch }, state.source, `agency/${name}`)})`
            )
        } catch (err) {
          fail(err)
        }
      }
    )
  swarm
    .command('down')
    .description('stop the local swarm started by `agency swarm up`')
    .option('--dir <dir>', "the swarm's directory (default: ~/.agency/swarms/<name>)")
    .option('--swarm <name>', "the swarm's name, to find its directory")
    .action(async (opts: { dir?: string; swarm?: string }) => {
      try {
        const n = await swarmDown(swarmDirOf(opts))
        line(`stopped ${n} daemons`)
      } catch (err) {
        fail(err)
      }
    })
  swarm
    .command('export')
    .description(
      "bring the swarm's shared branch back into your repository as a branch (your working tree and current branch are not touched)"
    )
    .option('--dir <dir>', "the swarm's directory (default: ~/.agency/swarms/<name>)")
    .option('--swarm <name>', "the swarm's name, to find its directory")
    .option('--to <repo>', 'the repository to export into (default: the one the swarm was started from)')
    .option('--branch <name>', 'the branch to create or update there (default: agency/<swarm name>)')
    .action(async (opts: { dir?: string; swarm?: string; to?: string; branch?: string }) => {
      try {
        const dir = swarmDirOf(opts)
        const file = join(dir, 'swarm-repo.json')
        if (!existsSync(file)) throw new Error(`no swarm in ${dir}: give --dir or --swarm`)
        const state = JSON.parse(await readFile(file, 'utf8')) as Pick<SwarmState, 'repo' | 'branch' | 'source'> & { name: string }
        const into = opts.to ?? state.source
        if (into == null) throw new Error('the swarm was not started from a working repository: give --to <repo>')
        const branch = await exportResult({ remote: state.repo, branch: state.branch }, into, opts.branch ?? `agency/${state.name}`)
        line(`the swarm's ${state.branch} is now branch ${branch} in ${into} (git -C ${into} log ${branch})`)
      } catch (err) {
        fail(err)
      }
    })
}
