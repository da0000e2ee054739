// Parsing of scope globs into segments, for intersection tests. A glob is
// validated, normalised ('./' prefix and trailing '/' dropped), its braces
// expanded, and each alternative split into path segments: '**' (any number of
// segments) or a segment pattern of literals, '?', '*' and [classes].
// Extglobs and parenthesised groups are over-approximated (a segment with one
// matches any segment; one spanning '/' matches any run of segments): a scope
// check may then report an overlap that is not there, never miss one.

import { InvalidArgumentError } from '../errors.js'

export const MAX_GLOB_LENGTH = 1024
export const MAX_GLOB_ALTERNATIVES = 64

export type CharToken =
  | { t: 'lit'; c: number }
  | { t: 'any' }
  | { t: 'star' }
  | { t: 'class'; negated: boolean; ranges: Array<[number, number]>; unsure: boolean }

export type Segment =
  | { kind: 'globstar' }
  /** `literal`: the segment's text when every token is a literal */
  | { kind: 'part'; tokens: CharToken[]; literal?: string }

/** A glob as a set of alternatives, each a list of segments. */
export interface ParsedGlob {
  source: string
  alternatives: Segment[][]
}

const GLOBSTAR: Segment = { kind: 'globstar' }
const ANY_SEGMENT: Segment = { kind: 'part', tokens: [{ t: 'star' }] }

/**
 * Throws InvalidArgumentError for a glob that cannot be a repository-relative
 * scope: empty, too long, absolute, negated, with '.' or '..' or empty
 * segments, unbalanced [ ] { } ( ), a dangling escape, or too many brace
 * alternatives. Returns the normalised glob.
 */
export function validateGlob(glob: unknown): string {
  return parseGlob(glob).source
}

export function isValidGlob(glob: unknown): boolean {
  try {
    parseGlob(glob)
    return true
  } catch {
    return false
  }
}

export function parseGlob(glob: unknown): ParsedGlob {
  if (typeof glob !== 'string') throw new InvalidArgumentError('a glob must be a string')
  if (glob.trim() === '') throw new InvalidArgumentError('a glob must not be empty')
  if (glob.length > MAX_GLOB_LENGTH) throw new InvalidArgumentError(`glob is longer than ${MAX_GLOB_LENGTH} characters`)
  // eslint-disable-next-line no-control-regex -- control characters are what this check looks for
  if (/[\u0000-\u001f\u007f]/.test(glob)) throw bad(glob, 'contains control characters')
  if (glob.startsWith('!')) throw bad(glob, 'negated globs are not supported in a scope')
  checkBalanced(glob)
  const source = normalise(glob)
  if (source === '') throw bad(glob, 'names the repository root; use ** for everything')
  const alternatives: Segment[][] = []
  for (const alt of expandBraces(source, { left: MAX_GLOB_ALTERNATIVES }, glob)) {
    alternatives.push(parseSegments(alt, glob))
  }
  return { source, alternatives }
}

function bad(glob: string, why: string): InvalidArgumentError {
  return new InvalidArgumentError(`malformed glob ${JSON.stringify(glob)}: ${why}`)
}

function normalise(glob: string): string {
  let s = glob
  while (s.startsWith('./')) s = s.slice(2)
  while (s.length > 1 && s.endsWith('/') && !s.endsWith('\\/')) s = s.slice(0, -1)
  return s === '.' ? '' : s
}

/** Index just past the ']' closing the class that opens at `start`, or -1. */
function classEnd(s: string, start: number): number {
  let j = start + 1
  if (s[j] === '!' || s[j] === '^') j++
  let first = true
  while (j < s.length) {
    const c = s[j]
    if (c === ']' && !first) return j + 1
    if (c === '[' && s[j + 1] === ':') {
      const close = s.indexOf(':]', j + 2)
      if (close < 0) return -1
      j = close + 2
    } else if (c === '\\') {
      j += 2
    } else {
      j++
    }
    first = false
  }
  return -1
}

function checkBalanced(glob: string): void {
  let braces = 0
  let parens = 0
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]
    if (c === '\\') {
      if (i + 1 >= glob.length) throw bad(glob, 'ends with a dangling escape')
      i++
    } else if (c === '[') {
      const end = classEnd(glob, i)
      if (end < 0) throw bad(glob, "unbalanced '['")
      i = end - 1
    } else if (c === ']') {
      throw bad(glob, "unbalanced ']'")
    } else if (c === '{') {
      braces++
    } else if (c === '}') {
      if (--braces < 0) throw bad(glob, "unbalanced '}'")
    } else if (c === '(') {
      parens++
    } else if (c === ')') {
      if (--parens < 0) throw bad(glob, "unbalanced ')'")
    }
  }
  if (braces !== 0) throw bad(glob, "unbalanced '{'")
  if (parens !== 0) throw bad(glob, "unbalanced '('")
}

interface BraceGroup {
  start: number
  end: number
  commas: number[]
}

function firstBraceGroup(s: string): BraceGroup | undefined {
  let start = -1
  let depth = 0
  const commas: number[] = []
  for (let i = 0; i < s.length; i++) {
    const c = s[i]
    if (c === '\\') {
      i++
      continue
    }
    if (c === '[') {
      i = classEnd(s, i) - 1
      continue
    }
    if (c === '{') {
      if (depth === 0) start = i
      depth++
    } else if (c === '}' && depth > 0) {
      depth--
      if (depth === 0) return { start, end: i, commas }
    } else if (c === ',' && depth === 1) {
      commas.push(i)
    }
  }
  return undefined
}

// {1..5}, {a..e}, {0..10..2}
function braceRange(body: string): string[] | undefined {
  const num = /^(-?\d+)\.\.(-?\d+)(?:\.\.(-?\d+))?$/.exec(body)
  if (num !== null) {
    const from = Number(num[1])
    const to = Number(num[2])
    const step = Math.abs(Number(num[3] ?? 1)) || 1
    const items: string[] = []
    const dir = from <= to ? 1 : -1
    for (let n = from; dir > 0 ? n <= to : n >= to; n += dir * step) {
      items.push(String(n))
      if (items.length > MAX_GLOB_ALTERNATIVES) break
    }
    return items
  }
  const alpha = /^([a-zA-Z])\.\.([a-zA-Z])$/.exec(body)
  if (alpha !== null) {
    const from = alpha[1].charCodeAt(0)
    const to = alpha[2].charCodeAt(0)
    const items: string[] = []
    for (let n = from; from <= to ? n <= to : n >= to; n += from <= to ? 1 : -1) items.push(String.fromCharCode(n))
    return items
  }
  return undefined
}

function expandBraces(s: string, budget: { left: number }, glob: string): string[] {
  const g = firstBraceGroup(s)
  if (g === undefined) {
    if (--budget.left < 0) throw bad(glob, `expands to more than ${MAX_GLOB_ALTERNATIVES} alternatives`)
    return [s]
  }
  const pre = s.slice(0, g.start)
  const body = s.slice(g.start + 1, g.end)
  const post = s.slice(g.end + 1)
  let alts: string[] | undefined
  if (g.commas.length > 0) {
    alts = []
    let from = g.start + 1
    for (const comma of [...g.commas, g.end]) {
      alts.push(s.slice(from, comma))
      from = comma + 1
    }
  } else {
    alts = braceRange(body)
  }
  // A group with neither commas nor a range is literal text, as in bash.
  if (alts === undefined) return expandBraces(`${pre}\\{${body}\\}${post}`, budget, glob)
  const out: string[] = []
  for (const alt of alts) out.push(...expandBraces(pre + alt + post, budget, glob))
  return out
}

function parseSegments(alt: string, glob: string): Segment[] {
  if (alt.startsWith('/') || /^[A-Za-z]:[\\/]/.test(alt)) throw bad(glob, 'must be relative to the repository root')
  const raw: string[] = []
  let current = ''
  let parens = 0
  for (let i = 0; i < alt.length; i++) {
    const c = alt[i]
    if (c === '\\' && alt[i + 1] === '/' && parens === 0) {
      raw.push(current)
      current = ''
      i++
      continue
    }
    if (c === '\\') {
      current += alt.slice(i, i + 2)
      i++
      continue
    }
    if (c === '[') {
      const end = classEnd(alt, i)
      current += alt.slice(i, end)
      i = end - 1
      continue
    }
    if (c === '(') parens++
    if (c === ')') parens--
    if (c === '/' && parens === 0) {
      raw.push(current)
      current = ''
      continue
    }
    current += c
  }
  raw.push(current)
  return raw.map(seg => {
    if (seg === '') throw bad(glob, 'has an empty path segment')
    if (seg === '..' || seg === '.') throw bad(glob, `has a '${seg}' segment`)
    if (seg === '**') return GLOBSTAR
    if (hasUnescaped(seg, '(')) return hasUnescaped(seg, '/') ? GLOBSTAR : ANY_SEGMENT
    const tokens = tokenize(seg)
    return tokens.every(t => t.t === 'lit')
      ? { kind: 'part', tokens, literal: String.fromCharCode(...tokens.map(t => (t as { c: number }).c)) }
      : { kind: 'part', tokens }
  })
}

function hasUnescaped(s: string, ch: string): boolean {
  for (let i = 0; i < s.length; i++) {
    if (s[i] === '\\') i++
    else if (s[i] === ch) return true
  }
  return false
}

function tokenize(seg: string): CharToken[] {
  const tokens: CharToken[] = []
  for (let i = 0; i < seg.length; i++) {
    const c = seg[i]
    if (c === '\\') {
      tokens.push({ t: 'lit', c: seg.charCodeAt(++i) })
    } else if (c === '*') {
      if (tokens.at(-1)?.t !== 'star') tokens.push({ t: 'star' })
    } else if (c === '?') {
      tokens.push({ t: 'any' })
    } else if (c === '[') {
      const end = classEnd(seg, i)
      tokens.push(parseClass(seg.slice(i + 1, end - 1)))
      i = end - 1
    } else {
      tokens.push({ t: 'lit', c: seg.charCodeAt(i) })
    }
  }
  return tokens
}

function parseClass(body: string): CharToken {
  let j = 0
  const negated = body[0] === '!' || body[0] === '^'
  if (negated) j++
  const ranges: Array<[number, number]> = []
  // picomatch reads [!a] as the set {'!', 'a'} (or the literal text), bash as
  // "not a": a scope check must cover both readings, so it may match anything.
  let unsure = body[0] === '!'

  const next = (): number => {
    if (body[j] === '\\') j++
    return body.charCodeAt(j++)
  }
  while (j < body.length) {
    if (body[j] === '[' && body[j + 1] === ':') {
      unsure = true // POSIX classes: treated as "could be anything"
      j = body.indexOf(':]', j + 2) + 2
      continue
    }
    const lo = next()
    if (body[j] === '-' && j + 1 < body.length) {
      j++
      ranges.push([lo, next()])
    } else {
      ranges.push([lo, lo])
    }
  }
  return { t: 'class', negated, ranges, unsure }
}
