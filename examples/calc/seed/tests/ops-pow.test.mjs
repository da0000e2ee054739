export const module = 'src/ops/pow.mjs'
export function run ({ pow }, assert) {
  assert.equal(pow(2, 10), 1024)
  assert.equal(pow(9, 0.5), 3)
  assert.equal(pow(5, 0), 1)
}
