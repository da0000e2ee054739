// An SVG of pass rate against time: panels (each with its own time axis),
// one line per series, written by hand so the benchmarks need no plotting
// library. passRatePlot draws simulator results (a panel per swarm size, a
// line per strategy); passRatePanels draws any panels, such as an experiment's
// scored snapshots (one panel, a line per swarm size).

import type { RunResult } from './run-recorder.js'

const COLORS: Record<string, string> = { agency: '#1f77b4', none: '#d62728', git: '#ff7f0e', manager: '#2ca02c' }
const FALLBACK = ['#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#17becf']

const PANEL_W = 330
const PANEL_H = 230
const MARGIN = { left: 48, right: 12, top: 28, bottom: 40 }
const COLUMNS = 3

export interface PlotSeries {
  label: string
  color: string
  dashed: boolean
  /** [ms, pass rate 0..1], one point per change; the line holds each rate until the next point */
  points: Array<[number, number]>
  /** when the series ends (last pass, or when the run stopped), ms */
  endMs: number
  /** printed in the panel when the series ends beyond its time axis */
  offEdgeNote?: string
}

export interface PlotPanel {
  title: string
  series: PlotSeries[]
}

export interface PlotOptions {
  /** the x axis label, e.g. "virtual time" */
  timeLabel: string
  /** panels per row (default 3) */
  columns?: number
  /** width of one panel in pixels (default 330) */
  panelWidth?: number
  /** extra room right of the panels, for the last tick label (default 0) */
  padRight?: number
  /** draw every series to its end (default: cut the time axis at 2.5 times the median end, and label the series beyond it) */
  wholeTime?: boolean
  legend: Array<{ label: string; color: string; dashed: boolean }>
}

function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')
}

/** A tick step (in hours) giving about five ticks up to `max` hours. */
function tickStep(max: number): number {
  const raw = max / 5
  const steps = [1 / 60, 5 / 60, 10 / 60, 15 / 60, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000]
  return steps.find(s => s >= raw) ?? Math.pow(10, Math.ceil(Math.log10(raw)))
}

export function hoursLabel(h: number): string {
  if (h === 0) return '0'
  if (h < 1) return `${Math.round(h * 60)} min`
  return `${Number(h.toFixed(1))} h`
}

/** Renders every result; results with the same `agents` share a panel. */
export function passRatePlot(results: readonly RunResult[], title: string): string {
  const sizes = [...new Set(results.map(r => r.agents))].sort((a, b) => a - b)
  const labels = [...new Set(results.map(r => r.label))]
  const colorOf = new Map<string, string>()
  let spare = 0
  for (const r of results) {
    if (colorOf.has(r.label)) continue
    const base = COLORS[r.strategy]
    const taken = [...colorOf.values()].includes(base ?? '')
    colorOf.set(r.label, base !== undefined && !taken ? base : FALLBACK[spare++ % FALLBACK.length])
  }
  const dashed = (r: RunResult): boolean => r.label !== labels.find(l => results.find(x => x.label === l)?.strategy === r.strategy)
  const at = (ms: number | null): string => (ms === null ? 'never' : hoursLabel(Number((ms / 3600_000).toPrecision(3))))
  const panels: PlotPanel[] = sizes.map(n => ({
    title: `${n} agent${n === 1 ? '' : 's'}`,
    series: results
      .filter(r => r.agents === n)
      .map(r => ({
        label: `${r.label}, ${n} agents`,
        color: colorOf.get(r.label) ?? '#000',
        dashed: dashed(r),
        points: r.passTimeline.map(([t, passed]): [number, number] => [t, passed / r.tasks]),
        endMs: r.finishedAtMs,
        offEdgeNote: `${r.label} → 50 % at ${at(r.timeToMs.p50)}, 100 % at ${at(r.timeToMs.p100)}`
      }))
  }))
  const legend = labels.map(label => {
    const r = results.find(x => x.label === label) as RunResult
    return { label, color: colorOf.get(label) ?? '#000', dashed: dashed(r) }
  })
  return passRatePanels(panels, title, { timeLabel: 'virtual time', legend })
}

/** The colour of the i-th line when no strategy names one. */
export function seriesColor(i: number): string {
  const all = [COLORS.agency, COLORS.none, COLORS.git, COLORS.manager, ...FALLBACK]
  return all[i % all.length]
}

export function passRatePanels(panels: readonly PlotPanel[], title: string, o: PlotOptions): string {
  const columns = o.columns ?? COLUMNS
  const rows = Math.ceil(panels.length / columns)
  const legendH = 22 * Math.ceil(o.legend.length / 2) + 10
  const panelW = o.panelWidth ?? PANEL_W
  const width = columns * panelW + (o.padRight ?? 0)
  const height = 40 + rows * PANEL_H + legendH
  const out: string[] = []
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="11">`
  )
  out.push(`<rect width="${width}" height="${height}" fill="white"/>`)
  out.push(`<text x="${width / 2}" y="22" text-anchor="middle" font-size="15">${esc(title)}</text>`)

  panels.forEach((panel, i) => {
    const ox = (i % columns) * panelW
    const oy = 40 + Math.floor(i / columns) * PANEL_H
    const pw = panelW - MARGIN.left - MARGIN.right
    const ph = PANEL_H - MARGIN.top - MARGIN.bottom
    // each panel has its own linear time axis, up to the slowest series' end,
    // but no further than 2.5 times the median one: a series that is far
    // slower runs off the edge and is labelled instead
    const finishes = panel.series.map(s => s.endMs / 3600_000).sort((a, b) => a - b)
    const median = finishes[Math.floor((finishes.length - 1) / 2)]
    const maxH = Math.max(
      1 / 60,
      o.wholeTime === true ? finishes[finishes.length - 1] : Math.min(finishes[finishes.length - 1], 2.5 * median)
    )
    const step = tickStep(maxH)
    // (a run that ends a hair past a tick does not get a whole empty tick more)
    const hi = Math.ceil(maxH / step - 1e-3) * step
    const ticks: number[] = []
    for (let t = 0; t <= hi + step / 2; t += step) ticks.push(t)
    const x = (hours: number): number => ox + MARGIN.left + (pw * Math.min(hours, hi)) / hi
    const y = (rate: number): number => oy + MARGIN.top + ph * (1 - rate)
    out.push(`<g><text x="${ox + MARGIN.left + pw / 2}" y="${oy + 16}" text-anchor="middle" font-size="13">${esc(panel.title)}</text>`)
    out.push(`<rect x="${ox + MARGIN.left}" y="${oy + MARGIN.top}" width="${pw}" height="${ph}" fill="none" stroke="#999"/>`)
    for (const r of [0, 0.3, 0.5, 0.9, 1]) {
      out.push(
        `<line x1="${ox + MARGIN.left}" x2="${ox + MARGIN.left + pw}" y1="${y(r).toFixed(1)}" y2="${y(r).toFixed(1)}" stroke="#eee"/>`
      )
      out.push(`<text x="${ox + MARGIN.left - 4}" y="${(y(r) + 4).toFixed(1)}" text-anchor="end">${r * 100}%</text>`)
    }
    for (const t of ticks) {
      out.push(`<line x1="${x(t).toFixed(1)}" x2="${x(t).toFixed(1)}" y1="${oy + MARGIN.top}" y2="${oy + MARGIN.top + ph}" stroke="#eee"/>`)
      out.push(`<text x="${x(t).toFixed(1)}" y="${oy + MARGIN.top + ph + 14}" text-anchor="middle">${hoursLabel(t)}</text>`)
    }
    out.push(
      `<text x="${ox + MARGIN.left + pw / 2}" y="${oy + MARGIN.top + ph + 30}" text-anchor="middle" fill="#555">${esc(o.timeLabel)}</text>`
    )
    for (const s of panel.series) {
      const pts: string[] = [`${x(0).toFixed(1)},${y(0).toFixed(1)}`]
      let lastRate = 0
      const every = Math.max(1, Math.floor(s.points.length / 300))
      s.points.forEach(([t, rate], k) => {
        if (k % every !== 0 && k !== s.points.length - 1) return
        const h = t / 3600_000
        if (h > hi) return
        pts.push(`${x(h).toFixed(1)},${y(lastRate).toFixed(1)}`, `${x(h).toFixed(1)},${y(rate).toFixed(1)}`)
        lastRate = rate
      })
      pts.push(`${x(hi).toFixed(1)},${y(lastRate).toFixed(1)}`)
      out.push(
        `<polyline fill="none" stroke="${s.color}" stroke-width="1.6"${s.dashed ? ' stroke-dasharray="5,3"' : ''} points="${pts.join(' ')}"><title>${esc(s.label)}</title></polyline>`
      )
    }
    panel.series
      .filter(s => s.endMs / 3600_000 > hi && s.offEdgeNote != null)
      .forEach((s, k) => {
        out.push(
          `<text x="${ox + MARGIN.left + pw - 4}" y="${(y(0.25) - 14 * k).toFixed(1)}" text-anchor="end" paint-order="stroke" stroke="white" stroke-width="3" fill="${s.color}">${esc(s.offEdgeNote as string)}</text>`
        )
      })
    out.push('</g>')
  })

  const ly = 40 + rows * PANEL_H + 8
  o.legend.forEach((item, i) => {
    const lx = 60 + (i % 2) * (width / 2)
    const yy = ly + 22 * Math.floor(i / 2)
    out.push(
      `<line x1="${lx}" x2="${lx + 30}" y1="${yy}" y2="${yy}" stroke="${item.color}" stroke-width="2.5"${item.dashed ? ' stroke-dasharray="5,3"' : ''}/>`
    )
    out.push(`<text x="${lx + 38}" y="${yy + 4}" font-size="12">${esc(item.label)}</text>`)
  })
  out.push('</svg>')
  return out.join('\n') + '\n'
}
