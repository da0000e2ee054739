export const module = 'src/cli.mjs'
export function run ({ main }, assert) {
  const out = []
  assert.equal(main(['2', '*', '(3 + 4)'], line => out.push(line)), 0)
  assert.deepEqual(out, ['14'])
  assert.equal(main(['2 +'], line => out.push(line)), 1)
}
