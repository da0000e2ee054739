// The shared branch's pass rate over time (a step line from the test runs)
// with each integration drawn as a point on it, coloured by its result: uPlot.
import uPlot from 'uplot'
import { useEffect, useRef } from 'preact/hooks'
import type { VNode } from 'preact'
import { html } from './components.js'

/** [time, passed, total] */
export type RunPoint = [number, number, number]
/** [time, result (0 merged, 1 conflict, 2 failed), pass rate of the run on its commit or null] */
export type IntegrationPoint = [number, number, number | null]

const RESULTS = ['merged', 'conflict', 'failed'] as const
const COLORS: Record<string, string> = { merged: '#1a7f37', conflict: '#bf8700', failed: '#cf222e' }

/**
 * Columns for uPlot: one x (seconds) for every run and integration, the pass
 * rate (%) carried forward; an integration sits at the pass rate of the run
 * on its commit when there is one, else at the rate of the moment.
 */
export function plotData(runs: RunPoint[], integrations: IntegrationPoint[]): uPlot.AlignedData {
  type Row = { t: number; rate?: number; result?: number; at?: number }
  const rows: Row[] = [
    ...runs.map(([t, passed, total]) => ({ t, rate: total > 0 ? (100 * passed) / total : 0 })),
    ...integrations.map(([t, result, rate]) => ({ t, result: Math.min(2, Math.max(0, result)), at: rate == null ? undefined : 100 * rate }))
  ].sort((a, b) => a.t - b.t)
  const xs: number[] = []
  const rate: Array<number | null> = []
  const points: Array<Array<number | null>> = [[], [], []]
  let current: number | null = null
  let lastX = -Infinity
  for (const r of rows) {
    if (r.rate !== undefined) current = r.rate
    // uPlot wants x strictly increasing: entries in the same millisecond are spread by a microsecond.
    const x = Math.max(r.t / 1000, lastX + 1e-6)
    lastX = x
    xs.push(x)
    rate.push(current)
    for (let k = 0; k < 3; k++) points[k].push(r.result === k ? (r.at ?? current ?? 0) : null)
  }
  return [xs, rate, ...points]
}

export function PassRatePlot({
  runs,
  integrations,
  height = 220
}: {
  runs: RunPoint[]
  integrations: IntegrationPoint[]
  height?: number
}): VNode {
  const box = useRef<HTMLDivElement>(null)
  const chart = useRef<uPlot | null>(null)
  useEffect(() => {
    const el = box.current
    if (el == null) return
    const point = (color: string): uPlot.Series => ({
      stroke: color,
      fill: color,
      paths: () => null,
      points: { show: true, size: 8, stroke: color, fill: color }
    })
    const opts: uPlot.Options = {
      width: Math.max(200, el.clientWidth),
      height,
      cursor: { drag: { x: true, y: false } },
      legend: { live: true },
      scales: { x: { time: true }, y: { range: [0, 100] } },
      axes: [{}, { values: (_u, ticks) => ticks.map(v => `${v}%`), size: 50 }],
      series: [
        {},
        {
          label: 'pass rate',
          stroke: '#0969da',
          width: 2,
          fill: 'rgba(9,105,218,0.08)',
          paths: uPlot.paths.stepped?.({ align: 1 }),
          spanGaps: true,
          points: { show: false },
          value: (_u, v) => (v == null ? '—' : `${v.toFixed(1)}%`)
        },
        ...RESULTS.map(k => ({ label: k, ...point(COLORS[k]), value: (_u: uPlot, v: number | null) => (v == null ? '—' : k) }))
      ]
    }
    const u = new uPlot(opts, plotData(runs, integrations), el)
    chart.current = u
    const resize = new ResizeObserver(() => {
      u.setSize({ width: Math.max(200, el.clientWidth), height })
    })
    resize.observe(el)
    return () => {
      resize.disconnect()
      u.destroy()
      chart.current = null
    }
  }, [height])
  useEffect(() => {
    chart.current?.setData(plotData(runs, integrations))
  }, [runs, integrations])
  return html`<div class="plot" ref=${box}></div>`
}
