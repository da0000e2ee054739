import { calc } from './calc.mjs'
import { fileURLToPath } from 'node:url'

export function main (args, print = console.log) {
  try {
    print(calc(args.join(' ')))
    return 0
  } catch (err) {
    print(`error: ${err.message}`)
    return 1
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) process.exitCode = main(process.argv.slice(2))
