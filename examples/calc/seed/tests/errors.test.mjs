export const module = 'src/errors.mjs'
export function run ({ CalcError }, assert) {
  const e = new CalcError('bad token', 4)
  assert.ok(e instanceof Error)
  assert.equal(e.name, 'CalcError')
  assert.equal(e.position, 4)
  assert.match(e.message, /bad token at 4/)
}
