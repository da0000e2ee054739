// The operator's use cases in agentd: carry an action the operator signed
// into the log (checked first, so a forgery is refused at the door and not
// only by the fold), refuse what only an operator may do to anyone else,
// and count every refusal, at the API and of what peers wrote
// (agentd_operator_refusals_total).
import type { Board } from '../core/board/index.js'
import { InvalidArgumentError } from '../core/errors.js'
import type { StoredEntry } from '../core/log/ingest-result.js'
import {
  NoOperatorError,
  OPERATOR_ONLY_ENTRY_KINDS,
  OperatorOnlyError,
  REFUSED_VERDICTS,
  openEnvelope,
  summarise
} from '../core/operator/index.js'
import type { OperatorEnvelope } from '../gen/agency/v1/log.js'
import type { Metrics } from '../metrics/metrics.js'

type RefusalSource = 'api' | 'peer'
type RefusalReason = 'unsigned' | 'not_operator' | 'bad_signature' | 'malformed'

export interface OperatorServiceInit {
  board: () => Board
  /** appends an operator entry of this daemon */
  append: (envelope: OperatorEnvelope) => Promise<StoredEntry>
  /** whether this daemon knows a peer (an author in its log, or a peer it heard from): only a known member is removed */
  knows?: (peer: string) => boolean
  /** this daemon: its own entries are its API's doing, counted there */
  me?: string
  /** each entry the log accepts, after the board folded it */
  onEntry?: (listener: (e: { id: string; author: string; kind: string }) => void) => () => void
  metrics?: Pick<Metrics, 'operatorRefusals'>
}

export interface CarriedReply {
  entryId: string
  actionId: string
  verdict: string
}

/** The words an agent sees when it tries an operator's action through its own API. */
export function operatorOnly(what: string): OperatorOnlyError {
  return new OperatorOnlyError(
    `${what} is the operator's to do, and this swarm has an operator: the operator does it with agency --operator-key (docs/operator.md); an agent cannot`
  )
}

export class OperatorService {
  private readonly init: OperatorServiceInit
  private off?: () => void

  constructor(init: OperatorServiceInit) {
    this.init = init
  }

  /** Counts the operator actions peers' entries tried and the fold refused (after the board, in the start order). */
  beforeStart(): void {
    this.off = this.init.onEntry?.(e => {
      this.judged(e)
    })
  }

  stop(): void {
    this.off?.()
  }

  private judged(e: { id: string; author: string; kind: string }): void {
    if (e.author === this.init.me) return
    const board = this.init.board()
    if (e.kind === 'operator') {
      const verdict = board.operatorVerdict(e.id)
      if (verdict !== undefined && REFUSED_VERDICTS.has(verdict)) this.refused('peer', verdict as RefusalReason)
    } else if (OPERATOR_ONLY_ENTRY_KINDS.has(e.kind) && board.operators().keys.length > 0) {
      this.refused('peer', 'unsigned')
    }
  }

  /** Counts one refusal (agentd_operator_refusals_total). */
  refused(source: RefusalSource, reason: RefusalReason): void {
    this.init.metrics?.operatorRefusals.inc({ source, reason })
  }

  /** Throws OperatorOnlyError while operators govern: the plain (unsigned) form of an operator-only action. */
  refuseUnsigned(what: string): void {
    if (this.init.board().operators().keys.length === 0) return
    this.refused('api', 'unsigned')
    throw operatorOnly(what)
  }

  /**
   * Carries a signed action into the log. InvalidArgumentError for one that
   * does not decode or whose signature is bad, NoOperatorError on a swarm
   * without operators, OperatorOnlyError for a key that is not an operator's.
   */
  async submit(envelope: OperatorEnvelope | undefined): Promise<CarriedReply> {
    if (envelope === undefined || envelope.action.byteLength === 0)
      throw new InvalidArgumentError('no operator action: sign one with agency --operator-key')
    const opened = openEnvelope(envelope)
    if (opened.fault === 'malformed' || opened.action === undefined) {
      this.refused('api', 'malformed')
      throw new InvalidArgumentError("not an operator action: it does not decode, or lacks its key, id, time or kind's fields")
    }
    const action = opened.action
    if (opened.fault === 'bad_signature') {
      this.refused('api', 'bad_signature')
      throw new OperatorOnlyError(
        `the operator action "${summarise(action)}" is not signed by the key it names: only the operator's own key can sign it`
      )
    }
    const who = this.init.board().operators()
    if (who.keys.length === 0) throw new NoOperatorError(`"${summarise(action)}"`)
    if (!who.keys.includes(action.operator)) {
      this.refused('api', 'not_operator')
      throw new OperatorOnlyError(
        `the key ${action.operator} is not an operator of this swarm, so "${summarise(action)}" is refused: only the operator may do it`
      )
    }
    if (action.kind === 'member_remove' && this.init.knows?.(action.peers[0]) === false)
      throw new InvalidArgumentError(
        `unknown peer id ${action.peers[0]}: no entry of it and no heartbeat reached this daemon, so there is no member to remove (agency members lists them)`
      )
    const entry = await this.init.append(envelope)
    return { entryId: entry.id, actionId: action.id, verdict: this.init.board().operatorVerdict(entry.id) ?? 'accepted' }
  }
}
