// Integrations and test runs: the shared branch's pass rate over time, each
// integration a point on it, and the integrations a page at a time.
import type { VNode } from 'preact'
import { useState } from 'preact/hooks'
import { url, useResource, type Page } from '../api.js'
import { Ago, AgentLink, Empty, ErrorLine, KindBadge, Pager, Section, html, percent } from '../components.js'
import { PassRatePlot, type IntegrationPoint, type RunPoint } from '../pass-rate-plot.js'
import type { IntegrationRow } from '../types.js'

interface Runs {
  runs: RunPoint[]
  integrations: IntegrationPoint[]
  totals: { runs: number; integrations: number }
}

export function PassRatePanel({ height }: { height?: number }): VNode {
  const r = useResource<Runs>(url('api/runs', { points: 1000 }), ['runs'])
  const last = r.data?.runs.at(-1)
  return html`<${Section} title="Pass rate" extra=${r.data != null ? html`<span class="muted">${r.data.totals.runs} test runs, ${r.data.totals.integrations} integrations${last != null ? html` · now <strong>${percent(last[2] > 0 ? last[1] / last[2] : 0)}</strong>` : null}</span>` : null}>
    <${ErrorLine} error=${r.error} />
    ${r.data == null ? null : r.data.runs.length === 0 && r.data.integrations.length === 0 ? html`<${Empty}>No integration or test run yet.</${Empty}>` : html`<${PassRatePlot} runs=${r.data.runs} integrations=${r.data.integrations} height=${height} />`}
  </${Section}>`
}

function Integrations(): VNode {
  const [offset, setOffset] = useState(0)
  const r = useResource<Page<IntegrationRow>>(url('api/integrations', { offset, limit: 50 }), ['runs'])
  return html`<${Section} title="Integrations">
    <${ErrorLine} error=${r.error} />
    ${
      r.data == null
        ? null
        : r.data.items.length === 0
          ? html`<${Empty}>No integration yet.</${Empty}>`
          : html`<table class="integrations">
              <thead>
                <tr>
                  <th>When</th>
                  <th>Task</th>
                  <th>Result</th>
                  <th>By</th>
                  <th>Commit</th>
                  <th>Tests</th>
                </tr>
              </thead>
              <tbody>
                ${r.data.items.map(
                  (i, n) =>
                    html`<tr key=${n}>
                      <td><${Ago} time=${i.time} /></td>
                      <td><code>${i.task}</code><small>@${i.epoch}</small></td>
                      <td><${KindBadge} kind=${i.result} /></td>
                      <td><${AgentLink} id=${i.author} name=${i.authorName} /></td>
                      <td><code>${i.commit.slice(0, 10)}</code></td>
                      <td>${i.tests != null ? `${i.tests.passed}/${i.tests.total}` : html`<span class="muted">—</span>`}</td>
                    </tr>`
                )}
              </tbody>
            </table>`
    }
    ${r.data != null ? html`<${Pager} offset=${r.data.offset} limit=${r.data.limit} total=${r.data.total} onPage=${setOffset} />` : null}
  </${Section}>`
}

export function TestsView(): VNode {
  return html`<div class="stack"><${PassRatePanel} height=${320} /><${Integrations} /></div>`
}
