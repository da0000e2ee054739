export const module = 'src/tokens.mjs'
export function run ({ tokenize }, assert) {
  assert.deepEqual(tokenize('1+2'), [{ type: 'num', value: 1 }, { type: 'op', value: '+' }, { type: 'num', value: 2 }])
  assert.deepEqual(tokenize(' 3.5 * (x-1)').map(t => t.value), [3.5, '*', '(', 'x', '-', 1, ')'])
  assert.deepEqual(tokenize('max(1, 2)').map(t => t.type), ['ident', 'paren', 'num', 'comma', 'num', 'paren'])
  assert.throws(() => tokenize('1 $ 2'))
}
