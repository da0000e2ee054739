// What agentd says at the start of a turn.
import { describe, expect, it } from 'vitest'
import { MAX_NOTE_CHARS, SESSION_NOTE, composeTurn, isUrgent, type InboxNote } from '../../../src/harness/acp/turn-composer.js'

const note = (o: Partial<InboxNote>): InboxNote => ({
  cursor: 1,
  kind: 'message',
  from: '12D3KooWPeer',
  fromName: 'bob',
  task: '',
  text: 'hi',
  time: 0,
  ...o
})

describe('composeTurn', () => {
  it('starts a session with the shared prompt and the note on how the session works', () => {
    const text = composeTurn({ prompt: '# You are a1\n', notes: [], moreUnread: 0 })
    expect(text).toBe(`# You are a1\n\n${SESSION_NOTE}`)
  })

  it('lists what arrived, messages and notices, marked read, with what is left and what is next', () => {
    const text = composeTurn({
      notes: [
        note({ cursor: 4, text: 'I changed src/api.ts' }),
        note({ cursor: 5, kind: 'review_requested', from: 'me', fromName: 'agentd', text: 'carol asks you to review abc' }),
        note({ cursor: 6, kind: 'overlap', task: 'greet', text: 'your task greet overlaps lint' })
      ],
      moreUnread: 2,
      next: 'you hold greet: carry on with it (agency task show greet)'
    })
    expect(text).toBe(
      [
        '[agentd] New in your inbox (3 of 5, now marked read):',
        '- message from bob (12D3KooWPeer): I changed src/api.ts',
        '- notice review_requested: carol asks you to review abc',
        '- notice overlap (task greet): your task greet overlaps lint',
        '',
        '[agentd] 2 more unread: they come with your next turn, or read them now with read_inbox (agency inbox).',
        '',
        '[agentd] Next: you hold greet: carry on with it (agency task show greet)'
      ].join('\n')
    )
  })

  it("puts the operator's words first, and counts them urgent", () => {
    const op = note({ cursor: 7, kind: 'operator', from: '12D3KooWOp', fromName: 'operator', text: 'stop touching the parser' })
    const text = composeTurn({ notes: [note({ cursor: 6 }), op], moreUnread: 0 })
    expect(text.split('\n').slice(1, 3)).toEqual([
      '- from the operator (the person steering the swarm): stop touching the parser',
      '- message from bob (12D3KooWPeer): hi'
    ])
    expect(isUrgent(op)).toBe(true)
  })

  it('says why agentd stopped the previous turn, before the notice that made it', () => {
    const text = composeTurn({
      stopped: "your daemon's claim_lost notice for greet (below)",
      notes: [note({ kind: 'claim_lost', task: 'greet', text: 'your claim on greet@1 is lost (outbid)' })],
      moreUnread: 0
    })
    expect(text.indexOf("[agentd] I stopped your previous turn: your daemon's claim_lost notice for greet (below)")).toBe(0)
    expect(text).toContain('- notice claim_lost (task greet): your claim on greet@1 is lost (outbid)')
  })

  it('after a restart, says where the agent was: its held tasks, and what the unfinished last turn had told it', () => {
    const text = composeTurn({
      prompt: 'P',
      resume: {
        why: 'it exited with code 3',
        held: [{ task: 'greet', epoch: 2, title: 'greet function' }],
        repeated: [note({ text: 'please rebase' })]
      },
      notes: [],
      moreUnread: 0
    })
    expect(text).toContain(
      '[agentd] This is a new session: the previous one ended (it exited with code 3). Where you were:\n- you hold greet@2 (greet function): '
    )
    expect(text).toContain('  - message from bob (12D3KooWPeer): please rebase')
    expect(composeTurn({ resume: { why: 'x', held: [], repeated: [] }, notes: [], moreUnread: 0 })).toContain('- you hold no task')
  })

  it('cuts a long item, and says something even with nothing to say', () => {
    const text = composeTurn({ notes: [note({ text: 'y'.repeat(MAX_NOTE_CHARS + 10) })], moreUnread: 0 })
    expect(text).toContain(`${'y'.repeat(MAX_NOTE_CHARS)}... (cut; agency inbox --all has it whole)`)
    expect(composeTurn({ notes: [], moreUnread: 0 })).toBe('[agentd] Carry on.')
  })
})

describe('isUrgent', () => {
  it('is a lost or superseded claim only', () => {
    expect(
      ['claim_lost', 'claim_superseded', 'overlap', 'message', 'integration', 'goal_changed', 'review_requested'].filter(kind =>
        isUrgent(note({ kind }))
      )
    ).toEqual(['claim_lost', 'claim_superseded'])
  })
})
