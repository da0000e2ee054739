// The dashboard page: a header with the swarm's summary, tabs, and the view
// the address names (#/agents, #/board, #/findings, #/messages, #/tests,
// #/agent/<peer id>, #/operator). It fetches and listens; only the operator's
// view, signed in with the operator's key, sends actions.
import 'uplot/dist/uPlot.min.css'
import './style.css'
import { render, type VNode } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import { feed, useFeedState, useResource } from './api.js'
import { html, percent } from './components.js'
import { OverviewView } from './views/overview.js'
import { AgentsView } from './views/agents.js'
import { BoardView } from './views/board.js'
import { FindingsView } from './views/findings.js'
import { MessagesView } from './views/messages.js'
import { TestsView } from './views/tests.js'
import { AgentView } from './views/agent.js'
import { OperatorView } from './views/operator.js'
import type { Summary } from './types.js'

interface Route {
  view: string
  arg: string
}

function parseRoute(hash: string): Route {
  const parts = hash.replace(/^#\/?/, '').split('/')
  let arg: string
  try {
    arg = decodeURIComponent(parts.slice(1).join('/'))
  } catch {
    arg = ''
  }
  return { view: parts[0] === '' ? 'overview' : parts[0], arg }
}

function useRoute(): Route {
  const [route, setRoute] = useState(parseRoute(location.hash))
  useEffect(() => {
    const on = (): void => {
      setRoute(parseRoute(location.hash))
      window.scrollTo(0, 0)
    }
    window.addEventListener('hashchange', on)
    return () => {
      window.removeEventListener('hashchange', on)
    }
  }, [])
  return route
}

function Tabs({ view, s }: { view: string; s?: Summary }): VNode {
  const tabs: Array<[string, string, string]> = [
    ['overview', 'Overview', ''],
    ['agents', 'Agents', s != null ? `${s.agents.live}/${s.agents.total}` : ''],
    ['board', 'Board', s != null ? `${s.tasks.done}/${s.tasks.total}` : ''],
    ['findings', 'Findings', s != null ? s.findings.total.toLocaleString() : ''],
    ['messages', 'Messages', s != null ? String(s.messages.inbox + s.messages.announcements) : ''],
    ['tests', 'Tests', s?.tests != null ? percent(s.tests.passRate) : ''],
    ['operator', 'Operator', '']
  ]
  const current = view === 'agent' ? 'agents' : view
  return html`<nav class="tabs">
    ${tabs.map(([id, label, n]) => html`<a key=${id} href=${`#/${id === 'overview' ? '' : id}`} class=${current === id ? 'current' : ''} aria-current=${current === id ? 'page' : undefined}>${label}${n !== '' ? html` <span class="n">${n}</span>` : null}</a>`)}
  </nav>`
}

function App(): VNode {
  const route = useRoute()
  const summary = useResource<Summary>('api/summary', ['summary'])
  const { connected } = useFeedState()
  const s = summary.data
  let body: VNode
  switch (route.view) {
    case 'agents':
      body = html`<${AgentsView} />`
      break
    case 'agent':
      body = html`<${AgentView} key=${route.arg} id=${route.arg} />`
      break
    case 'board':
      body = html`<${BoardView} />`
      break
    case 'findings':
      body = html`<${FindingsView} />`
      break
    case 'messages':
      body = html`<${MessagesView} />`
      break
    case 'tests':
      body = html`<${TestsView} />`
      break
    case 'operator':
      body = html`<${OperatorView} />`
      break
    default:
      body = html`<${OverviewView} summary=${s} />`
  }
  useEffect(() => {
    if (s != null) document.title = `${s.tests != null ? percent(s.tests.passRate) + ' · ' : ''}${s.swarm} · agency`
  }, [s?.swarm, s?.tests?.passRate])
  return html`<div class="shell">
    <header class="top">
      <div class="brand">
        <span class="logo">agency</span><span class="swarm">swarm <strong>${s?.swarm ?? '…'}</strong></span>
      </div>
      <div class="goal" title=${s?.goal?.text ?? ''}>${s?.goal != null ? s.goal.text : s != null ? 'no goal set' : ''}</div>
      <div class="conn">
        <span class=${`dot ${connected ? 'on' : 'off'}`}></span><span id="connection">${connected ? 'live' : 'connecting…'}</span>
        ${s != null ? html`<span class="self" title=${s.self.peerId}>seen from <strong>${s.self.name}</strong></span>` : null}
      </div>
    </header>
    <${Tabs} view=${route.view} s=${s} />
    ${summary.error != null ? html`<p class="error" role="alert">${summary.error}</p>` : null}
    <main>${body}</main>
    <footer>
      agency ${s?.version ?? ''} · a view of this daemon's board, record and presence; the operator steers from the Operator tab
    </footer>
  </div>`
}

feed.start()
const root = document.getElementById('app')!
root.textContent = '' // the "Loading" line
render(html`<${App} />`, root)
