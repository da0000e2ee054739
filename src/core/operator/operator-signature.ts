// An operator's signature over an action, domain-separated from entries,
// presence and announcements, so no signature made for one can pass as another.
import { OperatorAction, OperatorEnvelope, type DeepPartial } from '../../gen/agency/v1/log.js'
import { InvalidArgumentError } from '../errors.js'
import { sha256Hex, verifySignature, type Signer } from '../log/crypto.js'
import { actionFault } from './action-kinds.js'

export const DOMAIN_OPERATOR = 'agency/operator/v1'

/** Why a carried action counts for nothing, whoever the swarm's operators are. */
export type EnvelopeFault = 'malformed' | 'bad_signature'

export interface OpenedEnvelope {
  /** the decoded action, when its bytes decode */
  action?: OperatorAction
  fault?: EnvelopeFault
  /** sha256 of the signed bytes, hex: tells two different actions under one id apart */
  hash: string
}

/**
 * Signs `action` as the operator `signer` is (its `operator` field is set to
 * the signer's key). Throws InvalidArgumentError for a malformed action.
 */
export function signOperatorAction(signer: Signer, action: DeepPartial<OperatorAction>): OperatorEnvelope {
  const full = OperatorAction.fromPartial({ ...action, operator: signer.author })
  const fault = actionFault(full)
  if (fault !== undefined) throw new InvalidArgumentError(`not an operator action: ${fault}`)
  const bytes = OperatorAction.encode(full).finish()
  return { action: Buffer.from(bytes), sig: Buffer.from(signer.sign(DOMAIN_OPERATOR, bytes)) }
}

/** Decodes and verifies a carried action. Never throws. */
export function openEnvelope(env: OperatorEnvelope): OpenedEnvelope {
  const hash = sha256Hex(env.action)
  let action: OperatorAction
  try {
    action = OperatorAction.decode(env.action)
  } catch {
    return { fault: 'malformed', hash }
  }
  if (actionFault(action) !== undefined) return { action, fault: 'malformed', hash }
  if (!verifySignature(DOMAIN_OPERATOR, action.operator, env.action, env.sig)) return { action, fault: 'bad_signature', hash }
  return { action, hash }
}
