import { CalcError } from './errors.mjs'

// A character scanner: numbers, identifiers, operators, parentheses, commas.
export function tokenize (s) {
  const out = []
  let i = 0
  while (i < s.length) {
    const c = s[i]
    if (/\s/.test(c)) { i++; continue }
    if (/[0-9.]/.test(c)) {
      let j = i
      while (j < s.length && /[0-9.]/.test(s[j])) j++
      out.push({ type: 'num', value: Number(s.slice(i, j)) })
      i = j
    } else if (/[a-z_]/i.test(c)) {
      let j = i
      while (j < s.length && /[a-z_0-9]/i.test(s[j])) j++
      out.push({ type: 'ident', value: s.slice(i, j) })
      i = j
    } else if ('+-*/^'.includes(c)) { out.push({ type: 'op', value: c }); i++ }
    else if ('()'.includes(c)) { out.push({ type: 'paren', value: c }); i++ }
    else if (c === ',') { out.push({ type: 'comma', value: c }); i++ }
    else throw new CalcError(`unexpected character ${c}`, i)
  }
  return out
}
