// libp2p's own metrics, under our names. @libp2p/prometheus-metrics is the
// component libp2p reports to, but what it exports breaks our rules (no
// agentd_ prefix, gauges named *_total, milliseconds, labels named after the
// metric) and `promtool check metrics` rejects it. So it reports into a
// private registry, and at scrape time a few useful series are copied into
// agentd_libp2p_* metrics of the daemon's registry.
import { prometheusMetrics } from '@libp2p/prometheus-metrics'
import type { ComponentLogger, Metrics as Libp2pMetrics } from '@libp2p/interface'
import { Counter, Gauge, Registry } from 'prom-client'

export type Libp2pMetricsComponent = (components: { logger: ComponentLogger }) => Libp2pMetrics

interface Sample {
  labels: Record<string, string | number>
  value: number
}

/** The samples of one metric of the private registry (running its collect first); none if libp2p never registered it. */
async function samples(source: Registry, name: string): Promise<Sample[]> {
  const metric = source.getSingleMetric(name)
  if (metric == null) return []
  const { values } = await metric.get()
  return values.map(v => ({ labels: v.labels as Record<string, string | number>, value: v.value }))
}

/** The one label of a libp2p metric group ("inbound", "outbound pending", "/meshsub/1.2.0 sent", ...). */
function key(s: Sample): string {
  return String(Object.values(s.labels)[0] ?? '')
}

/** "outbound /meshsub/1.2.0" -> direction + protocol; "/ipfs/id/1.0.0 received" -> protocol + direction. */
function splitDirection(text: string, directions: readonly string[]): { direction: string; rest: string } | undefined {
  const words = text.split(' ')
  if (directions.includes(words[0])) return { direction: words[0], rest: words.slice(1).join(' ') }
  const last = words.at(-1) ?? ''
  if (directions.includes(last)) return { direction: last, rest: words.slice(0, -1).join(' ') }
  return undefined
}

/**
 * Creates the metrics component to hand to createLibp2p (`metrics:`) and
 * registers the agentd_libp2p_* metrics on `target`. One per libp2p node.
 * Not for several nodes starting at once in one process: the component keeps
 * a module-wide table of metric names, so their metrics could cross.
 */
export function createLibp2pMetrics(target: Registry): Libp2pMetricsComponent {
  const source = new Registry()
  const r = [target]

  // Counters copied from cumulative values: reset, then set to the current total.
  const copyCounter = (counter: Counter<string>, values: Array<[Record<string, string>, number]>): void => {
    counter.reset()
    for (const [labels, value] of values) counter.inc(labels, value)
  }

  new Gauge({
    name: 'agentd_libp2p_connections',
    help: 'Open and pending libp2p connections, by direction.',
    labelNames: ['direction', 'state'] as const,
    registers: r,
    async collect() {
      this.reset()
      for (const s of await samples(source, 'libp2p_connection_manager_connections')) {
        const [direction, pending] = key(s).split(' ')
        this.set({ direction, state: pending === 'pending' ? 'pending' : 'open' }, s.value)
      }
    }
  })
  new Gauge({
    name: 'agentd_libp2p_streams',
    help: 'Open libp2p streams, by protocol and direction.',
    labelNames: ['protocol', 'direction'] as const,
    registers: r,
    async collect() {
      this.reset()
      for (const s of await samples(source, 'libp2p_protocol_streams_total')) {
        const d = splitDirection(key(s), ['inbound', 'outbound'])
        if (d != null) this.set({ protocol: d.rest, direction: d.direction }, s.value)
      }
    }
  })
  new Counter({
    name: 'agentd_libp2p_transfer_bytes_total',
    help: 'Bytes sent and received over libp2p, by protocol (all: every connection, framing and encryption included).',
    labelNames: ['protocol', 'direction'] as const,
    registers: r,
    async collect() {
      const values: Array<[Record<string, string>, number]> = []
      for (const s of await samples(source, 'libp2p_data_transfer_bytes_total')) {
        const d = splitDirection(key(s), ['sent', 'received'])
        if (d != null) values.push([{ protocol: d.rest === 'global' ? 'all' : d.rest, direction: d.direction }, s.value])
      }
      copyCounter(this, values)
    }
  })
  new Counter({
    name: 'agentd_libp2p_connections_opened_total',
    help: 'Connections upgraded (encrypted and multiplexed), by direction.',
    labelNames: ['direction'] as const,
    registers: r,
    async collect() {
      copyCounter(
        this,
        (await samples(source, 'libp2p_connection_manager_dials_total')).map(s => [{ direction: key(s) }, s.value])
      )
    }
  })
  new Counter({
    name: 'agentd_libp2p_connection_errors_total',
    help: 'Connections that failed to upgrade, by direction and error name.',
    labelNames: ['direction', 'error'] as const,
    registers: r,
    async collect() {
      const values: Array<[Record<string, string>, number]> = []
      for (const direction of ['inbound', 'outbound']) {
        for (const s of await samples(source, `libp2p_connection_manager_dials_${direction}_errors_total`))
          values.push([{ direction, error: key(s) }, s.value])
      }
      copyCounter(this, values)
    }
  })
  new Counter({
    name: 'agentd_libp2p_handshake_errors_total',
    help: 'Noise handshakes that failed.',
    registers: r,
    async collect() {
      copyCounter(
        this,
        (await samples(source, 'libp2p_noise_xxhandshake_error_total')).map(s => [{}, s.value])
      )
    }
  })

  // preserveExistingMetrics false: a node created again in this process gets fresh metrics, not the last node's.
  return prometheusMetrics({ registry: source, collectDefaultMetrics: false, preserveExistingMetrics: false })
}
