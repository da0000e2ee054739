#!/usr/bin/env node
import '../polyfill.js'
import { Command, Option } from '@commander-js/extra-typings'
import { readFile } from 'node:fs/promises'
import { resolve } from 'node:path'
import { DEFAULTS, MAX_AGENTS_PER_PROCESS } from '../daemon/config.js'
import { defaultDataDir, defaultGrpcAddr } from '../addresses.js'
import { loadOrCreateApiToken } from '../daemon/api-token.js'
import { REMEMBERED_PEERS_MODES } from '../daemon/remembered-peers.js'
import { agentConfigs, serveAgents, type ServedHost } from './agent-host.js'
import { HARNESS_POLICY_DEFAULTS } from '../harness/policy.js'
import { parsePrices, type PriceTable } from '../harness/usage/prices.js'
import { ASSIST_DEFAULTS, DEFAULT_INTEGRATOR_WINDOW_MS, HANDOFF_DEFAULTS } from '../core/board/index.js'
import { durationFlag } from './duration.js'
import { VERSION } from '../version.js'
import { createSandbox, SANDBOX_MODES } from '../sandbox/index.js'
import { confineTestRuns } from '../repo/verify.js'
import { parseOperatorKeys } from '../core/operator/index.js'
import { DEFAULT_APPROVAL_TIMEOUT_MS } from '../daemon/approval-queue.js'
import { DEFAULT_BUDGET_KEEP_LEASES_MS } from '../daemon/spend-service.js'

function list(value: string, previous: string[] = []): string[] {
  return [
    ...previous,
    ...value
      .split(',')
      .map(s => s.trim())
      .filter(s => s !== '')
  ]
}

function positiveInt(name: string) {
  return (value: string): number => {
    const n = Number(value)
    if (!Number.isSafeInteger(n) || n <= 0) throw new Error(`${name} must be a positive whole number, got "${value}"`)
    return n
  }
}

function nonNegativeInt(name: string) {
  return (value: string): number => {
    const n = Number(value)
    if (value.trim() === '' || !Number.isSafeInteger(n) || n < 0)
      throw new Error(`${name} must be a whole number, 0 or more, got "${value}"`)
    return n
  }
}

function nonNegativeNumber(name: string) {
  return (value: string): number => {
    const n = Number(value)
    if (value.trim() === '' || !Number.isFinite(n) || n < 0) throw new Error(`${name} must be a number, 0 or more, got "${value}"`)
    return n
  }
}

const program = new Command('agentd')
  .description(
    "The agency daemon: runs beside one coding agent, joins the swarm's libp2p mesh, carries presence, direct messages and announcements, and serves the local gRPC API that `agency` and the agent use."
  )
  .version(VERSION)
  .addOption(
    new Option('--peers <multiaddrs>', 'bootstrap peers, comma-separated (repeatable); redialled with backoff')
      .env('AGENCY_PEERS')
      .argParser(list)
  )
  .addOption(new Option('--listen <multiaddrs>', 'libp2p listen addresses, comma-separated').env('AGENCY_LISTEN').argParser(list))
  .addOption(
    new Option('--announce <multiaddrs>', 'addresses to advertise to peers instead of the listen addresses (NAT, public IP)')
      .env('AGENCY_ANNOUNCE')
      .argParser(list)
  )
  .addOption(
    new Option('--data-dir <dir>', 'where the identity, the log and the messages are kept').env('AGENCY_DATA_DIR').default(defaultDataDir())
  )
  .addOption(new Option('--swarm <name>', 'swarm name: one gossip topic per swarm').env('AGENCY_SWARM').default(DEFAULTS.swarm))
  .addOption(new Option('--name <text>', "this agent's display name (default: the end of its peer id)").env('AGENCY_NAME'))
  .addOption(
    new Option('--grpc <addr>', 'gRPC API address: HOST:PORT or unix:PATH (default: unix:<data-dir>/agentd.sock, mode 0600)').env(
      'AGENCY_GRPC'
    )
  )
  .addOption(new Option('--metrics <addr>', 'serve /metrics and /healthz on HOST:PORT').env('AGENCY_METRICS'))
  .addOption(
    new Option('--ui <addr>', 'serve the live dashboard of the swarm on HOST:PORT (loopback; beyond it only with --api-token-file)').env(
      'AGENCY_UI'
    )
  )
  .addOption(
    new Option(
      '--heartbeat-ms <ms>',
      'presence heartbeat interval in a small swarm; it grows with the swarm so that --heartbeat-max-rate holds'
    )
      .env('AGENCY_HEARTBEAT_MS')
      .argParser(positiveInt('--heartbeat-ms'))
      .default(DEFAULTS.heartbeatMs)
  )
  .addOption(
    new Option(
      '--heartbeat-max-rate <n>',
      "heartbeats per second a daemon may receive from the whole swarm (each peer's timeout scales with the interval it announces)"
    )
      .env('AGENCY_HEARTBEAT_MAX_RATE')
      .argParser(positiveInt('--heartbeat-max-rate'))
      .default(16)
  )
  .addOption(
    new Option(
      '--live-timeout-ms <ms>',
      "a peer with no heartbeat for this long is not live (receiver's monotonic clock); scaled by the interval each peer announces"
    )
      .env('AGENCY_LIVE_TIMEOUT_MS')
      .argParser(positiveInt('--live-timeout-ms'))
      .default(DEFAULTS.liveTimeoutMs)
  )
  .addOption(
    new Option('--dm-ttl-ms <ms>', 'how long an undelivered direct message is retried')
      .env('AGENCY_DM_TTL_MS')
      .argParser(positiveInt('--dm-ttl-ms'))
      .default(DEFAULTS.dmTtlMs)
  )
  .addOption(
    new Option(
      '--repo <url-or-path>',
      'the shared git repository (path, file://, ssh or http); the daemon keeps a clone for this agent'
    ).env('AGENCY_REPO')
  )
  .addOption(new Option('--branch <name>', 'the shared branch').env('AGENCY_BRANCH').default('main'))
  .addOption(new Option('--workdir <dir>', "this agent's clone (default: <data-dir>/workspace)").env('AGENCY_WORKDIR'))
  .addOption(
    new Option('--verify <command>', "the test command run before every push (default: the goal's test command)").env('AGENCY_VERIFY')
  )
  .addOption(
    new Option('--mirror-dir <dir>', 'where clones on this host share git objects (default: ~/.agency/mirrors)').env('AGENCY_MIRROR_DIR')
  )
  .addOption(
    new Option(
      '--harness <name>',
      'run an agent beside the daemon: claude, codex, copilot, gemini, pi, aider, sim, or cmd:"<command>" (print mode: one prompt per run); acp:claude, acp:codex, acp:gemini, acp:copilot, acp:pi or acp:"<command>" (one persistent ACP session, the swarm pushed into it)'
    ).env('AGENCY_HARNESS')
  )
  .addOption(
    new Option(
      '--sandbox <mode>',
      'what confines the harness and every test run: auto (bubblewrap where it works), bwrap, docker, or none (nothing: only where something else is the boundary, such as a container); see docs/sandbox.md'
    )
      .env('AGENCY_SANDBOX')
      .choices([...SANDBOX_MODES])
      .default('auto')
  )
  .addOption(
    new Option(
      '--sandbox-allow <hosts>',
      'more hosts the harness may reach besides its model endpoints and base URLs, comma-separated (repeatable): host (ports 443 and 80) or host:port; loopback only as 127.0.0.1:<port>'
    )
      .env('AGENCY_SANDBOX_ALLOW')
      .argParser(list)
  )
  .addOption(
    new Option(
      '--sandbox-user <name>',
      'when agentd runs as root: the unprivileged user agents and test runs run as in their box (created as a system user when missing)'
    )
      .env('AGENCY_SANDBOX_USER')
      .default('agency')
  )
  .addOption(
    new Option(
      '--sandbox-hide <dirs>',
      "more directories no box sees into, comma-separated (repeatable): e.g. an experiment's task and output directories"
    )
      .env('AGENCY_SANDBOX_HIDE')
      .argParser(list)
  )
  .addOption(
    new Option(
      '--sandbox-run-only <file=path>',
      'a file each box may run but not read, bound execute-only at an absolute path in the box (repeatable): e.g. a reference executable'
    )
      .env('AGENCY_SANDBOX_RUN_ONLY')
      .argParser(list)
  )
  .addOption(
    new Option('--test-network <on|off>', 'whether test runs (integrate, verify, the integrator) may use the network')
      .env('AGENCY_TEST_NETWORK')
      .choices(['on', 'off'])
      .default('off')
  )
  .addOption(
    new Option(
      '--acp-permissions <grants>',
      "how an acp: harness's permission requests are answered: the grants allowed, comma-separated, from workspace (files in the workspace), agency (its MCP tools), shell, mcp (other MCP servers), fetch (the web), anywhere (files outside the workspace); or all"
    )
      .env('AGENCY_ACP_PERMISSIONS')
      .default('workspace,agency,shell')
  )
  .addOption(
    new Option(
      '--operator <keys>',
      "the operator keys, comma-separated (repeatable): only a person holding one may change the goal and its test command, pause, resume and answer approvals; without any, the keys the swarm's first goal carries, else none (docs/operator.md)"
    )
      .env('AGENCY_OPERATOR')
      .argParser(list)
  )
  .addOption(
    new Option(
      '--approval-timeout <duration>',
      'how long a permission request outside the grants (--acp-permissions ...,ask) waits for the operator before it is denied'
    )
      .env('AGENCY_APPROVAL_TIMEOUT')
      .argParser(durationFlag('--approval-timeout'))
      .default(DEFAULT_APPROVAL_TIMEOUT_MS, '10m')
  )
  .addOption(
    new Option(
      '--harness-run-timeout <duration>',
      'kill and restart a harness run that goes on longer than this (e.g. 30m; 0: no limit); with acp:, cancel and restart a session that sends nothing this long while agentd waits on it'
    )
      .env('AGENCY_HARNESS_RUN_TIMEOUT')
      .argParser(durationFlag('--harness-run-timeout'))
      .default(HARNESS_POLICY_DEFAULTS.runTimeoutMs, '30m')
  )
  .addOption(
    new Option(
      '--prices <file>',
      'dollars per million tokens by model, JSON (docs/spend.md), for CLIs that report tokens but no price; default: the built-in table, marked estimated'
    ).env('AGENCY_PRICES')
  )
  .addOption(
    new Option(
      '--provider-account <label>',
      'name the provider account this agent spends from (agents with the same one share rate limits); default: a hash of the provider, endpoint and key in the environment'
    ).env('AGENCY_PROVIDER_ACCOUNT')
  )
  .addOption(
    new Option(
      '--budget-keep-leases <duration>',
      'how long an agent held at the budget keeps its tasks before it gives them back (0: as long as the budget holds it)'
    )
      .env('AGENCY_BUDGET_KEEP_LEASES')
      .argParser(durationFlag('--budget-keep-leases'))
      .default(DEFAULT_BUDGET_KEEP_LEASES_MS, '1h')
  )
  .addOption(
    new Option(
      '--wip-push <duration>',
      "how often a held task's branch is pushed to refs/agency/wip/<task> on the shared remote, for a takeover after a crash (0: only on release)"
    )
      .env('AGENCY_WIP_PUSH')
      .argParser(durationFlag('--wip-push'))
      .default(3 * 60_000, '3m')
  )
  .addOption(
    new Option(
      '--integrator-window <duration>',
      "an agent seen answering another agent's integration request this recently, and live, serves as integrator: then agency integrate --background verifies the change before it requests integration"
    )
      .env('AGENCY_INTEGRATOR_WINDOW')
      .argParser(durationFlag('--integrator-window'))
      .default(DEFAULT_INTEGRATOR_WINDOW_MS, '15m')
  )
  .addOption(
    new Option(
      '--swarm-key <file>',
      'a private swarm: only daemons holding this pre-shared key can connect (make one with `agency keygen`)'
    ).env('AGENCY_SWARM_KEY')
  )
  .addOption(
    new Option(
      '--api-token-file <file>',
      'require this token (file contents) on every API call; a missing file is created with a new token (mode 0600); needed to serve --grpc beyond loopback'
    ).env('AGENCY_API_TOKEN_FILE')
  )
  .addOption(
    new Option('--allow-peers <ids>', 'only these peer ids may connect, comma-separated').env('AGENCY_ALLOW_PEERS').argParser(list)
  )
  .addOption(
    new Option(
      '--remembered-peers <on|off|forget>',
      'the peers of the last run: redialled at start and the connected ones remembered (on); neither, so a restart without --peers stays alone (off; the list is kept for a later on); or forgotten at start, then remembered anew (forget)'
    )
      .env('AGENCY_REMEMBERED_PEERS')
      .choices([...REMEMBERED_PEERS_MODES])
      .default('on')
  )
  .addOption(
    new Option(
      '--assist-budget <n>',
      'assistants per held task at most: idle agents that help a task on the critical path with their own approach (docs/assist.md)'
    )
      .env('AGENCY_ASSIST_BUDGET')
      .argParser(positiveInt('--assist-budget'))
      .default(2)
  )
  .addOption(
    new Option(
      '--assist-spare <n>',
      'places per held task beyond --assist-budget while more agents are free than assist places are left, so that every approach of a task can be tried at once (0: keep to the budget)'
    )
      .env('AGENCY_ASSIST_SPARE')
      .argParser(nonNegativeInt('--assist-spare'))
      .default(ASSIST_DEFAULTS.spare)
  )
  .addOption(
    new Option(
      '--findings-worker <on|off>',
      "build a first catch-up's findings index in a worker thread (about 15 % faster at 1M entries; the memory peaks about 110 MiB higher when it is taken back)"
    )
      .env('AGENCY_FINDINGS_WORKER')
      .choices(['on', 'off'])
      .default('off')
  )
  .addOption(
    new Option('--assist-after <duration>', 'a task is assisted only once held this long (0: as soon as it is held)')
      .env('AGENCY_ASSIST_AFTER')
      .argParser(durationFlag('--assist-after'))
      .default(ASSIST_DEFAULTS.floorMs, '0')
  )
  .addOption(
    new Option(
      '--handoff-factor <x>',
      'hand-off by speed (docs/handoff.md): a holder at its task longer than this many times the median claim-to-done time of the done tasks (and --handoff-after) hands it to a faster live peer, an assistant first (0: off)'
    )
      .env('AGENCY_HANDOFF_FACTOR')
      .argParser(nonNegativeNumber('--handoff-factor'))
      .default(HANDOFF_DEFAULTS.factor)
  )
  .addOption(
    new Option('--handoff-after <duration>', 'a task is handed off by speed only once held this long')
      .env('AGENCY_HANDOFF_AFTER')
      .argParser(durationFlag('--handoff-after'))
      .default(HANDOFF_DEFAULTS.floorMs, '15m')
  )
  .addOption(
    new Option(
      '--agents <n>',
      `agents this process hosts (1 to ${MAX_AGENTS_PER_PROCESS}): each its own daemon, with its own identity, data dir <data-dir>/agent-<n>, API socket, ports (the given ones + 1, + 2, ...) and harness; they share the process's runtime, so each one past the first costs little memory (docs/many-agents.md)`
    )
      .env('AGENCY_AGENTS')
      .argParser(positiveInt('--agents'))
  )
  .addOption(
    new Option(
      '--agent-index <k>',
      "with --agents, the number of this process's first agent (agent-<k>, agent-<k+1>, ...), so that several processes on one host number their agents apart"
    )
      .env('AGENCY_AGENT_INDEX')
      .argParser(positiveInt('--agent-index'))
      .default(1)
  )
  .addOption(
    new Option('--settle-ms <ms>', 'a fixed claim settle window (default: derived from gossip latency)')
      .env('AGENCY_SETTLE_MS')
      .argParser(positiveInt('--settle-ms'))
  )
  .addHelpText(
    'after',
    `
Every flag can also be set by the environment variable shown, e.g. AGENCY_PEERS.

The API is served on the unix socket <data-dir>/agentd.sock (mode 0600) unless
--grpc says otherwise; \`agency\` finds it through AGENCY_DATA_DIR or --addr.

Examples:
  agentd --data-dir /tmp/a1 --listen /ip4/127.0.0.1/tcp/4001
  AGENCY_DATA_DIR=/tmp/a1 agency status
  agentd --data-dir /tmp/a2 --listen /ip4/127.0.0.1/tcp/4002 --peers /ip4/127.0.0.1/tcp/4001/p2p/12D3Koo...
  agentd --data-dir /tmp/a3 --grpc 127.0.0.1:7403 --api-token-file /tmp/a3/api-token
  agentd --data-dir /tmp/a1 --ui 127.0.0.1:7464          # then open http://127.0.0.1:7464/
  agentd --data-dir /tmp/host --agents 16 --harness claude  # 16 agents in one process: /tmp/host/agent-1 .. agent-16
  AGENCY_TOKEN_FILE=/tmp/a3/api-token agency --addr 127.0.0.1:7403 status
`
  )
  .action(async opts => {
    // Signals are taken from the start: one that comes while the daemon is
    // still starting is kept and answered by a clean stop once it is up,
    // instead of killing the process mid-write.
    let signalled: string | undefined
    let onSignal = (signal: string): void => {
      signalled ??= signal
    }
    process.on('SIGINT', () => {
      onSignal('SIGINT')
    })
    process.on('SIGTERM', () => {
      onSignal('SIGTERM')
    })
    let host: ServedHost
    let sandboxSummary = ''
    try {
      let swarmKey: Uint8Array | undefined
      if (opts.swarmKey != null) {
        try {
          swarmKey = await readFile(opts.swarmKey)
        } catch (err) {
          throw new Error(`cannot read the swarm key ${opts.swarmKey}: ${(err as Error).message}`, { cause: err })
        }
        if (!Buffer.from(swarmKey).toString('utf8').startsWith('/key/swarm/psk/1.0.0/'))
          throw new Error(`${opts.swarmKey} is not a swarm key (make one with \`agency keygen\`)`)
      }
      // Checked before anything starts: a bad mode or allow-list, or a model-running harness with no box, starts nothing.
      const sandbox = createSandbox({
        mode: opts.sandbox,
        allow: opts.sandboxAllow ?? [],
        hide: opts.sandboxHide ?? [],
        runOnly: opts.sandboxRunOnly ?? [],
        testNetwork: opts.testNetwork === 'on',
        dataDir: resolve(opts.dataDir),
        user: opts.sandboxUser
      })
      if (opts.harness != null) sandbox.admit(opts.harness)
      // Said once the daemon is up: a start that fails says only why.
      sandboxSummary = sandbox.summary
      confineTestRuns(sandbox)
      let prices: PriceTable | undefined
      if (opts.prices != null) {
        let text: string
        try {
          text = await readFile(opts.prices, 'utf8')
        } catch (err) {
          throw new Error(`cannot read the price file ${opts.prices}: ${(err as Error).message}`, { cause: err })
        }
        try {
          prices = parsePrices(text)
        } catch (err) {
          throw new Error(`${opts.prices}: ${(err as Error).message}`, { cause: err })
        }
      }
      let apiToken: string | undefined
      if (opts.apiTokenFile != null) {
        apiToken = await loadOrCreateApiToken(opts.apiTokenFile)
      }
      const base = {
        apiToken,
        swarmKey,
        allowPeers: opts.allowPeers ?? [],
        rememberedPeers: opts.rememberedPeers,
        dataDir: opts.dataDir,
        peers: opts.peers ?? [],
        listen: opts.listen ?? [...DEFAULTS.listen],
        announce: opts.announce ?? [],
        swarm: opts.swarm,
        name: opts.name ?? '',
        grpc: opts.grpc ?? defaultGrpcAddr(opts.dataDir),
        metrics: opts.metrics ?? null,
        ui: opts.ui ?? null,
        heartbeatMs: opts.heartbeatMs,
        heartbeatMaxRate: opts.heartbeatMaxRate,
        liveTimeoutMs: opts.liveTimeoutMs,
        dmTtlMs: opts.dmTtlMs,
        repo:
          opts.repo != null
            ? {
                remote: opts.repo,
                branch: opts.branch,
                workdir: opts.workdir,
                verify: opts.verify,
                mirrorDir: opts.mirrorDir,
                wipPushMs: opts.wipPush,
                integratorWindowMs: opts.integratorWindow
              }
            : undefined,
        harness: opts.harness,
        harnessPolicy: { runTimeoutMs: opts.harnessRunTimeout },
        sandbox,
        acpPermissions: opts.acpPermissions,
        operators: parseOperatorKeys(opts.operator ?? []),
        approvalTimeoutMs: opts.approvalTimeout,
        spend: { prices, providerAccount: opts.providerAccount, keepLeasesMs: opts.budgetKeepLeases },
        settle: opts.settleMs != null ? { fixedMs: opts.settleMs } : undefined,
        assist: { budget: opts.assistBudget, floorMs: opts.assistAfter, spare: opts.assistSpare },
        findingsWorker: opts.findingsWorker === 'on',
        handoff: { factor: opts.handoffFactor, floorMs: opts.handoffAfter }
      }
      host = await serveAgents(agentConfigs(base, opts.agents, opts.agentIndex))
    } catch (err) {
      process.stderr.write(`agentd: ${(err as Error).message}\n`)
      process.exit(1)
    }
    for (const { daemon } of host.agents) {
      daemon.onFatalError((err: Error) => {
        process.stderr.write(
          `agentd: cannot write to the data dir ${daemon.config.dataDir}: ${err.message}; stopping (a restart reloads what is on disk)\n`
        )
        const exit = (): never => process.exit(1)
        setTimeout(exit, 5000).unref()
        host.stop().then(exit, exit)
      })
    }
    process.stderr.write(`agentd: ${sandboxSummary}\n`)
    // One block per agent, then one `ready` once all are up (swarm/local-daemon reads them).
    const out = [
      ...host.agents.flatMap(a => [
        `agentd ${VERSION} peer ${a.daemon.peerId} (${a.daemon.name}) swarm ${a.daemon.config.swarm}`,
        ...a.daemon.listenAddrs().map(addr => `listening ${addr}`),
        ...(a.grpc != null ? [`grpc ${a.grpc.address}`] : []),
        ...(a.metrics != null ? [`metrics http://${a.metrics.address}/metrics`] : []),
        ...(a.ui != null ? [`ui ${a.ui.url}`] : []),
        operatorLine(a.daemon.boardService.board.operators())
      ]),
      'ready'
    ]
    process.stdout.write(out.join('\n') + '\n')
    let stopping = false
    const shutdown = (signal: string): void => {
      if (stopping) return
      stopping = true
      process.stderr.write(`agentd: ${signal}, shutting down\n`)
      host.stop().then(
        () => process.exit(0),
        err => {
          process.stderr.write(`agentd: shutdown failed: ${(err as Error).message}\n`)
          process.exit(1)
        }
      )
    }
    onSignal = shutdown
    if (signalled !== undefined) shutdown(signalled)
  })

/** The start's one line on who steers the swarm (docs/operator.md). */
function operatorLine(o: { keys: string[]; source: string }): string {
  if (o.keys.length === 0)
    return 'operator none: any member may set the goal and its test command (start every agentd with --operator <key> to have one)'
  return `operator ${o.keys.join(',')} (${o.source === 'goal' ? 'from the first goal' : 'configured'})`
}

program.parseAsync(process.argv).catch((err: Error) => {
  process.stderr.write(`agentd: ${err.message}\n`)
  process.exit(2)
})
