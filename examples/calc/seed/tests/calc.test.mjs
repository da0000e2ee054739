export const module = 'src/calc.mjs'
export function run ({ calc }, assert) {
  assert.equal(calc('1 + 2 * 3'), '7')
  assert.equal(calc('0.1 + 0.2'), '0.3')
  assert.equal(calc('sqrt(16) + max(1, 2)'), '6')
  assert.equal(calc('x * 2', { x: 21 }), '42')
  assert.throws(() => calc('1 / 0'), /division by zero/)
}
