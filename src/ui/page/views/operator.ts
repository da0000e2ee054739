// The operator's view (#/operator): who steers, the pause, the approvals
// waiting, the audit of operator actions, and, once signed in with the
// operator's key, the actions: pause, resume, broadcast, message an agent,
// add a task, approve or deny. The key stays in this page's memory; each
// action is signed here and the daemon only carries it.
import type { VNode } from 'preact'
import { useState } from 'preact/hooks'
import { url, useResource, type Page } from '../api.js'
import { Ago, AgentLink, Empty, ErrorLine, Section, html, short } from '../components.js'
import { readKeyFile, signAction, signChallenge, type ActionFields, type OperatorKey } from '../operator-signing.js'

interface Approval {
  id: string
  agent: string
  title: string
  grant: string
  detail: string
  task: string
  time: number
  expiresAt: number
  state: string
  answeredBy?: string
  always: boolean
}
interface AuditRow {
  entryId: string
  carrier: string
  verdict: string
  operator: string
  id: string
  kind: string
  time: number
  summary: string
}
interface OperatorState {
  operators: string[]
  source: string
  paused: { paused: boolean; reason: string; by?: string; time?: number }
  approvals: Approval[]
  audit: AuditRow[]
  session: { operator: string; csrf: string } | null
}
interface AgentRow {
  peerId: string
  name: string
}

/** The key, once read: kept for the page's life, in memory only. */
let heldKey: OperatorKey | undefined

async function post(path: string, body: unknown, csrf?: string): Promise<unknown> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' }
  if (csrf !== undefined) headers['x-agency-csrf'] = csrf
  const res = await fetch(path, { method: 'POST', headers, body: JSON.stringify(body), credentials: 'same-origin' })
  const value = (await res.json().catch(() => null)) as { error?: { message?: string } } | null
  if (!res.ok) throw new Error(value?.error?.message ?? `${res.status} ${res.statusText}`)
  return value
}

function SignIn({ onDone }: { onDone: () => void }): VNode {
  const [error, setError] = useState<string>()
  const [busy, setBusy] = useState(false)
  const onFile = async (ev: Event): Promise<void> => {
    const file = (ev.target as HTMLInputElement).files?.[0]
    if (file == null) return
    setBusy(true)
    setError(undefined)
    try {
      const key = await readKeyFile(await file.text())
      const { nonce } = (await (await fetch('api/operator/challenge', { credentials: 'same-origin' })).json()) as { nonce: string }
      await post('api/operator/login', { operator: key.operator, nonce, sig: await signChallenge(key, nonce) })
      heldKey = key
      onDone()
    } catch (err) {
      setError((err as Error).message)
    } finally {
      setBusy(false)
      ;(ev.target as HTMLInputElement).value = ''
    }
  }
  return html`<div class="signin">
    <label
      >Sign in as the operator with your key file (from <code>agency operator keygen</code>; it stays in this page):
      <input
        type="file"
        name="operator-key"
        disabled=${busy}
        onChange=${(e: Event) => {
          void onFile(e)
        }}
    /></label>
    <${ErrorLine} error=${error} />
  </div>`
}

function Actions({ s, onDone }: { s: OperatorState; onDone: () => void }): VNode {
  const [error, setError] = useState<string>()
  const [note, setNote] = useState<string>()
  const agents = useResource<Page<AgentRow>>(url('api/agents', { limit: 500 }), ['agents'])
  const session = s.session as NonNullable<OperatorState['session']>
  const act = async (fields: ActionFields, done: string): Promise<void> => {
    setError(undefined)
    setNote(undefined)
    try {
      if (heldKey == null || heldKey.operator !== session.operator)
        throw new Error('the key is not in this page any more (a reload forgets it): sign in again')
      await post('api/operator/action', await signAction(heldKey, fields), session.csrf)
      setNote(done)
      onDone()
    } catch (err) {
      setError((err as Error).message)
    }
  }
  const form =
    (name: string, run: (data: FormData) => Promise<void>) =>
    (ev: Event): void => {
      ev.preventDefault()
      const f = ev.target as HTMLFormElement
      void run(new FormData(f)).then(() => {
        f.reset()
      })
    }
  const text = (d: FormData, k: string): string => {
    const v = d.get(k)
    return typeof v === 'string' ? v.trim() : ''
  }
  return html`<div class="operator-actions">
    <p>Signed in as operator <code title=${session.operator}>${short(session.operator)}</code>.</p>
    ${
      s.paused.paused
        ? html`<button
            type="button"
            name="resume"
            onClick=${() => {
              void act({ kind: 'resume' }, 'resumed')
            }}
          >
            Resume the swarm
          </button>`
        : html`<form
            class="inline"
            name="pause"
            onSubmit=${form('pause', async d => {
              await act({ kind: 'pause', text: text(d, 'reason'), leaseKeepMs: 3_600_000 }, 'paused')
            })}
          >
            <input name="reason" placeholder="why (shown to every agent)" maxlength="500" /><button type="submit">Pause the swarm</button>
          </form>`
    }
    <form
      class="inline"
      name="broadcast"
      onSubmit=${form('broadcast', async d => {
        if (text(d, 'text') !== '') await act({ kind: 'message', text: text(d, 'text') }, 'sent to every agent')
      })}
    >
      <input name="text" placeholder="a message to every agent" maxlength="4000" /><button type="submit">Broadcast</button>
    </form>
    <form
      class="inline"
      name="message"
      onSubmit=${form('message', async d => {
        if (text(d, 'text') !== '' && text(d, 'to') !== '') await act({ kind: 'message', to: text(d, 'to'), text: text(d, 'text') }, 'sent')
      })}
    >
      <select name="to">
        ${(agents.data?.items ?? []).map(a => html`<option key=${a.peerId} value=${a.peerId}>${a.name}</option>`)}
      </select>
      <input name="text" placeholder="a message to this agent" maxlength="4000" /><button type="submit">Send</button>
    </form>
    <form
      class="inline"
      name="task"
      onSubmit=${form('task', async d => {
        await act(
          { kind: 'task', task: { id: text(d, 'id'), title: text(d, 'title'), priority: Number(text(d, 'priority') || '0') } },
          `added ${text(d, 'id')}`
        )
      })}
    >
      <input name="id" placeholder="task id (a slug)" maxlength="64" required /><input name="title" placeholder="title" maxlength="200" />
      <input name="priority" type="number" placeholder="priority" /><button type="submit">Add task</button>
    </form>
    ${note != null ? html`<p class="done" role="status">${note}</p>` : null}
    <${ErrorLine} error=${error} />
    <${ApprovalList}
      approvals=${s.approvals}
      answer=${(id: string, allow: boolean, always: boolean) => {
        void act({ kind: 'approval', request: id, allow, always }, `${allow ? 'approved' : 'denied'} ${id}`)
      }}
    />
  </div>`
}

function ApprovalList({
  approvals,
  answer
}: {
  approvals: Approval[]
  answer?: (id: string, allow: boolean, always: boolean) => void
}): VNode {
  const pending = approvals.filter(a => a.state === 'pending')
  return html`<${Section} title="Approvals waiting">
    ${
      pending.length === 0
        ? html`<${Empty}>No agent waits for an approval.</${Empty}>`
        : html`<ul class="approvals">
            ${pending.map(
              a =>
                html`<li key=${a.id} data-approval=${a.id}>
                  <div class="meta">
                    <${AgentLink} id=${a.agent} /> asks
                    <${Ago} time=${a.time} />${a.task !== '' ? html` on task <code>${a.task}</code>` : null}; needs <code>${a.grant}</code>
                  </div>
                  <p class="text">${a.title}</p>
                  ${
                    answer != null
                      ? html`<div class="buttons">
                          <button
                            type="button"
                            name="approve"
                            onClick=${() => {
                              answer(a.id, true, false)
                            }}
                          >
                            Approve
                          </button>
                          <button
                            type="button"
                            name="approve-always"
                            onClick=${() => {
                              answer(a.id, true, true)
                            }}
                          >
                            Approve always
                          </button>
                          <button
                            type="button"
                            name="deny"
                            onClick=${() => {
                              answer(a.id, false, false)
                            }}
                          >
                            Deny
                          </button>
                        </div>`
                      : null
                  }
                </li>`
            )}
          </ul>`
    }
  </${Section}>`
}

export function OperatorView(): VNode {
  const [n, setN] = useState(0)
  const r = useResource<OperatorState>(url('api/operator', { n }), ['summary', 'board', 'messages'])
  const s = r.data
  const refresh = (): void => {
    setN(x => x + 1)
  }
  if (s == null) return html`<${ErrorLine} error=${r.error} />`
  return html`<div class="operator">
    <${Section} title="Operator">
      <p class="who">${
        s.operators.length === 0
          ? 'This swarm has no operator: any member may set the goal. Start every agentd with --operator <key> to have one.'
          : html`Operators (${s.source === 'goal' ? 'from the first goal' : 'configured'}):
            ${s.operators.map(k => html`<code key=${k} title=${k}>${short(k)}</code> `)}`
      }</p>
      <p class=${`pause ${s.paused.paused ? 'paused' : ''}`} id="pause-state">${s.paused.paused ? `Paused${s.paused.reason !== '' ? `: ${s.paused.reason}` : ''}` : 'Running'}</p>
      ${s.operators.length === 0 ? null : s.session == null ? html`<${SignIn} onDone=${refresh} />` : html`<${Actions} s=${s} onDone=${refresh} />`}
    </${Section}>
    ${s.session == null ? html`<${ApprovalList} approvals=${s.approvals} />` : null}
    <${Section} title="Operator actions (the audit)">
      ${
        s.audit.length === 0
          ? html`<${Empty}>No operator action yet.</${Empty}>`
          : html`<table class="audit">
              <thead>
                <tr>
                  <th>When</th>
                  <th>Action</th>
                  <th>Verdict</th>
                  <th>Signed by</th>
                  <th>Carried by</th>
                </tr>
              </thead>
              <tbody>
                ${s.audit.map(
                  a =>
                    html`<tr key=${a.entryId} class=${a.verdict}>
                      <td>${a.time > 0 ? html`<${Ago} time=${a.time} />` : '-'}</td>
                      <td>${a.summary}</td>
                      <td>${a.verdict}</td>
                      <td><code title=${a.operator}>${short(a.operator)}</code></td>
                      <td><${AgentLink} id=${a.carrier} /></td>
                    </tr>`
                )}
              </tbody>
            </table>`
      }
    </${Section}>
  </div>`
}
