export const module = 'src/ast.mjs'
export function run ({ num, bin, ref, call }, assert) {
  assert.deepEqual(num(2), { kind: 'num', value: 2 })
  assert.deepEqual(bin('+', num(1), num(2)), { kind: 'bin', op: '+', left: { kind: 'num', value: 1 }, right: { kind: 'num', value: 2 } })
  assert.deepEqual(ref('x'), { kind: 'ref', name: 'x' })
  assert.deepEqual(call('abs', [num(1)]), { kind: 'call', name: 'abs', args: [{ kind: 'num', value: 1 }] })
}
