// Terms to small handles, looked up from a slice of a text without making a
// string for a term the table has: the findings index looks up every word of
// every finding it takes in, and most words are ones it has seen. Open
// addressing (FNV-1a of the lower-cased characters, linear probing), kept at
// most half full.

const FNV_OFFSET = 0x811c9dc5
const FNV_PRIME = 0x01000193

export class TermTable {
  /** the terms, by handle */
  readonly terms: string[] = []
  private readonly hashes: number[] = []
  /** handle + 1 per slot, 0 for an empty one */
  private slots = new Int32Array(1024)

  get size(): number {
    return this.terms.length
  }

  /** The handle of `text[start, end)` lower-cased, made when new; the slice must be ASCII (the caller checked). */
  handleOfAscii(text: string, start: number, end: number): number {
    let h = FNV_OFFSET
    for (let i = start; i < end; i++) {
      let c = text.charCodeAt(i)
      if (c >= 65 && c <= 90) c += 32
      h = Math.imul(h ^ c, FNV_PRIME)
    }
    const mask = this.slots.length - 1
    for (let s = h & mask; ; s = (s + 1) & mask) {
      const at = this.slots[s] - 1
      if (at < 0) return this.insert(s, h, text.slice(start, end).toLowerCase())
      if (this.hashes[at] === h && sameLowered(this.terms[at], text, start, end)) return at
    }
  }

  /** The handle of `term` (lower-case already), made when new. */
  handleOf(term: string): number {
    const h = hashOf(term)
    const mask = this.slots.length - 1
    for (let s = h & mask; ; s = (s + 1) & mask) {
      const at = this.slots[s] - 1
      if (at < 0) return this.insert(s, h, term)
      if (this.hashes[at] === h && this.terms[at] === term) return at
    }
  }

  /** The handle of `term`, or -1. */
  find(term: string): number {
    const h = hashOf(term)
    const mask = this.slots.length - 1
    for (let s = h & mask; ; s = (s + 1) & mask) {
      const at = this.slots[s] - 1
      if (at < 0) return -1
      if (this.hashes[at] === h && this.terms[at] === term) return at
    }
  }

  private insert(slot: number, h: number, term: string): number {
    const at = this.terms.length
    this.terms.push(term)
    this.hashes.push(h)
    this.slots[slot] = at + 1
    if (this.terms.length * 2 > this.slots.length) this.grow()
    return at
  }

  private grow(): void {
    const slots = new Int32Array(this.slots.length * 2)
    const mask = slots.length - 1
    for (let at = 0; at < this.terms.length; at++) {
      let s = this.hashes[at] & mask
      while (slots[s] !== 0) s = (s + 1) & mask
      slots[s] = at + 1
    }
    this.slots = slots
  }
}

function hashOf(term: string): number {
  let h = FNV_OFFSET
  for (let i = 0; i < term.length; i++) h = Math.imul(h ^ term.charCodeAt(i), FNV_PRIME)
  return h
}

/** True when `text[start, end)`, its ASCII capitals lowered, is `term`. */
function sameLowered(term: string, text: string, start: number, end: number): boolean {
  if (term.length !== end - start) return false
  for (let i = 0; i < term.length; i++) {
    let c = text.charCodeAt(start + i)
    if (c >= 65 && c <= 90) c += 32
    if (c !== term.charCodeAt(i)) return false
  }
  return true
}
