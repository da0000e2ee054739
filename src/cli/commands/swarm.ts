// agency swarm up | down
import type { Command } from 'commander'
import { fail, line } from '../output.js'
import { swarmDown, swarmUp } from '../../swarm/swarm.js'

export function registerSwarmCommands (program: Command): void {
  const swarm = program.command('swarm').description('run a local swarm: N agentd processes wired to each other, each with an agent harness')
  swarm.command('up')
    .description('start N local agentd processes on one shared repository, with a live progress view (Ctrl-C leaves the swarm running; `agency swarm down` stops it)')
    .option('-n, --agents <n>', 'how many agents', '4')
    .option('--repo <path-or-url>', 'the shared repository (default: <dir>/repo.git, created from --example)')
    .option('--example <name>', 'an example project from examples/: seeds the repository and puts its goal and tasks on the board')
    .option('--harness <name>', 'claude, codex, copilot, gemini, aider, sim, or cmd:"..."', 'sim')
    .option('--dir <dir>', 'where the swarm keeps its data dirs, logs and state', '.agency-swarm')
    .option('--swarm <name>', 'swarm name', 'local')
    .option('--down-when-done', 'stop every daemon once all tasks are done and the tests pass')
    .option('--timeout <seconds>', 'stop watching after this long (0: never)', '0')
    .action(async (opts: { agents: string, repo?: string, example?: string, harness: string, dir: string, swarm: string, downWhenDone?: boolean, timeout: string }) => {
      try {
        const n = Number(opts.agents)
        const example = opts.example ?? (opts.repo == null ? 'calc' : undefined)
        let stopping = false
        process.once('SIGINT', () => {
          if (stopping) return
          stopping = true
          line(`\nleaving the swarm running; stop it with: agency swarm down --dir ${opts.dir}`)
          process.exit(0)
        })
        const { finished } = await swarmUp({ n, dir: opts.dir, repo: opts.repo, example, harness: opts.harness, swarm: opts.swarm, downWhenDone: opts.downWhenDone === true, timeoutMs: Number(opts.timeout) * 1000, progress: line })
        line(finished ? 'the goal is met: every task is done and every test passes' : 'stopped watching before the goal was met')
        if (!finished) process.exitCode = 4
        else if (opts.downWhenDone !== true) line(`the swarm is still running; stop it with: agency swarm down --dir ${opts.dir}`)
      } catch (err) {
        fail(err)
      }
    })
  swarm.command('down')
    .description('stop the local swarm started by `agency swarm up`')
    .option('--dir <dir>', 'the swarm\'s directory', '.agency-swarm')
    .action(async (opts: { dir: string }) => {
      try {
        const n = await swarmDown(opts.dir)
        line(`stopped ${n} daemons`)
      } catch (err) {
        fail(err)
      }
    })
}
