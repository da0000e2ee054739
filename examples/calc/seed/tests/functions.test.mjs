export const module = 'src/functions.mjs'
export function run ({ functions }, assert) {
  assert.equal(functions.abs(-2), 2)
  assert.equal(functions.sqrt(2), Math.SQRT2)
  assert.equal(functions.max(1, 5, 3), 5)
  assert.equal(functions.min(4, -1), -1)
}
