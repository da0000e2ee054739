import { describe, expect, it } from 'vitest'
import { Board } from '../../../src/core/board/board.js'
import { InvalidArgumentError } from '../../../src/core/errors.js'
import { VerdictKind } from '../../../src/gen/agency/v1/log.js'
import { EntryWriter } from './helpers.js'

describe('reviews', () => {
  it('an approve followed by a retract changes the approval count, whatever the arrival order', () => {
    const w = new EntryWriter()
    const request = w.request('amy', 'commit:abc123', ['bob', 'cat'], 1)
    const bobApproves = w.verdict('bob', 'commit:abc123', VerdictKind.VERDICT_APPROVE, 2)
    const catApproves = w.verdict('cat', 'commit:abc123', VerdictKind.VERDICT_APPROVE, 3)
    const bobRetracts = w.verdict('bob', 'commit:abc123', VerdictKind.VERDICT_RETRACT, 5)

    const b = new Board()
    for (const e of [request, bobApproves, catApproves]) b.apply(e)
    expect(b.approvals('commit:abc123')).toBe(2)
    b.apply(bobRetracts)
    expect(b.approvals('commit:abc123')).toBe(1)

    const reordered = new Board()
    for (const e of [bobRetracts, catApproves, bobApproves, request]) reordered.apply(e)
    expect(reordered.review('commit:abc123')).toEqual(b.review('commit:abc123'))
    expect(b.review('commit:abc123')).toMatchObject({
      requestedBy: 'amy',
      reviewers: ['bob', 'cat'],
      approvals: 1,
      rejections: 0,
      verdicts: [
        { reviewer: 'bob', verdict: 'retract' },
        { reviewer: 'cat', verdict: 'approve' }
      ]
    })
  })

  it("a reviewer's latest verdict wins; unspecified verdicts are ignored", () => {
    const w = new EntryWriter()
    const b = new Board()
    b.apply(w.verdict('bob', 'task:parser', VerdictKind.VERDICT_REJECT, 2))
    b.apply(w.verdict('bob', 'task:parser', VerdictKind.VERDICT_APPROVE, 1))
    b.apply(w.verdict('bob', 'task:parser', VerdictKind.VERDICT_UNSPECIFIED, 9))
    expect(b.review('task:parser')).toMatchObject({ requestedBy: '', approvals: 0, rejections: 1 })
  })
})

describe('expertise', () => {
  it('ranks peers by done tasks and merged integrations that touched the path', () => {
    const w = new EntryWriter()
    const b = new Board()
    for (const e of [
      w.task('p', { id: 'lexer', scope: ['src/parser/lexer/**'] }),
      w.task('p', { id: 'grammar', scope: ['src/parser/grammar.ts'] }),
      w.task('p', { id: 'docs' }),
      w.claim('amy', 'lexer', 1),
      w.done('amy', 'lexer', 1), // no paths: falls back to the task scope
      w.claim('bob', 'grammar', 1),
      w.done('bob', 'grammar', 1, { paths: ['src/parser/grammar.ts', 'test/grammar.test.ts'] }),
      w.claim('cat', 'docs', 1),
      w.done('cat', 'docs', 1, { paths: ['docs/readme.md'] }),
      w.integration('bob', 'lexer', ['src/parser/lexer/index.ts']),
      w.integration('dan', 'grammar', ['src/parser/grammar.ts'], 'conflict'),
      // not done by its holder: does not count
      w.done('eve', 'docs', 1, { paths: ['src/parser/x.ts'] })
    ])
      b.apply(e)

    expect(b.experts('src/parser')).toEqual([
      { peer: 'bob', score: 2, tasks: 1, integrations: 1 },
      { peer: 'amy', score: 1, tasks: 1, integrations: 0 }
    ])
    expect(b.experts('src/parser/lexer').map(e => e.peer)).toEqual(['amy', 'bob'])
    // a file under amy's scope, but not the one bob's integration touched
    expect(b.experts('src/parser/lexer/token.ts').map(e => e.peer)).toEqual(['amy'])
    expect(b.experts('docs/*.md')).toEqual([{ peer: 'cat', score: 1, tasks: 1, integrations: 0 }])
    // amy's scope src/parser/lexer/** may hold .md files too; bob touched only named .ts files
    expect(b.experts('**/*.md').map(e => e.peer)).toEqual(['amy', 'cat'])
    expect(b.experts('src/parser', 1).map(e => e.peer)).toEqual(['bob'])
    expect(b.experts('lib')).toEqual([])
    expect(() => b.experts('../x')).toThrow(InvalidArgumentError)
  })
})
