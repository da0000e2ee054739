// Lists the dashboard pages through: the server never sends a whole list of
// agents, tasks, findings or messages, only the page asked for and the total,
// so that 1024 agents or 100,000 findings cost the page what 50 do.
import { InvalidArgumentError } from '../core/errors.js'

export interface PageRequest {
  offset: number
  limit: number
}

export interface Page<T> {
  items: T[]
  /** how many there are in all */
  total: number
  offset: number
  limit: number
}

export interface PageBounds {
  /** the page size when none is asked for */
  limit: number
  /** the largest page size a client may ask for */
  max: number
}

export const DEFAULT_BOUNDS: PageBounds = { limit: 50, max: 200 }

/** A non-negative whole number from a query parameter, or the default when it is absent or empty. */
export function intParam(params: URLSearchParams, name: string, fallback: number): number {
  const raw = params.get(name)
  if (raw == null || raw === '') return fallback
  if (!/^\d{1,15}$/.test(raw))
    throw new InvalidArgumentError(`${name} must be a non-negative whole number, got ${JSON.stringify(raw.slice(0, 40))}`)
  return Number(raw)
}

/** offset and limit from a query string; a limit of 0 or over the bound is refused. */
export function parsePage(params: URLSearchParams, bounds: PageBounds = DEFAULT_BOUNDS): PageRequest {
  const offset = intParam(params, 'offset', 0)
  const limit = intParam(params, 'limit', bounds.limit)
  if (limit < 1 || limit > bounds.max) throw new InvalidArgumentError(`limit must be between 1 and ${bounds.max}, got ${limit}`)
  return { offset, limit }
}

/** One page of an already ordered list. */
export function pageOf<T>(items: readonly T[], req: PageRequest): Page<T> {
  return { items: items.slice(req.offset, req.offset + req.limit), total: items.length, offset: req.offset, limit: req.limit }
}

/**
 * At most `max` points spread evenly over `items`, the first and the last
 * always among them: a plot of 100,000 test runs draws what 2000 would.
 */
export function thin<T>(items: readonly T[], max: number): T[] {
  if (items.length <= max) return [...items]
  if (max < 2) return items.slice(-max)
  const out: T[] = []
  const step = (items.length - 1) / (max - 1)
  for (let i = 0; i < max; i++) out.push(items[Math.round(i * step)])
  return out
}

/** Text cut to `max` characters (an ellipsis marks the cut), for summaries of peer-written text. */
export function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`
}
