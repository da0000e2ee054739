// The Grafana dashboards as data: their panels, queries and template
// variables, the metric names a PromQL expression uses, and an expression
// with Grafana's variables filled in, ready for Prometheus.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { REPO_ROOT } from './agentd.js'

export const DASHBOARD_DIR = join(REPO_ROOT, 'grafana/dashboards')
export const DASHBOARD_FILES = ['swarm.json', 'agent.json'] as const

export interface Target {
  refId: string
  expr: string
  datasource?: { type?: string; uid?: string }
}
export interface Panel {
  id: number
  type: string
  title: string
  gridPos: { x: number; y: number; w: number; h: number }
  datasource?: { type?: string; uid?: string }
  targets?: Target[]
  panels?: Panel[]
}
export interface Variable {
  name: string
  type: string
  query: string | { query: string }
  datasource?: { uid?: string }
  includeAll?: boolean
  allValue?: string
}
export interface Dashboard {
  uid: string
  title: string
  panels: Panel[]
  templating: { list: Variable[] }
}

export interface DashboardQuery {
  dashboard: string
  panel: string
  refId: string
  expr: string
}

export function loadDashboard(file: string): Dashboard {
  return JSON.parse(readFileSync(join(DASHBOARD_DIR, file), 'utf8')) as Dashboard
}

/** Every panel, the panels of collapsed rows included. */
export function allPanels(d: Dashboard): Panel[] {
  return d.panels.flatMap(p => [p, ...(p.panels ?? [])])
}

export function queriesOf(file: string, d: Dashboard): DashboardQuery[] {
  return allPanels(d).flatMap(p => (p.targets ?? []).map(t => ({ dashboard: file, panel: p.title, refId: t.refId, expr: t.expr })))
}

export function variableQuery(v: Variable): string {
  return typeof v.query === 'string' ? v.query : v.query.query
}

/** `label_values(selector, label)` of a Grafana query variable. */
export function parseLabelValues(query: string): { selector: string; label: string } | undefined {
  const m = /^label_values\((.*),\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\)$/.exec(query.trim())
  return m != null ? { selector: m[1].trim(), label: m[2] } : undefined
}

const KEYWORDS = new Set([
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'bool',
  'and',
  'or',
  'unless',
  'offset',
  'inf',
  'nan'
])

/** The metric names an expression selects (not functions, keywords, labels or durations). */
export function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, '""') // strings
    .replace(/\{[^}]*\}/g, '') // label matchers
    .replace(/\[[^\]]*\]/g, '') // range and subquery windows
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, '') // label lists
  const names = new Set<string>()
  for (const m of bare.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)) {
    const after = bare.slice((m.index ?? 0) + m[0].length)
    if (/^\s*\(/.test(after)) continue // a function
    if (KEYWORDS.has(m[0].toLowerCase())) continue
    const before = bare[(m.index ?? 0) - 1]
    if (before != null && /[0-9.]/.test(before)) continue // 1e3, 0.5
    names.add(m[0])
  }
  return [...names]
}

/** The expression Grafana would send, with template variables and interval macros filled in. */
export function expand(expr: string, vars: Record<string, string>, rateInterval = '5s'): string {
  let out = expr.replaceAll('$__rate_interval', rateInterval).replaceAll('$__interval', '1s').replaceAll('$__range', '5m')
  for (const [name, value] of Object.entries(vars)) {
    out = out
      .replaceAll(`\${${name}}`, value)
      .replaceAll(`[[${name}]]`, value)
      .replace(new RegExp(`\\$${name}\\b`, 'g'), value)
  }
  return out
}

/** Names a registry or /metrics text offers for queries: histograms and summaries as their series. */
export function queryableNames(metrics: Array<{ name: string; type: string }>): Set<string> {
  const names = new Set<string>()
  for (const m of metrics) {
    names.add(m.name)
    if (m.type === 'histogram') for (const s of ['_bucket', '_sum', '_count']) names.add(m.name + s)
    if (m.type === 'summary') for (const s of ['_sum', '_count']) names.add(m.name + s)
  }
  return names
}

/** The `# TYPE` lines of a /metrics text. */
export function typesInExposition(text: string): Array<{ name: string; type: string }> {
  return [...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map(m => ({ name: m[1], type: m[2] }))
}
