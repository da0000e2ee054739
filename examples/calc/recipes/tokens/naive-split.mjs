// Split on spaces: breaks as soon as an expression is written without them.
export function tokenize (s) {
  return s.trim().split(/\s+/).map(w => /^\d/.test(w) ? { type: 'num', value: Number(w) } : { type: 'op', value: w })
}
