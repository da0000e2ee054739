import { describe, expect, it } from 'vitest'
import { shellQuote, splitCommandLine } from '../../src/harness/command-line.js'
import { InvalidArgumentError } from '../../src/core/errors.js'

describe('splitCommandLine', () => {
  it('splits words the way a shell does, without expanding anything', () => {
    expect(splitCommandLine('node /opt/agency/dist/src/cli/agency.js')).toEqual(['node', '/opt/agency/dist/src/cli/agency.js'])
    expect(splitCommandLine('  "/opt/my node/node"   \'a b\' c\\ d "q\\"x" $HOME  ')).toEqual([
      '/opt/my node/node',
      'a b',
      'c d',
      'q"x',
      '$HOME'
    ])
    expect(splitCommandLine('a""b \'\'')).toEqual(['ab', ''])
    expect(splitCommandLine('   ')).toEqual([])
  })

  it('rejects an unbalanced quote', () => {
    expect(() => splitCommandLine('node "/x/agency.js')).toThrow(InvalidArgumentError)
  })

  it('round-trips through shellQuote', () => {
    const words = ['/opt/my node/node', "it's", '', 'plain-word', '$HOME', 'a"b']
    expect(splitCommandLine(words.map(shellQuote).join(' '))).toEqual(words)
    expect(shellQuote('plain/path-1.js')).toBe('plain/path-1.js')
  })
})
