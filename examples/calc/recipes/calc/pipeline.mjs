import { parse } from './parser.mjs'
import { evaluate } from './evaluate.mjs'
import { format } from './format.mjs'
import { functions } from './functions.mjs'
import { createEnv } from './env.mjs'

export const calc = (expr, vars = {}) => format(evaluate(parse(expr), createEnv(vars), functions))
