// What an adapter is given and what it produces. An adapter is a pure function
// from the first to the second; the supervisor does the I/O. And one run of a
// harness as a session driving it (acp/) sees it.
import type { Readable, Writable } from 'node:stream'

/** Everything an adapter needs to know about the agent it launches. */
export interface HarnessContext {
  agentId: string
  agentName: string
  /** The agent's git workspace; the harness runs there. */
  workspace: string
  /** The daemon's data dir; config files and the harness log go under it. */
  dataDir: string
  /** gRPC address of this agent's daemon. */
  agencyAddr: string
  /** The rendered prompt (see prompt.ts). */
  prompt: string
  /** How to run the `agency` CLI: a command line such as "node /opt/agency/dist/src/cli/agency.js". */
  agencyBin: string
  /**
   * Whether agency's sandbox (src/sandbox) is around the harness. Only then
   * does a CLI get its own bypass flags (the box is the boundary); absent or
   * false, each CLI runs in its own safest mode that still lets it work.
   */
  confined?: boolean
}

/** A file written before the harness starts (config, prompt, shim). */
export interface HarnessFile {
  path: string
  content: string
  /** File mode, e.g. 0o755 for a script; default 0o644. */
  mode?: number
}

/** How to start one harness: a command line, its environment and the files it reads. */
export interface HarnessLaunch {
  command: string
  args: string[]
  /** Set over the daemon's own environment. Never holds secrets. */
  env: Record<string, string>
  cwd: string
  files: HarnessFile[]
  /** Directories put in front of the inherited PATH (the `agency` shim lives in one). */
  pathPrepend?: string[]
  /** Directories the CLI writes besides its workspace (sessions, reports, histories): made before it starts, writable in a box. */
  writable?: string[]
  /** Set by a sandbox (src/sandbox): what runs inside the box, for the log; command and args then start the box. */
  boxed?: { sandbox: string; command: string; args: string[] }
}

export type HarnessAdapter = (ctx: HarnessContext) => HarnessLaunch

/** One run of the harness, as a session driving it sees it. */
export interface HarnessRun {
  stdin: Writable
  stdout: Readable
  /** A line of agentd's own in the harness log. */
  note: (text: string) => void
  /** A raw protocol line in the harness log. */
  raw: (text: string) => void
  /**
   * Ends the run: closes its stdin, then SIGTERM and SIGKILL after the grace
   * periods. With `failure` the run counts as failed; with only `reason` it
   * was ended on purpose (the work is done).
   */
  end: (o: { failure?: string; timedOut?: boolean; reason?: string }) => void
  alive: () => boolean
}

export interface HarnessRunSession {
  stop: () => Promise<void>
}
