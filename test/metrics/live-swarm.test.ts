// Three real agentd processes with activity (claims, a scope conflict, a
// finding, a message, an integration with test results): their /metrics pass
// `promtool check metrics` and offer every metric the dashboards use, and a
// real Prometheus scraping them has data for every dashboard query and variable.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { scrape } from './support/agentd.js'
import { exerciseSwarm, startLocalSwarm, type LocalSwarm } from './support/busy-swarm.js'
import {
  DASHBOARD_FILES,
  expand,
  loadDashboard,
  metricNames,
  parseLabelValues,
  queriesOf,
  queryableNames,
  typesInExposition,
  variableQuery
} from './support/dashboards.js'
import { startPrometheus, type PrometheusServer } from './support/prometheus.js'
import { promtoolCheckMetrics } from './support/promtool.js'
import { findTool, missingTool, PROMETHEUS_INSTALL } from './support/tools.js'
import { waitFor } from '../helpers/wait-for.js'

const PROMETHEUS = findTool('prometheus')

let swarm: LocalSwarm
let prom: PrometheusServer | undefined
let promDir: string | undefined

// Prometheus (when installed) scrapes from before the activity, so that the
// activity shows as increases and rates, not only as totals.
beforeAll(async () => {
  swarm = await startLocalSwarm()
  if (PROMETHEUS != null) {
    promDir = await mkdtemp(join(tmpdir(), 'agency-prometheus-'))
    prom = await startPrometheus(
      PROMETHEUS,
      promDir,
      swarm.daemons.map(d => d.metrics)
    )
    const p = prom
    await waitFor(async () => (await p.query('up == 1')).length === swarm.daemons.length, {
      what: 'every daemon up in Prometheus',
      intervalMs: 500
    })
  }
  await exerciseSwarm(swarm)
}, 180_000)

afterAll(async () => {
  await prom?.stop()
  if (promDir != null) await rm(promDir, { recursive: true, force: true })
  await swarm?.stop()
}, 60_000)

/** What Grafana fills in for the variables: the whole test swarm, or agent-1. */
function variablesFor(file: string): Record<string, string> {
  return file === 'agent.json' ? { swarm: swarm.swarm, instance: swarm.daemons[0].metrics } : { swarm: swarm.swarm, instance: '.*' }
}

describe('a live three-daemon swarm', () => {
  it('passes `promtool check metrics` on every daemon', async ctx => {
    const promtool = findTool('promtool')
    if (promtool == null) ctx.skip(missingTool('promtool check metrics on a live agentd', 'promtool', PROMETHEUS_INSTALL))
    for (const d of swarm.daemons) {
      const text = await scrape(d.metrics)
      expect(text).toContain('agentd_build_info{')
      const lint = await promtoolCheckMetrics(promtool!, text)
      expect(lint.problems, d.name).toBe('')
      expect(lint.code, d.name).toBe(0)
    }
  })

  it('exports every metric the dashboards use', async () => {
    const exported = queryableNames(typesInExposition(await scrape(swarm.daemons[0].metrics)))
    for (const file of DASHBOARD_FILES) {
      const d = loadDashboard(file)
      const texts = [
        ...queriesOf(file, d).map(q => q.expr),
        ...d.templating.list.map(v => parseLabelValues(variableQuery(v))?.selector ?? '')
      ]
      const used = new Set(texts.flatMap(metricNames))
      expect(
        [...used].filter(n => !exported.has(n)),
        file
      ).toEqual([])
    }
  })

  describe('scraped by a real Prometheus', () => {
    it("offers the swarm and its agents in the dashboards' variables", async ctx => {
      if (prom == null) ctx.skip(missingTool('dashboard variables against a real Prometheus', 'prometheus', PROMETHEUS_INSTALL))
      const targets = swarm.daemons.map(d => d.metrics).sort()
      for (const file of DASHBOARD_FILES) {
        for (const v of loadDashboard(file).templating.list) {
          const lv = parseLabelValues(variableQuery(v))!
          const values = await prom!.labelValues(lv.label, expand(lv.selector, variablesFor(file)))
          if (v.name === 'swarm') expect(values, file).toContain(swarm.swarm)
          if (v.name === 'instance') expect(values.sort(), file).toEqual(targets)
          expect(values.length, `${file} variable ${v.name}`).toBeGreaterThan(0)
        }
      }
    })

    it('has data for every query of both dashboards', async ctx => {
      if (prom == null) ctx.skip(missingTool('dashboard queries against a real Prometheus', 'prometheus', PROMETHEUS_INSTALL))
      const p = prom!
      const queries = DASHBOARD_FILES.flatMap(file =>
        queriesOf(file, loadDashboard(file)).map(q => ({ ...q, promql: expand(q.expr, variablesFor(file)) }))
      )
      expect(queries.length).toBeGreaterThan(50)
      // rate() and friends need two scrapes inside their window: poll until every query has data.
      const missing = new Map(queries.map(q => [q, 'no data'] as [typeof q, string]))
      const deadline = Date.now() + 40_000
      while (missing.size > 0 && Date.now() < deadline) {
        await Promise.all(
          [...missing.keys()].map(async q => {
            try {
              if ((await p.query(q.promql)).length > 0) missing.delete(q)
            } catch (err) {
              missing.set(q, (err as Error).message)
            }
          })
        )
        if (missing.size > 0) await new Promise(resolve => setTimeout(resolve, 1000))
      }
      expect([...missing].map(([q, why]) => `${q.dashboard} "${q.panel}" ${q.refId}: ${why}\n  ${q.promql}`)).toEqual([])
    }, 90_000)

    it('shows on the overview what the swarm did', async ctx => {
      if (prom == null) ctx.skip(missingTool('overview values against a real Prometheus', 'prometheus', PROMETHEUS_INSTALL))
      const d = loadDashboard('swarm.json')
      const value = async (panel: string, refId = 'A'): Promise<number> => {
        const q = queriesOf('swarm.json', d).find(x => x.panel === panel && x.refId === refId)
        if (q == null) throw new Error(`no query ${refId} in panel "${panel}"`)
        const result = await prom!.query(expand(q.expr, variablesFor('swarm.json')))
        return result.length > 0 ? Number(result[0].value[1]) : NaN
      }
      // Prometheus may not have scraped the very last changes yet, and each
      // target is scraped at its own moment: the daemon that merged may be
      // scraped after another already shows the task done.
      await waitFor(async () => (await value('Tasks done')) === 1, { what: 'Tasks done to read 1', intervalMs: 500 })
      await waitFor(async () => (await value('Merged (1h)')) > 0, { what: 'Merged (1h) above 0', intervalMs: 500 })
      expect(await value('Agents up')).toBe(3)
      expect(await value('Agents live (largest view)')).toBe(3)
      expect(await value('Tasks done', 'A')).toBe(1)
      expect(await value('Tasks done', 'B')).toBe(3)
      expect(await value('Pass rate')).toBe(1)
      expect(await value('Merged (1h)')).toBeGreaterThan(0)
      expect(await value('Claim conflicts, takeovers and lost claims per minute', 'A')).toBeGreaterThanOrEqual(0)
    })
  })
})
