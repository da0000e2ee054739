// What agentd says to the agent at the start of each turn of a persistent
// ACP session: the shared prompt on the first turn of a session (with a note
// on how the session works, and after a restart a summary of where the agent
// was), then on every turn what arrived in its inbox since the last one
// (peers' messages and the daemon's notices), why the previous turn was
// stopped if agentd stopped it, and what the board says is next. Pure.

/** One inbox item as the agent is told it. */
export interface InboxNote {
  cursor: number
  /** 'message' for a peer's message, else the notice kind (claim_lost, overlap, ...) */
  kind: string
  from: string
  fromName: string
  task: string
  text: string
  time: number
}

/** A task this agent holds, for the restart summary. */
export interface HeldTask {
  task: string
  epoch: number
  title?: string
}

export interface TurnInput {
  /** The shared prompt: the first turn of a session starts with it. */
  prompt?: string
  /** The session was opened again after the previous one ended: why, and where the agent was. */
  resume?: { why: string; held: HeldTask[]; repeated: InboxNote[] }
  /** agentd stopped the previous turn: why. */
  stopped?: string
  /** Items the stopped turn had carried, for an agent that drops a cancelled turn from its history. */
  repeated?: InboxNote[]
  /** Inbox items delivered with this turn (marked read as it is sent). */
  notes: InboxNote[]
  /** Unread items left for a later turn. */
  moreUnread: number
  /** What the board says to do next (the answer of `agency wait`). */
  next?: string
}

/** At most this many inbox items per turn; the rest come with the next one. */
export const MAX_NOTES_PER_TURN = 20
/** An item's text is cut to this many characters in a turn (agency inbox has it whole). */
export const MAX_NOTE_CHARS = 4000

export const SESSION_NOTE = [
  '## This session',
  "agentd keeps you in one session and speaks for your swarm in it: peers' direct messages and your daemon's notices",
  '(a claim lost or superseded, an overlap with a peer, a review asked of you, an integration result, a changed goal)',
  'arrive here as the next turn, already marked read, so you need not poll the inbox. When you have nothing to do, end',
  'your turn instead of waiting: agentd starts a new one when there is work. If agentd has to stop a turn (your claim',
  'was lost, say), the next turn says why.'
].join('\n')

export function composeTurn(t: TurnInput): string {
  const parts: string[] = []
  if (t.prompt != null) parts.push(t.prompt.trimEnd(), SESSION_NOTE)
  if (t.resume != null) parts.push(resumeText(t.resume))
  if (t.stopped != null) parts.push(`[agentd] I stopped your previous turn: ${t.stopped}`)
  if (t.repeated != null && t.repeated.length > 0)
    parts.push(['[agentd] That turn had told you (repeated: you do not keep a stopped turn):', ...t.repeated.map(noteLine)].join('\n'))
  if (t.notes.length > 0) {
    // the operator's words first
    const notes = [...t.notes.filter(n => n.kind === OPERATOR_NOTICE), ...t.notes.filter(n => n.kind !== OPERATOR_NOTICE)]
    parts.push(
      [
        `[agentd] New in your inbox (${t.notes.length}${t.moreUnread > 0 ? ` of ${t.notes.length + t.moreUnread}` : ''}, now marked read):`,
        ...notes.map(noteLine)
      ].join('\n')
    )
  }
  if (t.moreUnread > 0)
    parts.push(`[agentd] ${t.moreUnread} more unread: they come with your next turn, or read them now with read_inbox (agency inbox).`)
  if (t.next != null && t.next !== '') parts.push(`[agentd] Next: ${t.next}`)
  if (parts.length === 0) parts.push('[agentd] Carry on.')
  return parts.join('\n\n')
}

function resumeText(r: NonNullable<TurnInput['resume']>): string {
  const lines = [`[agentd] This is a new session: the previous one ended (${r.why}). Where you were:`]
  if (r.held.length > 0) {
    for (const h of r.held)
      lines.push(
        `- you hold ${h.task}@${h.epoch}${h.title != null && h.title !== '' ? ` (${h.title})` : ''}: your workspace is on its branch with your commits so far; agency task show ${h.task}`
      )
  } else {
    lines.push('- you hold no task')
  }
  if (r.repeated.length > 0) {
    lines.push('- the last turn of that session had told you (repeated here because it did not finish):')
    for (const n of r.repeated) lines.push(`  ${noteLine(n)}`)
  }
  return lines.join('\n')
}

export function noteLine(n: InboxNote): string {
  const text = n.text.length > MAX_NOTE_CHARS ? `${n.text.slice(0, MAX_NOTE_CHARS)}... (cut; agency inbox --all has it whole)` : n.text
  if (n.kind === 'message') return `- message from ${n.fromName !== '' ? `${n.fromName} (${n.from})` : n.from}: ${text}`
  if (n.kind === OPERATOR_NOTICE) return `- from the operator (the person steering the swarm): ${text}`
  return `- notice ${n.kind}${n.task !== '' ? ` (task ${n.task})` : ''}: ${text}`
}

/** The kind of an operator's message in the inbox (core/operator): shown first, and pushed into a running turn. */
export const OPERATOR_NOTICE = 'operator'

/** Notices that cannot wait for the turn to end: the work in progress is no longer the agent's, or the operator wrote. */
export const URGENT_NOTICES: readonly string[] = ['claim_lost', 'claim_superseded', OPERATOR_NOTICE]

export function isUrgent(n: InboxNote): boolean {
  return URGENT_NOTICES.includes(n.kind)
}
