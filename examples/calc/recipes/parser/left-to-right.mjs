import { tokenize } from './tokens.mjs'
import { num, bin } from './ast.mjs'

// Folds operators left to right, ignoring precedence: 1+2*3 comes out as (1+2)*3.
export function parse (s) {
  const t = tokenize(s)
  let node = num(t[0].value)
  for (let i = 1; i < t.length; i += 2) node = bin(t[i].value, node, num(t[i + 1].value))
  return node
}
