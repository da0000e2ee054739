export const num = value => ({ kind: 'num', value })
export const bin = (op, left, right) => ({ kind: 'bin', op, left, right })
export const ref = name => ({ kind: 'ref', name })
export const call = (name, args) => ({ kind: 'call', name, args })
