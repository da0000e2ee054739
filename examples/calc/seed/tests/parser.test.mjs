export const module = 'src/parser.mjs'
const show = n => n.kind === 'num' ? String(n.value) : n.kind === 'ref' ? n.name : n.kind === 'call' ? `${n.name}(${n.args.map(show).join(',')})` : `(${show(n.left)}${n.op}${show(n.right)})`
export function run ({ parse }, assert) {
  assert.equal(show(parse('1+2*3')), '(1+(2*3))')
  assert.equal(show(parse('(1+2)*3')), '((1+2)*3)')
  assert.equal(show(parse('2^3^2')), '(2^(3^2))')
  assert.equal(show(parse('max(1, x-2)')), 'max(1,(x-2))')
  assert.equal(show(parse('8-3-2')), '((8-3)-2)')
  assert.throws(() => parse('1+'))
}
