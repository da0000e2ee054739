// The agent's permission requests that wait for the operator (--acp-permissions
// ...,ask): each is an approval_request entry of this daemon, so every daemon
// shows it (agency approvals, the dashboard); the answer is the operator's
// signed approval action, read from the board as it arrives. Unanswered
// after the timeout, or given up by the session, the request is closed in
// the log with the reason, and the agent is denied with it. A denial is also
// told to the agent in its inbox: an agent's own answer to a refused tool
// call carries no reason (Claude Code's says "User refused permission").
import { randomBytes } from 'node:crypto'
import type { Board } from '../core/board/index.js'
import type { ApprovalRequest, DeepPartial } from '../gen/agency/v1/log.js'
import type { PermissionAsker } from '../harness/acp/acp-session.js'
import type { Logger } from '../logger.js'

export const DEFAULT_APPROVAL_TIMEOUT_MS = 10 * 60_000

export interface ApprovalQueueInit {
  board: () => Board
  append: (request: DeepPartial<ApprovalRequest>) => Promise<unknown>
  /** calls back after each entry the board folded; returns the unsubscribe function */
  onEntry: (listener: () => void) => () => void
  timeoutMs?: number
  wallClock: () => number
  /** the task the agent works on, for the request */
  task: () => string
  /** tells the agent (an inbox notice) */
  tell: (text: string, once: string) => void
  logger: Logger
}

export class ApprovalQueue implements PermissionAsker {
  private readonly init: ApprovalQueueInit
  private readonly timeoutMs: number

  constructor(init: ApprovalQueueInit) {
    this.init = init
    this.timeoutMs = init.timeoutMs ?? DEFAULT_APPROVAL_TIMEOUT_MS
  }

  async ask(q: Parameters<PermissionAsker['ask']>[0], signal: AbortSignal): Promise<{ allow: boolean; always: boolean; reason: string }> {
    if (this.init.board().operators().keys.length === 0)
      return { allow: false, always: false, reason: `${q.reason}; the swarm has no operator to ask` }
    const id = randomBytes(12).toString('hex')
    const minutes = Math.max(1, Math.round(this.timeoutMs / 60_000))
    await this.init.append({
      id,
      title: q.what,
      grant: q.grant ?? '',
      detail: q.reason,
      expiresAt: this.init.wallClock() + this.timeoutMs,
      task: this.init.task()
    })
    this.init.tell(
      `your request "${q.what}" waits for the operator (approval ${id}); it is denied if nobody answers within ${minutes} min`,
      `approval:${id}`
    )
    return await new Promise(resolve => {
      let done = false
      const finish = (answer: { allow: boolean; always: boolean; reason: string }, closed?: string): void => {
        if (done) return
        done = true
        off()
        clearTimeout(timer)
        signal.removeEventListener('abort', onAbort)
        if (closed !== undefined)
          this.init.append({ id, closed }).catch(err => {
            this.init.logger.warn({ err, id }, 'cannot close an approval request')
          })
        if (!answer.allow && closed !== 'withdrawn') {
          this.init.tell(
            closed === 'timed_out'
              ? `nobody answered your request (approval ${id}) within ${minutes} min, so it was denied: ${q.what}`
              : `the operator denied your request (approval ${id}): ${q.what}`,
            `approval-answer:${id}`
          )
        }
        resolve(answer)
      }
      const check = (): void => {
        const a = this.init
          .board()
          .approvalRequests()
          .find(x => x.id === id)
        if (a?.state === 'approved')
          finish({ allow: true, always: a.always, reason: `approved by the operator${a.always ? ' (always)' : ''}` })
        else if (a?.state === 'denied') finish({ allow: false, always: false, reason: 'denied by the operator' })
      }
      const onAbort = (): void => {
        finish({ allow: false, always: false, reason: 'the turn was stopped before the operator answered' }, 'withdrawn')
      }
      const off = this.init.onEntry(check)
      const timer = setTimeout(() => {
        finish({ allow: false, always: false, reason: `nobody answered within ${minutes} min (approval ${id})` }, 'timed_out')
      }, this.timeoutMs)
      signal.addEventListener('abort', onAbort)
      if (signal.aborted) onAbort()
      check()
    })
  }
}
