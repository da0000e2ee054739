// The known entry kinds and the protobuf message each kind's body holds.
// An unknown kind, or a body that does not decode as its kind's message, is
// a rejection reason.
import {
  ApprovalRequest,
  Budget,
  Claim,
  Done,
  Finding,
  Goal,
  Integration,
  IntegrationRequest,
  OperatorEnvelope,
  RateLimit,
  Release,
  ReviewRequest,
  TaskSpec,
  TestRun,
  Usage,
  Verdict,
  type DeepPartial,
  type MessageFns
} from '../../gen/agency/v1/log.js'
import { InvalidArgumentError } from '../errors.js'
import { decodeFinding, isPlainFinding } from './finding-scan.js'
import { budgetFault, rateLimitFault, usageFault } from '../spend/spend-bounds.js'

export interface KindBodies {
  finding: Finding
  goal: Goal
  task: TaskSpec
  claim: Claim
  release: Release
  done: Done
  review_request: ReviewRequest
  verdict: Verdict
  test_run: TestRun
  integration_request: IntegrationRequest
  integration: Integration
  operator: OperatorEnvelope
  approval_request: ApprovalRequest
  usage: Usage
  budget: Budget
  rate_limit: RateLimit
}

export type EntryKind = keyof KindBodies

const CODECS: { readonly [K in EntryKind]: MessageFns<KindBodies[K]> } = {
  finding: Finding,
  goal: Goal,
  task: TaskSpec,
  claim: Claim,
  release: Release,
  done: Done,
  review_request: ReviewRequest,
  verdict: Verdict,
  test_run: TestRun,
  integration_request: IntegrationRequest,
  integration: Integration,
  operator: OperatorEnvelope,
  approval_request: ApprovalRequest,
  usage: Usage,
  budget: Budget,
  rate_limit: RateLimit
}

// A spend body that decodes but holds numbers out of range is refused as a bad body (spend-bounds.ts).
const BOUNDS: { readonly [K in EntryKind]?: (body: KindBodies[K]) => string | null } = {
  usage: usageFault,
  budget: budgetFault,
  rate_limit: rateLimitFault
}

export const KNOWN_KINDS: readonly EntryKind[] = Object.freeze(Object.keys(CODECS) as EntryKind[])

/** A body that does not decode as its kind's message. */
export class BadBodyError extends InvalidArgumentError {
  constructor(kind: string, cause?: unknown, why?: string) {
    super(why != null ? `bad ${kind} body: ${why}` : `body does not decode as a ${kind}`)
    this.name = 'BadBodyError'
    if (cause !== undefined) this.cause = cause
  }
}

export function isKnownKind(kind: string): kind is EntryKind {
  return Object.hasOwn(CODECS, kind)
}

function codecOf(kind: string): MessageFns<unknown> {
  if (!isKnownKind(kind)) throw new InvalidArgumentError(`unknown entry kind: ${JSON.stringify(kind)}`)
  return CODECS[kind] as MessageFns<unknown>
}

/** Decodes a body; throws InvalidArgumentError for an unknown kind and BadBodyError for bad bytes. */
export function decodeBody<K extends EntryKind>(kind: K, bytes: Uint8Array): KindBodies[K] {
  const codec = codecOf(kind)
  let body: KindBodies[K]
  try {
    if (kind === 'finding') return decodeFinding(bytes) as KindBodies[K]
    body = codec.decode(bytes) as KindBodies[K]
  } catch (err) {
    throw new BadBodyError(kind, err)
  }
  const fault = boundsFault(kind, body)
  if (fault != null) throw new BadBodyError(kind, undefined, fault)
  return body
}

/** Why a decoded body is out of its kind's bounds, or null. */
export function boundsFault<K extends EntryKind>(kind: K, body: KindBodies[K]): string | null {
  const check = BOUNDS[kind]
  return check?.(body) ?? null
}

/** True when `bytes` decode as the body of `kind` (false for unknown kinds). Never throws. */
export function bodyDecodes(kind: string, bytes: Uint8Array): boolean {
  if (!isKnownKind(kind)) return false
  // most of a large log is findings: the plain ones are read without the protobuf reader
  if (kind === 'finding' && isPlainFinding(bytes)) return true
  try {
    const body = CODECS[kind].decode(bytes)
    return boundsFault(kind, body as never) == null
  } catch {
    return false
  }
}

/** Encodes a body; missing fields take their defaults. */
export function encodeBody<K extends EntryKind>(kind: K, body: DeepPartial<KindBodies[K]>): Uint8Array {
  const codec = codecOf(kind)
  const full = codec.fromPartial(body as never)
  // what peers would refuse is refused here, before anything is signed
  const fault = boundsFault(kind, full as KindBodies[K])
  if (fault != null) throw new BadBodyError(kind, undefined, fault)
  return codec.encode(full).finish()
}

/** The body as its proto3 JSON form (for APIs and `--json` output). */
export function bodyToJson(kind: string, bytes: Uint8Array): unknown {
  const codec = codecOf(kind)
  let body: unknown
  try {
    body = codec.decode(bytes)
  } catch (err) {
    throw new BadBodyError(kind, err)
  }
  return codec.toJSON(body)
}
