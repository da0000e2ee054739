// The shapes the daemon's JSON endpoints answer with (src/ui/swarm-view.ts).

export interface Summary {
  swarm: string
  version: string
  self: { peerId: string; name: string }
  uptimeSeconds: number
  goal: { text: string; testCommand: string; setBy: string; setByName: string; time: number } | null
  tasks: { open: number; claimed: number; expired: number; done: number; total: number }
  agents: { live: number; total: number }
  findings: { total: number; byKind: Record<string, number> }
  entries: number
  tests: { passed: number; failed: number; total: number; passRate: number; time: number; runs: number } | null
  integrations: { total: number; merged: number; conflict: number; failed: number }
  messages: { inbox: number; announcements: number }
  harness: string
  /** the swarm's spend and budget; null from a daemon without one */
  spend?: SpendSummary | null
}

export interface SpendSummary {
  inputTokens: number
  outputTokens: number
  usd: number
  estimated: boolean
  runs: number
  budget: { usd: number; tokens: number; hours: number; perAgentUsd: number }
  reached: boolean
  reasons: string[]
  holdUntil: number
}

export interface AgentRow {
  peerId: string
  name: string
  self: boolean
  live: boolean
  status: string
  held: Array<{ task: string; epoch: number }>
  lastSeen: number
  harness: string
  /** what its harness runs in (bwrap, none); '' when not known (peers do not announce it) */
  sandbox: string
}

export interface TaskRow {
  id: string
  title: string
  state: 'open' | 'claimed' | 'expired' | 'done'
  holder: string
  holderName: string
  holderLive: boolean
  epoch: number
  priority: number
  deps: Array<{ id: string; done: boolean }>
  scope: string[]
  commit: string
  doneBy: string
}

export interface FindingRow {
  id: string
  kind: string
  text: string
  paths: string[]
  tags: string[]
  author: string
  authorName: string
  time: number
  superseded: boolean
}

export interface IntegrationRow {
  time: number
  task: string
  epoch: number
  result: string
  commit: string
  author: string
  authorName: string
  tests: { passed: number; total: number } | null
}

export interface AgentPage {
  agent: AgentRow
  seq: number
  scanned: number
  claims: { items: Array<{ task: string; epoch: number; time: number; status: string }>; total: number }
  done: Array<{ task: string; commit: string }>
  findings: { items: FindingRow[]; total: number }
  integrations: { items: Array<{ task: string; epoch: number; result: string; commit: string; time: number }>; total: number }
  messages: {
    items: Array<{ direction: 'in' | 'out'; from: string; to: string; time: number; chars: number; delivered: boolean }>
    total: number
  }
}
