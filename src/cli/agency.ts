#!/usr/bin/env node
import '../polyfill.js'
import { Command, Option } from 'commander'
import { VERSION } from '../version.js'
import { registerMeshCommands } from './commands/mesh.js'
import { registerLogCommands } from './commands/log.js'
import { registerBoardCommands } from './commands/board.js'
import { registerAssistCommand } from './commands/assist.js'
import { registerRepoCommands } from './commands/repo.js'
import { registerSwarmCommands } from './commands/swarm.js'
import { registerKeygenCommand } from './commands/keygen.js'
import { registerExperimentCommands } from './commands/experiment.js'
import { registerOperatorCommands } from './commands/operator.js'
import { registerMemberCommands } from './commands/members.js'
import { registerSpendCommands } from './commands/spend.js'
import { fail } from './output.js'
import { runMcpServer } from '../mcp/server.js'

const program = new Command('agency')
  .description(
    "Talk to your agentd: the swarm's board, messages and shared record.\nThe daemon is found at --addr, or AGENCY_ADDR, or the unix socket agentd.sock in\nAGENCY_DATA_DIR (default ~/.agency), where agentd serves by default."
  )
  .version(VERSION)
  // The options every command takes, also before the command: `agency --addr X status`.
  .addOption(new Option('--json', 'print machine-readable JSON'))
  .addOption(
    new Option(
      '--addr <addr>',
      "the daemon's gRPC address (default: AGENCY_ADDR, else the socket agentd.sock in AGENCY_DATA_DIR or ~/.agency)"
    )
  )
  .addOption(new Option('--token-file <file>', "the daemon's API token, when it requires one (or set AGENCY_TOKEN / AGENCY_TOKEN_FILE)"))
  .addOption(
    new Option('--operator-key <file>', "act as the swarm's operator, signing with this key (or set AGENCY_OPERATOR_KEY; docs/operator.md)")
  )
  .configureHelp({ showGlobalOptions: true })

// The root parses its options wherever they stand (`agency status --json` too),
// so a subcommand never sees them in its own opts. Hand them to the command
// about to run, so every action reads `opts.json` alike.
program.hook('preAction', (root, actionCommand) => {
  for (const [name, value] of Object.entries(root.opts())) {
    if (actionCommand.getOptionValue(name) === undefined) actionCommand.setOptionValue(name, value)
  }
})

// `agency status | head -1`: a reader that goes away is not an error.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(0)
    throw err
  })
}

registerMeshCommands(program)
registerLogCommands(program)
registerBoardCommands(program)
registerAssistCommand(program)
registerRepoCommands(program)
registerSwarmCommands(program)
registerKeygenCommand(program)
registerExperimentCommands(program)
registerOperatorCommands(program)
registerMemberCommands(program)
registerSpendCommands(program)

program
  .command('mcp')
  .description(
    'serve the coordination tools of your agentd over MCP on stdio (for agent harnesses); logs go to stderr. A daemon that requires an API token gets it from AGENCY_TOKEN or AGENCY_TOKEN_FILE'
  )
  .action(async (opts: { addr?: string }) => {
    await runMcpServer(opts.addr)
  })

program.parseAsync(process.argv).catch(fail)
