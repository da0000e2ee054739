import { CalcError } from './errors.mjs'

export function createEnv (initial = {}) {
  const vars = new Map(Object.entries(initial))
  return {
    set: (name, value) => { vars.set(name, value) },
    get: (name) => {
      if (!vars.has(name)) throw new CalcError(`unknown variable ${name}`)
      return vars.get(name)
    }
  }
}
