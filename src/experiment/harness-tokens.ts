// Tokens an agent spent, where its harness writes them into harness.log:
// - Claude Code in print mode with --output-format stream-json ends each run
//   with a {"type":"result", ..., "usage": {input_tokens, output_tokens,
//   cache_creation_input_tokens, cache_read_input_tokens}} line;
// - Codex CLI's `codex exec` ends each run with "tokens used" and the total on
//   the next line ("tokens used: N" in older versions).
// Other harnesses (and the scripted agent) report none: null.

export interface TokenCount {
  /** every token counted, input (cached or not) and output */
  total: number
  /** input and output, when every run reported them apart */
  input: number | null
  output: number | null
  /** runs that reported a count */
  runs: number
}

export function tokensInHarnessLog (text: string): TokenCount | null {
  let total = 0
  let input = 0
  let output = 0
  let split = true
  let runs = 0
  const lines = text.split('\n')
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim()
    if (line.startsWith('{') && line.includes('"usage"') && line.includes('"result"')) {
      let event: { type?: unknown, usage?: Record<string, unknown> }
      try { event = JSON.parse(line) } catch { continue }
      if (event.type !== 'result' || event.usage == null || typeof event.usage !== 'object') continue
      const n = (k: string): number => typeof event.usage?.[k] === 'number' ? event.usage[k] as number : 0
      const inTokens = n('input_tokens') + n('cache_creation_input_tokens') + n('cache_read_input_tokens')
      input += inTokens
      output += n('output_tokens')
      total += inTokens + n('output_tokens')
      runs++
      continue
    }
    const codex = /^tokens used:?\s*([\d,]*)$/i.exec(line)
    if (codex != null) {
      const value = codex[1] !== '' ? codex[1] : (lines[i + 1] ?? '').trim()
      if (!/^[\d,]+$/.test(value)) continue
      total += Number(value.replace(/,/g, ''))
      split = false
      runs++
    }
  }
  if (runs === 0) return null
  return { total, input: split ? input : null, output: split ? output : null, runs }
}

/** The sum over agents; null when no agent's harness reported tokens. */
export function addTokens (counts: ReadonlyArray<TokenCount | null>): TokenCount | null {
  const known = counts.filter((c): c is TokenCount => c != null)
  if (known.length === 0) return null
  const split = known.every(c => c.input != null && c.output != null)
  return {
    total: known.reduce((s, c) => s + c.total, 0),
    input: split ? known.reduce((s, c) => s + (c.input ?? 0), 0) : null,
    output: split ? known.reduce((s, c) => s + (c.output ?? 0), 0) : null,
    runs: known.reduce((s, c) => s + c.runs, 0)
  }
}
