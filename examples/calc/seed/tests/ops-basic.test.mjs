export const module = 'src/ops/basic.mjs'
export function run ({ add, sub, mul, div }, assert) {
  assert.equal(add(2, 3), 5)
  assert.equal(sub(2, 3), -1)
  assert.equal(mul(4, 2.5), 10)
  assert.equal(div(9, 3), 3)
  assert.throws(() => div(1, 0), /division by zero/)
}
