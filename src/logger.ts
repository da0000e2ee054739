// One structured logger for the whole process; components take a child.
// Logs go to stderr so that stdout stays free for command output (and for the
// MCP stdio transport).
import { pino, type Logger } from 'pino'

export type { Logger }

let root: Logger | undefined

export function rootLogger(): Logger {
  root ??= pino(
    {
      level: process.env.AGENCY_LOG_LEVEL ?? (process.env.VITEST != null ? 'silent' : 'info'),
      base: undefined
    },
    pino.destination(2)
  )
  return root
}

export function componentLogger(component: string, bindings: Record<string, unknown> = {}): Logger {
  return rootLogger().child({ component, ...bindings })
}
