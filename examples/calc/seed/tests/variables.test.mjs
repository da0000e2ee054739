export const module = 'src/env.mjs'
export async function run ({ createEnv }, assert) {
  const env = createEnv({ x: 2 })
  env.set('y', 3)
  assert.equal(env.get('x'), 2)
  assert.equal(env.get('y'), 3)
  assert.throws(() => env.get('z'), /unknown variable z/)
  const { evaluate } = await import('../src/evaluate.mjs')
  const { bin, ref } = await import('../src/ast.mjs')
  assert.equal(evaluate(bin('*', ref('x'), ref('y')), env), 6)
}
