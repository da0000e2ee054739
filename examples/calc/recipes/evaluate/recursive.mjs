import { add, sub, mul, div } from './ops/basic.mjs'
import { pow } from './ops/pow.mjs'
import { CalcError } from './errors.mjs'

const OPS = { '+': add, '-': sub, '*': mul, '/': div, '^': pow }

export function evaluate (node, env, functions = {}) {
  switch (node.kind) {
    case 'num': return node.value
    case 'bin': return OPS[node.op](evaluate(node.left, env, functions), evaluate(node.right, env, functions))
    case 'ref':
      if (env == null) throw new CalcError(`unknown variable ${node.name}`)
      return env.get(node.name)
    case 'call': {
      const fn = functions[node.name]
      if (fn == null) throw new CalcError(`unknown function ${node.name}`)
      return fn(...node.args.map(a => evaluate(a, env, functions)))
    }
    default: throw new CalcError(`unknown node ${node.kind}`)
  }
}
