// The Grafana dashboards and their provisioning: valid JSON, unique panel ids,
// panels that do not overlap, the provisioned datasource uid everywhere, only
// defined template variables, and only metrics that agentd registers.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { createMetrics, registerStateGauges } from '../../src/metrics/metrics.js'
import { createLibp2pMetrics } from '../../src/metrics/libp2p-metrics.js'
import { REPO_ROOT } from './support/agentd.js'
import {
  allPanels,
  DASHBOARD_FILES,
  DASHBOARD_DIR,
  loadDashboard,
  metricNames,
  parseLabelValues,
  queriesOf,
  queryableNames,
  variableQuery,
  type Dashboard
} from './support/dashboards.js'

const datasources = parse(readFileSync(join(REPO_ROOT, 'grafana/provisioning/datasources/prometheus.yml'), 'utf8')) as {
  datasources: Array<{ uid: string; type: string; url: string }>
}
const providers = parse(readFileSync(join(REPO_ROOT, 'grafana/provisioning/dashboards/agency.yml'), 'utf8')) as {
  providers: Array<{ type: string; options: { path: string } }>
}
const PROVISIONED_UID = datasources.datasources[0].uid

/** Every name agentd's registry offers: its own metrics, the state gauges, process metrics, and libp2p's under agentd_libp2p_*. */
async function registeredNames(): Promise<Set<string>> {
  const m = createMetrics({ version: 'test', swarm: 'test' })
  const zero = (): number => 0
  registerStateGauges(m.registry, {
    peersConnected: zero,
    peersLive: zero,
    logByKind: () => [],
    logAuthors: zero,
    logPending: zero,
    logForks: zero,
    secondsSinceSync: zero,
    outboxMessages: async () => 0,
    claimsHeld: zero,
    taskStates: () => [],
    allTaskStates: ['open'],
    sharedTests: () => undefined,
    harness: { states: ['idle'], current: () => 'idle' }
  })
  createLibp2pMetrics(m.registry)
  const all = await m.registry.getMetricsAsJSON()
  return queryableNames(all.map(x => ({ name: x.name, type: String(x.type) })))
}

describe('grafana provisioning', () => {
  it('provisions one Prometheus datasource with a fixed uid', () => {
    expect(datasources.datasources).toHaveLength(1)
    expect(datasources.datasources[0].type).toBe('prometheus')
    expect(PROVISIONED_UID).toBe('agency-prometheus')
  })

  it('loads dashboards from files', () => {
    expect(providers.providers).toHaveLength(1)
    expect(providers.providers[0].type).toBe('file')
    expect(providers.providers[0].options.path).toMatch(/^\//)
  })
})

describe.each(DASHBOARD_FILES)('grafana/dashboards/%s', file => {
  const text = readFileSync(join(DASHBOARD_DIR, file), 'utf8')
  const d: Dashboard = loadDashboard(file)

  it('is valid JSON with a uid, a title and panels', () => {
    expect(() => JSON.parse(text)).not.toThrow()
    expect(d.uid).toMatch(/^agency-/)
    expect(d.title).not.toBe('')
    expect(allPanels(d).length).toBeGreaterThan(5)
  })

  it('has unique panel ids', () => {
    const ids = allPanels(d).map(p => p.id)
    expect(ids.every(id => Number.isInteger(id) && id > 0)).toBe(true)
    expect(new Set(ids).size).toBe(ids.length)
  })

  it('lays panels out without overlaps, within 24 columns', () => {
    const boxes = d.panels.map(p => ({ title: p.title, ...p.gridPos }))
    for (const b of boxes) expect(b.x + b.w, b.title).toBeLessThanOrEqual(24)
    const overlaps: string[] = []
    for (let i = 0; i < boxes.length; i++) {
      for (let j = i + 1; j < boxes.length; j++) {
        const a = boxes[i]
        const b = boxes[j]
        if (a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h) overlaps.push(`${a.title} / ${b.title}`)
      }
    }
    expect(overlaps).toEqual([])
  })

  it('queries only the provisioned datasource', () => {
    const wrong: string[] = []
    for (const p of allPanels(d)) {
      if (p.type === 'row') continue
      if (p.datasource?.uid !== PROVISIONED_UID) wrong.push(`panel ${p.title}`)
      for (const t of p.targets ?? []) if (t.datasource != null && t.datasource.uid !== PROVISIONED_UID) wrong.push(`${p.title} ${t.refId}`)
    }
    for (const v of d.templating.list) if (v.type === 'query' && v.datasource?.uid !== PROVISIONED_UID) wrong.push(`variable ${v.name}`)
    expect(wrong).toEqual([])
  })

  it('has swarm and instance variables, and uses no undefined variable', () => {
    const defined = new Set(d.templating.list.map(v => v.name))
    expect([...defined]).toEqual(expect.arrayContaining(['swarm', 'instance']))
    const used = new Set<string>()
    const texts = [...queriesOf(file, d).map(q => q.expr), ...d.templating.list.map(variableQuery)]
    for (const t of texts) for (const m of t.matchAll(/\$\{?([a-zA-Z_][a-zA-Z0-9_]*)/g)) if (!m[1].startsWith('__')) used.add(m[1])
    expect([...used].filter(u => !defined.has(u))).toEqual([])
    for (const v of d.templating.list) expect(parseLabelValues(variableQuery(v)), v.name).toBeDefined()
  })

  it('every panel but rows has at least one query, each with an expression', () => {
    for (const p of allPanels(d)) {
      if (p.type === 'row') continue
      expect(p.targets?.length ?? 0, p.title).toBeGreaterThan(0)
      for (const t of p.targets ?? []) expect(t.expr.trim(), `${p.title} ${t.refId}`).not.toBe('')
    }
  })

  it('uses only metrics that agentd registers', async () => {
    const known = await registeredNames()
    const texts = [
      ...queriesOf(file, d).map(q => q.expr),
      ...d.templating.list.map(v => parseLabelValues(variableQuery(v))?.selector ?? '')
    ]
    const used = new Set(texts.flatMap(metricNames))
    expect(used.size).toBeGreaterThan(10)
    expect([...used].filter(n => !known.has(n))).toEqual([])
  })
})

describe('metric names in PromQL', () => {
  it('finds selected metrics, not functions, labels, keywords or durations', () => {
    const expr =
      'histogram_quantile(0.9, sum by (le) (rate(agentd_x_seconds_bucket{instance=~"$instance", kind="a b"}[5m]))) * on(job, instance) group_left(swarm) agentd_build_info + time() - agentd_y offset 1h > bool 1e3'
    expect(metricNames(expr).sort()).toEqual(['agentd_build_info', 'agentd_x_seconds_bucket', 'agentd_y'])
  })
})
