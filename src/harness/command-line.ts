// Splitting a command line given as one string ("node /x/agency.js") into a
// command and its arguments, and quoting arguments back for a POSIX shell.
import { InvalidArgumentError } from '../core/errors.js'

/**
 * Splits on whitespace, honouring single quotes, double quotes and backslash
 * escapes, the way a POSIX shell would for plain words. No expansion happens.
 */
export function splitCommandLine(line: string): string[] {
  const words: string[] = []
  let word = ''
  let inWord = false
  let quote: '"' | "'" | undefined
  for (let i = 0; i < line.length; i++) {
    const c = line[i]
    if (quote === "'") {
      if (c === "'") quote = undefined
      else word += c
    } else if (quote === '"') {
      if (c === '"') quote = undefined
      else if (c === '\\' && i + 1 < line.length && '"\\$`'.includes(line[i + 1])) word += line[++i]
      else word += c
    } else if (c === "'" || c === '"') {
      quote = c
      inWord = true
    } else if (c === '\\' && i + 1 < line.length) {
      word += line[++i]
      inWord = true
    } else if (/\s/.test(c)) {
      if (inWord) words.push(word)
      word = ''
      inWord = false
    } else {
      word += c
      inWord = true
    }
  }
  if (quote != null) throw new InvalidArgumentError(`unbalanced ${quote} quote in command line: ${line}`)
  if (inWord) words.push(word)
  return words
}

/** Quotes one argument for a POSIX shell; plain words stay as they are. */
export function shellQuote(arg: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(arg)) return arg
  return `'${arg.replaceAll("'", "'\\''")}'`
}
