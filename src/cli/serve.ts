// A daemon with its servers: gRPC (and health), /metrics and /healthz, the
// dashboard. It stands above the daemon and the servers, which know nothing
// of each other's start. Used by the agentd command and by in-process tests.
import { Daemon } from '../daemon/daemon.js'
import type { DaemonConfig } from '../daemon/config.js'
import { agencyHandlers, startGrpcServer, type GrpcServer } from '../api/grpc-server.js'
import { startMetricsServer, type MetricsServer } from '../metrics/http-server.js'
import { UnavailableError, isAgencyError } from '../core/errors.js'
import { unary } from '../api/grpc-errors.js'
import type { UiServer } from '../ui/ui-server.js'
import type { Board } from '../core/board/index.js'
import { testFaults } from '../test-faults.js'

export interface ServedDaemon {
  daemon: Daemon
  grpc?: GrpcServer
  metrics?: MetricsServer
  ui?: UiServer
  stop: () => Promise<void>
}

export async function serveDaemon(config: Partial<DaemonConfig> & { dataDir: string }): Promise<ServedDaemon> {
  // Test-only (AGENCY_TEST_FAULTS=1): a movable wall clock, a settle window switched off.
  const faults = testFaults()
  const daemon = new Daemon(faults.breaks.has('settle') ? { ...config, settle: { fixedMs: 0 } } : config, { wallClock: faults.wallClock })
  await daemon.start()
  let grpc: GrpcServer | undefined
  let metrics: MetricsServer | undefined
  let ui: UiServer | undefined
  const harness = daemon.harness
  const stop = async (): Promise<void> => {
    await harness?.shutdown()
    await grpc?.close()
    await metrics?.close()
    await ui?.close()
    await daemon.stop()
  }
  try {
    if (daemon.config.grpc != null) {
      try {
        grpc = await startGrpcServer(
          daemon.config.grpc,
          agencyHandlers(daemon, {
            stopHarness: unary(async () => ({ stopped: harness != null ? await harness.stop() : false }))
          }),
          { token: daemon.config.apiToken }
        )
      } catch (err) {
        if (isAgencyError(err)) throw err
        throw new UnavailableError(`cannot serve gRPC on ${daemon.config.grpc}: ${(err as Error).message}`, { cause: err })
      }
    }
    if (daemon.config.metrics != null) {
      try {
        metrics = await startMetricsServer(daemon.config.metrics, daemon.metrics.registry, () => ({
          ok: true,
          detail: { peerId: daemon.peerId, peersLive: daemon.presence.livePeers().length }
        }))
      } catch (err) {
        throw new UnavailableError(`cannot serve metrics on ${daemon.config.metrics}: ${(err as Error).message}`, { cause: err })
      }
    }
    if (daemon.config.ui != null) {
      try {
        // loaded only when the dashboard is served
        const { startUiServer } = await import('../ui/ui-server.js')
        const board = (): Board => daemon.boardService.board
        ui = await startUiServer({
          listen: daemon.config.ui,
          daemon,
          token: daemon.config.apiToken,
          harnessState: () => harness?.state() ?? '',
          operator: {
            operators: () => board().operators(),
            paused: () => board().paused(),
            approvals: () => board().approvalRequests(),
            audit: () => board().operatorActions(),
            submit: async envelope => await daemon.operator.submit(envelope)
          }
        })
      } catch (err) {
        if (isAgencyError(err)) throw err
        throw new UnavailableError(`cannot serve the dashboard on ${daemon.config.ui}: ${(err as Error).message}`, { cause: err })
      }
    }
    if (harness != null) {
      if (grpc == null) throw new UnavailableError('a harness needs the gRPC API: do not disable --grpc')
      await harness.start(grpc.address)
    }
    daemon.startPhases.mark('servers')
    daemon.log.info({ phases: daemon.startPhases.ms }, 'start phases')
  } catch (err) {
    await stop()
    throw err
  }
  return { daemon, grpc, metrics, ui, stop }
}
