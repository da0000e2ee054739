import { calc } from './calc.mjs'

// Evaluates only the first argument: "2 * (3 + 4)" given as several words loses the rest.
export function main (args, print = console.log) {
  try { print(calc(args[0])); return 0 } catch (err) { print(`error: ${err.message}`); return 1 }
}
