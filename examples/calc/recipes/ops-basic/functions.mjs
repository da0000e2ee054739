import { CalcError } from '../errors.mjs'

export const add = (a, b) => a + b
export const sub = (a, b) => a - b
export const mul = (a, b) => a * b
export function div (a, b) {
  if (b === 0) throw new CalcError('division by zero')
  return a / b
}
