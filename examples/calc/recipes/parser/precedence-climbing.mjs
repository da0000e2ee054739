import { tokenize } from './tokens.mjs'
import { num, bin, ref, call } from './ast.mjs'
import { CalcError } from './errors.mjs'

const PREC = { '+': 1, '-': 1, '*': 2, '/': 2, '^': 3 }
const RIGHT = { '^': true }

export function parse (s) {
  const t = tokenize(s)
  let i = 0
  const peek = () => t[i]
  const next = () => {
    if (i >= t.length) throw new CalcError('unexpected end of input', s.length)
    return t[i++]
  }
  function primary () {
    const tok = next()
    if (tok.type === 'num') return num(tok.value)
    if (tok.type === 'op' && tok.value === '-') return bin('-', num(0), primary())
    if (tok.type === 'paren' && tok.value === '(') {
      const e = expr(0)
      if (next().value !== ')') throw new CalcError('expected )', i)
      return e
    }
    if (tok.type === 'ident') {
      if (peek()?.value === '(') {
        next()
        const args = []
        if (peek()?.value !== ')') {
          args.push(expr(0))
          while (peek()?.type === 'comma') { next(); args.push(expr(0)) }
        }
        if (next().value !== ')') throw new CalcError('expected )', i)
        return call(tok.value, args)
      }
      return ref(tok.value)
    }
    throw new CalcError(`unexpected ${tok.value}`, i)
  }
  function expr (min) {
    let left = primary()
    while (peek()?.type === 'op' && PREC[peek().value] >= min) {
      const op = next().value
      const right = expr(RIGHT[op] ? PREC[op] : PREC[op] + 1)
      left = bin(op, left, right)
    }
    return left
  }
  const tree = expr(0)
  if (i < t.length) throw new CalcError(`unexpected ${t[i].value}`, i)
  return tree
}
