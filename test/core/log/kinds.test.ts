import { describe, expect, it } from 'vitest'
import { VerdictKind } from '../../../src/gen/agency/v1/log.js'
import { BadBodyError, bodyDecodes, bodyToJson, decodeBody, encodeBody, isKnownKind, KNOWN_KINDS } from '../../../src/core/log/kinds.js'
import { InvalidArgumentError } from '../../../src/core/errors.js'

describe('entry kinds', () => {
  it('knows the sixteen kinds of the log and nothing else', () => {
    expect([...KNOWN_KINDS].sort()).toEqual([
      'approval_request',
      'budget',
      'claim',
      'done',
      'finding',
      'goal',
      'integration',
      'integration_request',
      'operator',
      'rate_limit',
      'release',
      'review_request',
      'task',
      'test_run',
      'usage',
      'verdict'
    ])
    for (const k of ['', 'Finding', 'toString', '__proto__', 'constructor', 'presence']) expect(isKnownKind(k)).toBe(false)
  })

  it('round-trips each kind through its body codec', () => {
    expect(decodeBody('finding', encodeBody('finding', { kind: 'bug', text: 't', paths: ['a/b.ts'], tags: ['x'] }))).toEqual({
      kind: 'bug',
      text: 't',
      paths: ['a/b.ts'],
      tags: ['x'],
      refs: [],
      supersedes: ''
    })
    expect(decodeBody('claim', encodeBody('claim', { task: 't1', epoch: 3, scope: ['src/**'] })).epoch).toBe(3)
    expect(decodeBody('verdict', encodeBody('verdict', { target: 'abc', verdict: VerdictKind.VERDICT_APPROVE })).verdict).toBe(
      VerdictKind.VERDICT_APPROVE
    )
    expect(decodeBody('test_run', encodeBody('test_run', { passed: 5, total: 6, durationMs: 1234 })).durationMs).toBe(1234)
    for (const k of KNOWN_KINDS)
      expect(bodyDecodes(k, encodeBody(k, k === 'rate_limit' ? { provider: 'ab'.repeat(8), kind: 'transient' } : {}))).toBe(true)
  })

  it('renders a body as proto3 JSON', () => {
    expect(bodyToJson('goal', encodeBody('goal', { text: 'ship it', testCommand: 'npm test' }))).toEqual({
      text: 'ship it',
      testCommand: 'npm test'
    })
  })

  it('refuses unknown kinds and bodies that do not decode, with named errors', () => {
    const garbage = Uint8Array.from([0xff, 0xff, 0xff])
    expect(bodyDecodes('finding', garbage)).toBe(false)
    expect(bodyDecodes('nope', new Uint8Array(0))).toBe(false)
    expect(() => decodeBody('finding', garbage)).toThrow(BadBodyError)
    expect(() => bodyToJson('finding', garbage)).toThrow(BadBodyError)
    expect(() => bodyToJson('nope', new Uint8Array(0))).toThrow(InvalidArgumentError)
    expect(() => encodeBody('nope' as 'goal', {})).toThrow(InvalidArgumentError)
  })
})
