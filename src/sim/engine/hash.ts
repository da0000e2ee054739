// Stateless, seeded hashing of small integers to [0, 1). The simulator uses it
// where drawing from a PRNG stream would need per-pair state: per-link base
// latency for a million links, per-(message, receiver) jitter and loss. The
// same inputs give the same number, whatever order the questions come in.

function mix(h: number, v: number): number {
  h = Math.imul(h ^ (v >>> 0), 0x85ebca6b) >>> 0
  h = (h ^ (h >>> 13)) >>> 0
  h = Math.imul(h, 0xc2b2ae35) >>> 0
  return (h ^ (h >>> 16)) >>> 0
}

/** A 32-bit hash of the seed and up to four integers. */
export function hash32(seed: number, a: number, b = 0, c = 0, d = 0): number {
  return mix(mix(mix(mix((seed ^ 0x9e3779b9) >>> 0, a), b), c), d)
}

/** Uniform in [0, 1), from the seed and up to four integers. */
export function hashUnit(seed: number, a: number, b = 0, c = 0, d = 0): number {
  return hash32(seed, a, b, c, d) / 4294967296
}
