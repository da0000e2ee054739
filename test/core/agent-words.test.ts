// The daemon's sentences to its agent and the prompt speak one voice: the
// commands the sentences name are those the prompt teaches, spelled alike.
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { COMMANDS, doneFirst, integrated, readyToClaim, requestResult } from '../../src/core/agent-words.js'
import { promptTemplatePath } from '../../src/harness/prompt.js'

describe('agent words', () => {
  const prompt = readFileSync(promptTemplatePath(), 'utf8')

  it('name each command as the prompt spells it', () => {
    for (const command of Object.values(COMMANDS)) {
      // up to the first placeholder: the prompt may name other arguments
      const words = command.split(/ [<"]/)[0]
      expect(prompt, command).toContain(words)
    }
  })

  it('tell a holder and an assistant their different next steps after a landing', () => {
    expect(integrated({ branch: 'main', commit: 'a'.repeat(40), task: 't1', assist: false })).toBe(
      `merged into main as ${'a'.repeat(12)}; when the task is finished: agency done t1`
    )
    expect(integrated({ branch: 'main', commit: 'b'.repeat(40), task: 't1', assist: true, recovered: true })).toBe(
      `merged into main as ${'b'.repeat(12)} (recovered: the push had landed, its integration entry was missing): your assist landed first, so t1 is done by you (its holder and the other assistants are told to stop); next: agency claim --next`
    )
    expect(doneFirst('t1', 'me', 'me')).toBe('task t1 is done, by you: nothing more to land for it; next: agency claim --next')
    expect(doneFirst('t1', 'amy', 'me')).toMatch(/Stop, and record what you learned: agency assist --stop "<what you learned>"$/)
  })

  it('list at most ten ready tasks', () => {
    const ids = Array.from({ length: 12 }, (_, i) => `t${i}`)
    expect(readyToClaim(ids)).toBe('ready to claim: t0, t1, t2, t3, t4, t5, t6, t7, t8, t9, ... (agency claim --next)')
    expect(readyToClaim(['a'])).toBe('ready to claim: a (agency claim --next)')
  })

  it('send a failed request back to its holder as the current task', () => {
    const text = requestResult({ task: 'ui', epoch: 3, result: 'failed', commit: '', paths: ['a.ts'] }, false)
    expect(text).toContain(
      'your integration request for ui@3 did not land (failed in a.ts): see agency find "ui" for why. ui is your current task again'
    )
  })
})
