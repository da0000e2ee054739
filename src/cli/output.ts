// How agency prints: JSON for machines (--json), short lines for people, and
// errors as one line on stderr with a non-zero exit.
import type { Command } from 'commander'
import { connectAgency, type Agency } from '../client/agency.js'
import { isAgencyError } from '../core/errors.js'

export interface CommonOpts {
  json?: boolean
  addr?: string
  tokenFile?: string
  operatorKey?: string
}

/**
 * A subcommand. The options every command takes (--json, --addr, --token-file)
 * are declared once, on the root, and reach every command's opts.
 */
export function command(parent: Command, name: string, description: string): Command {
  return parent.command(name).description(description)
}

export function printJson(value: unknown): void {
  process.stdout.write(JSON.stringify(value, (_k, v: unknown) => (isBufferJson(v) ? Buffer.from(v.data).toString('hex') : v), 2) + '\n')
}

export function line(text: string): void {
  process.stdout.write(text + '\n')
}

/** Runs a command body with a connected client and the standard error handling. */
export function withAgency<A extends unknown[]>(body: (agency: Agency, ...args: A) => Promise<void>) {
  return async (...args: A): Promise<void> => {
    const cmd = args[args.length - 1] as Command
    const opts = cmd.optsWithGlobals<CommonOpts>()
    // The options a global flag landed on: `agency --json status` and `agency status --json` alike.
    args[args.length - 2] = { ...(args[args.length - 2] as object), ...opts }
    const agency = connectAgency(opts.addr, { tokenFile: opts.tokenFile })
    try {
      await body(agency, ...args)
    } catch (err) {
      fail(err)
    } finally {
      agency.close()
    }
  }
}

export function fail(err: unknown): never {
  const message = isAgencyError(err) ? err.message : ((err as Error)?.message ?? String(err))
  process.stderr.write(`agency: ${message}\n`)
  process.exit(isAgencyError(err) && err.code === 'UNAVAILABLE' ? 3 : 1)
}

export function ago(ms: number): string {
  if (ms < 0) return 'never'
  if (ms < 1000) return 'now'
  if (ms < 60_000) return `${Math.round(ms / 1000)}s ago`
  if (ms < 3600_000) return `${Math.round(ms / 60_000)}m ago`
  return `${Math.round(ms / 3600_000)}h ago`
}

export function short(peerId: string): string {
  return peerId.length > 12 ? `…${peerId.slice(-8)}` : peerId
}

/** How JSON.stringify writes a Buffer (its toJSON runs before the replacer sees it). */
function isBufferJson(v: unknown): v is { type: 'Buffer'; data: number[] } {
  return v != null && typeof v === 'object' && (v as { type?: unknown }).type === 'Buffer' && Array.isArray((v as { data?: unknown }).data)
}
