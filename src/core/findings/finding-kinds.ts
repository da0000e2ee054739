// The kinds of finding an agent records. The log accepts any string here (so
// that a newer peer's kind does not stall an older peer's sync); APIs that
// record findings accept only these.
export const FINDING_KINDS = ['discovery', 'failure', 'bug', 'decision', 'note'] as const

export type FindingKind = (typeof FINDING_KINDS)[number]

export function isFindingKind(kind: string): kind is FindingKind {
  return (FINDING_KINDS as readonly string[]).includes(kind)
}
