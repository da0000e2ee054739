// The known entry kinds and the protobuf message each kind's body holds.
// An unknown kind, or a body that does not decode as its kind's message, is
// a rejection reason.
import {
  ApprovalRequest, Claim, Done, Finding, Goal, Integration, IntegrationRequest, OperatorEnvelope, Release, ReviewRequest,
  TaskSpec, TestRun, Verdict, type DeepPartial, type MessageFns
} from '../../gen/agency/v1/log.js'
import { InvalidArgumentError } from '../errors.js'
import { decodeFinding, isPlainFinding } from './finding-scan.js'

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
  approval_request: ApprovalRequest
}

export const KNOWN_KINDS: readonly EntryKind[] = Object.freeze(Object.keys(CODECS) as EntryKind[])

/** A body that does not decode as its kind's message. */
export class BadBodyError extends InvalidArgumentError {
  constructor (kind: string, cause?: unknown) {
    super(`body does not decode as a ${kind}`)
    this.name = 'BadBodyError'
    if (cause !== undefined) this.cause = cause
  }
}

export function isKnownKind (kind: string): kind is EntryKind {
  return Object.hasOwn(CODECS, kind)
}

function codecOf (kind: string): MessageFns<unknown> {
  if (!isKnownKind(kind)) throw new InvalidArgumentError(`unknown entry kind: ${JSON.stringify(kind)}`)
  return CODECS[kind] as MessageFns<unknown>
}

/** Decodes a body; throws InvalidArgumentError for an unknown kind and BadBodyError for bad bytes. */
export function decodeBody<K extends EntryKind> (kind: K, bytes: Uint8Array): KindBodies[K] {
  const codec = codecOf(kind)
  try {
    if (kind === 'finding') return decodeFinding(bytes) as KindBodies[K]
    return codec.decode(bytes) as KindBodies[K]
  } catch (err) {
    throw new BadBodyError(kind, err)
  }
}

/** True when `bytes` decode as the body of `kind` (false for unknown kinds). Never throws. */
export function bodyDecodes (kind: string, bytes: Uint8Array): boolean {
  if (!isKnownKind(kind)) return false
  // most of a large log is findings: the plain ones are read without the protobuf reader
  if (kind === 'finding' && isPlainFinding(bytes)) return true
  try {
    CODECS[kind].decode(bytes)
    return true
  } catch {
    return false
  }
}

/** Encodes a body; missing fields take their defaults. */
export function encodeBody<K extends EntryKind> (kind: K, body: DeepPartial<KindBodies[K]>): Uint8Array {
  const codec = codecOf(kind)
  return codec.encode(codec.fromPartial(body as never)).finish()
}

/** The body as its proto3 JSON form (for APIs and `--json` output). */
export function bodyToJson (kind: string, bytes: Uint8Array): unknown {
  const codec = codecOf(kind)
  let body: unknown
  try {
    body = codec.decode(bytes)
  } catch (err) {
    throw new BadBodyError(kind, err)
  }
  return codec.toJSON(body)
}
