// What an agent's session updates say it is doing, reduced to what agentd
// shows: each tool call once when it starts and once when it ends, plan
// changes, the agent's message of the turn (cut), and token counts when the
// agent reports them. Pure: the session driver feeds it updates and passes the
// results on to the status line, `agency events` and metrics.

export type ActivityEvent =
  | { kind: 'tool_call'; id: string; title: string; toolKind: string }
  | { kind: 'tool_call_done'; id: string; title: string; toolKind: string; status: string }
  | { kind: 'plan'; entries: Array<{ content: string; status: string }> }

export interface TokenUsage {
  input: number
  output: number
  thought: number
  cachedRead: number
  cachedWrite: number
}

/** The kinds of tool call ACP names; anything else is counted as other. */
export const TOOL_KINDS = ['read', 'edit', 'delete', 'move', 'search', 'execute', 'think', 'fetch', 'switch_mode', 'other'] as const

const MAX_MESSAGE_CHARS = 2000

export class TurnActivity {
  private readonly calls = new Map<string, { title: string; toolKind: string; done: boolean }>()
  private message = ''
  /** Tokens in the agent's context, from its last usage_update. */
  contextTokens: number | undefined
  private current = ''

  /** Tool calls seen this turn. */
  get toolCalls(): number {
    return this.calls.size
  }

  /** The agent's words this turn, cut. */
  get text(): string {
    return this.message
  }

  /** The title the session's updates gave a tool call, if any. */
  titleOf(id: string | undefined): string | undefined {
    return id == null ? undefined : this.calls.get(id)?.title
  }

  /** What the agent is doing right now, in a few words, for its status line. */
  get doing(): string {
    return this.current
  }

  update(u: Record<string, unknown>): ActivityEvent[] {
    switch (u.sessionUpdate) {
      case 'tool_call':
      case 'tool_call_update':
        return this.toolCall(u)
      case 'agent_message_chunk': {
        const c = u.content as Record<string, unknown> | undefined
        if (c?.type === 'text' && typeof c.text === 'string' && this.message.length < MAX_MESSAGE_CHARS)
          this.message = (this.message + c.text).slice(0, MAX_MESSAGE_CHARS)
        return []
      }
      case 'plan': {
        const entries = Array.isArray(u.entries)
          ? u.entries.map((e: Record<string, unknown>) => ({
              content: typeof e?.content === 'string' ? e.content : '',
              status: typeof e?.status === 'string' ? e.status : ''
            }))
          : []
        const active = entries.find(e => e.status === 'in_progress')
        if (active != null) this.current = `plan: ${active.content}`
        return [{ kind: 'plan', entries }]
      }
      case 'usage_update':
        if (typeof u.used === 'number' && Number.isFinite(u.used)) this.contextTokens = u.used
        return []
      default:
        return []
    }
  }

  private toolCall(u: Record<string, unknown>): ActivityEvent[] {
    const id = typeof u.toolCallId === 'string' ? u.toolCallId : ''
    if (id === '') return []
    const out: ActivityEvent[] = []
    let call = this.calls.get(id)
    const title = typeof u.title === 'string' && u.title !== '' ? u.title : undefined
    const toolKind = typeof u.kind === 'string' && (TOOL_KINDS as readonly string[]).includes(u.kind) ? u.kind : undefined
    if (call == null) {
      call = { title: title ?? 'a tool', toolKind: toolKind ?? 'other', done: false }
      this.calls.set(id, call)
      out.push({ kind: 'tool_call', id, title: call.title, toolKind: call.toolKind })
    } else {
      // Agents send a placeholder title first ("Terminal", "Write") and the real one in an update.
      if (title != null) call.title = title
      if (toolKind != null) call.toolKind = toolKind
    }
    const status = typeof u.status === 'string' ? u.status : ''
    if (!call.done && (status === 'completed' || status === 'failed')) {
      call.done = true
      out.push({ kind: 'tool_call_done', id, title: call.title, toolKind: call.toolKind, status })
    } else if (!call.done) {
      this.current = call.title
    }
    return out
  }
}

/** Token counts from a prompt response's usage (ACP's unstable `usage`), if the agent reported any. */
export function usageOf(response: Record<string, unknown> | undefined): TokenUsage | undefined {
  const n = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : 0)
  const u = response?.usage as Record<string, unknown> | undefined
  let usage: TokenUsage | undefined
  if (u != null && typeof u === 'object') {
    usage = {
      input: n(u.inputTokens),
      output: n(u.outputTokens),
      thought: n(u.thoughtTokens),
      cachedRead: n(u.cachedReadTokens),
      cachedWrite: n(u.cachedWriteTokens)
    }
  } else {
    // Gemini CLI reports a turn's tokens in _meta.quota.token_count.
    const quota = ((response?._meta as Record<string, unknown> | undefined)?.quota as Record<string, unknown> | undefined)?.token_count as
      Record<string, unknown> | undefined
    if (quota != null && typeof quota === 'object')
      usage = { input: n(quota.input_tokens), output: n(quota.output_tokens), thought: 0, cachedRead: 0, cachedWrite: 0 }
  }
  return usage != null && Object.values(usage).some(v => v > 0) ? usage : undefined
}
