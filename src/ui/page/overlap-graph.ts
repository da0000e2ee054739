// Agents whose live claims' scopes meet, drawn as a graph: a node per agent
// on a circle, an edge per overlapping pair of claims. The most connected
// agents are drawn when there are too many to read.
import type { VNode } from 'preact'
import { html, short, agentHref } from './components.js'

export interface OverlapRow {
  a: { task: string; holder: string; name: string }
  b: { task: string; holder: string; name: string }
  paths: string[]
}

const MAX_NODES = 40

export function OverlapGraph({ rows }: { rows: OverlapRow[] }): VNode {
  const degree = new Map<string, number>()
  const names = new Map<string, string>()
  for (const r of rows) {
    for (const side of [r.a, r.b]) {
      degree.set(side.holder, (degree.get(side.holder) ?? 0) + 1)
      names.set(side.holder, side.name !== '' ? side.name : short(side.holder))
    }
  }
  const nodes = [...degree.keys()].sort((x, y) => (degree.get(y) ?? 0) - (degree.get(x) ?? 0) || x.localeCompare(y)).slice(0, MAX_NODES)
  const size = 360
  const c = size / 2
  const radius = nodes.length <= 1 ? 0 : c - 60
  const pos = new Map(
    nodes.map((id, i) => {
      const a = (2 * Math.PI * i) / nodes.length - Math.PI / 2
      return [id, { x: c + radius * Math.cos(a), y: c + radius * Math.sin(a) }]
    })
  )
  const edges = new Map<string, { from: string; to: string; tasks: string[] }>()
  for (const r of rows) {
    if (!pos.has(r.a.holder) || !pos.has(r.b.holder)) continue
    const [from, to] = [r.a.holder, r.b.holder].sort()
    const key = `${from} ${to}`
    const e = edges.get(key) ?? { from, to, tasks: [] }
    e.tasks.push(`${r.a.task} ~ ${r.b.task} on ${r.paths.join(', ')}`)
    edges.set(key, e)
  }
  return html`<svg class="graph" viewBox=${`0 0 ${size} ${size}`} role="img" aria-label="agents whose scopes overlap">
    ${[...edges.values()].map(e => {
      const p = pos.get(e.from)!
      const q = pos.get(e.to)!
      return html`<line x1=${p.x} y1=${p.y} x2=${q.x} y2=${q.y} stroke-width=${Math.min(6, 1 + e.tasks.length)}
        ><title>${e.tasks.join('\n')}</title></line
      >`
    })}
    ${nodes.map(id => {
      const p = pos.get(id)!
      const anchor = p.x < c - 5 ? 'end' : p.x > c + 5 ? 'start' : 'middle'
      const dx = anchor === 'end' ? -12 : anchor === 'start' ? 12 : 0
      const dy = anchor === 'middle' ? (p.y < c ? -14 : 22) : 4
      return html`<a href=${agentHref(id)}
        ><circle cx=${p.x} cy=${p.y} r="8"><title>${id}</title></circle
        ><text x=${p.x + dx} y=${p.y + dy} text-anchor=${anchor}>${names.get(id)}</text></a
      >`
    })}
  </svg>`
}
