export const module = 'src/format.mjs'
export function run ({ format }, assert) {
  assert.equal(format(0.1 + 0.2), '0.3')
  assert.equal(format(1.5), '1.5')
  assert.equal(format(42), '42')
  assert.equal(format(-0.000125), '-0.000125')
}
