export const module = 'src/evaluate.mjs'
export async function run ({ evaluate }, assert) {
  const { num, bin } = await import('../src/ast.mjs')
  assert.equal(evaluate(bin('+', num(1), bin('*', num(2), num(3)))), 7)
  assert.equal(evaluate(bin('^', num(2), num(3))), 8)
  assert.throws(() => evaluate(bin('/', num(1), num(0))), /division by zero/)
}
