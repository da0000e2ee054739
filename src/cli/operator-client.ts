// `agency` as the operator: the signer from the key file, and an action
// signed here and handed to the daemon, which only carries it into the log.
import type { Agency } from '../client/agency.js'
import { FailedPreconditionError } from '../core/errors.js'
import type { Signer } from '../core/log/crypto.js'
import type { AgencyClient, OperatorActionReply } from '../gen/agency/v1/api.js'
import type { DeepPartial, OperatorAction } from '../gen/agency/v1/log.js'
import { operatorKeyFile, readOperatorKey, signNow } from './operator-key.js'
import type { CommonOpts } from './output.js'

/** The operator's signer when a key is given (--operator-key or AGENCY_OPERATOR_KEY). */
export async function givenOperator(opts: CommonOpts): Promise<Signer | undefined> {
  const file = operatorKeyFile(opts.operatorKey)
  return file === undefined ? undefined : await readOperatorKey(file)
}

/** The operator's signer; a clear refusal without a key: `what` is the operator's to do. */
export async function requireOperator(opts: CommonOpts, what: string): Promise<Signer> {
  const signer = await givenOperator(opts)
  if (signer === undefined)
    throw new FailedPreconditionError(
      `${what} is the operator's to do: pass --operator-key FILE or set AGENCY_OPERATOR_KEY (docs/operator.md)`
    )
  return signer
}

/** Signs `action` now and has the daemon carry it into the log. */
export async function submitAction(agency: Agency, signer: Signer, action: DeepPartial<OperatorAction>): Promise<OperatorActionReply> {
  const envelope = signNow(signer, action)
  return await agency.call((c: AgencyClient) => c.submitOperatorAction, { envelope })
}
