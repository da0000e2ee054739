// The one place that decides what an agent's harness and a commit's test run
// can touch. A sandbox transforms a launch: the adapter's HarnessLaunch goes
// in, the same launch wrapped in a box comes out; a test command goes in, the
// command that runs it boxed and bounded comes out. Adapters never know.
import { appendFileSync, chmodSync, chownSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { homedir, tmpdir } from 'node:os'
import { dirname, isAbsolute, join, relative } from 'node:path'
import { bwrapArgs, type BoxSpec, type HiddenDir } from './box.js'
import { DEFAULT_RUN_LIMITS, runGroup, type RunLimits } from './limits.js'
import {
  chooseSandbox,
  detectSupport,
  parseAllowList,
  parseSandboxMode,
  type AllowedHost,
  type SandboxKind,
  type SandboxSupport
} from './mode.js'
import { baseUrlHosts, configuredBaseUrlHosts, expandPorts, harnessCli, MODEL_ENDPOINTS, NetworkBridges } from './network.js'
import {
  AUTH_FILES,
  existing,
  gitDirsOutside,
  hiddenDir,
  nodePrefix,
  parseHidden,
  programDirs,
  rehomed,
  SYSTEM_DIRS,
  toolchainRoots
} from './paths.js'
import { executeOnlyCopies, parseRunOnly, type RunOnlyFile } from './run-only.js'
import { RefusalWatch, refusalsIn, refusalNote, type RefusalKind } from './refusals.js'
import { packageRoot } from '../harness/package-paths.js'
import { UnconfinedHarnessError } from './errors.js'
import { giveToUser, shareWithGroup } from './ownership.js'
import { DEFAULT_SANDBOX_USER, runsAsRoot, sandboxUser, type BoxUser } from './user.js'
import type { HarnessLaunch } from '../harness/types.js'

export interface SandboxOptions {
  /** auto | bwrap | docker | none (a string from a flag is checked) */
  mode: string
  /** --sandbox-allow: more hosts the harness may reach */
  allow?: readonly string[]
  /** --test-network on: test runs keep the host's network */
  testNetwork?: boolean
  /** bounds on each test run */
  limits?: RunLimits
  /** the daemon's data dir: never inside a box, nor its neighbours (other agents on the host) */
  dataDir: string
  /** --sandbox-hide: more paths no box sees into (an experiment's task, its hidden tests and its other runs) */
  hide?: readonly string[]
  /** --sandbox-run-only: files each box may run but not read (FILE=BOXPATH), e.g. a reference executable */
  runOnly?: readonly string[]
  /** what the host supports; default: found out by trying */
  support?: SandboxSupport
  /** each refusal seen inside a box (the metric) */
  onRefusal?: (kind: RefusalKind) => void
  /** --sandbox-user: who runs inside a box when agentd runs as root (default `agency`, created when missing) */
  user?: string
  /** whether agentd runs as root; default: asked of the process */
  asRoot?: boolean
}

/** What the harness of one agent needs besides its launch. */
export interface HarnessBoxOptions {
  /** the --harness value: which model endpoints it needs, and whether it may run unconfined */
  harness: string
  /** the daemon's API address as the agent gets it: unix:<path> or host:port */
  apiAddress: string
  /** where refusals are named: the harness log */
  logFile: string
}

export interface ConfinedHarness {
  launch: HarnessLaunch
  /** Stops what serves the box (its network bridges, the refusal watch). */
  stop: () => Promise<void>
}

/** How one test run is started, and what to say after it. */
export interface ConfinedTest {
  command: string
  args: string[]
  env: NodeJS.ProcessEnv
  /** After the run: the bound it hit (the run failed), and what else to say (what the box refused). Removes what was made for it. */
  finish: (output: string) => TestRunVerdict
}

export interface TestRunVerdict {
  failure?: string
  notes: string[]
}

export interface Sandbox {
  readonly kind: SandboxKind
  /** One line for the log at start: what was chosen and why. */
  readonly summary: string
  confineHarness: (launch: HarnessLaunch, o: HarnessBoxOptions) => Promise<ConfinedHarness>
  confineTest: (command: string, cwd: string, env: NodeJS.ProcessEnv) => ConfinedTest
  /** Throws UnconfinedHarnessError when `harness` would run a model with nothing around it: checked before anything starts. */
  admit: (harness: string) => void
  /** Where each refusal is counted (the daemon's metric), once the daemon has its metrics. */
  countRefusals: (count: (kind: RefusalKind) => void) => void
  /**
   * Where a path under the real home is for the harness's CLI (in a box: the same place under the box's home), e.g. to read its session
   * files back.
   */
  homePath: (realPath: string) => string
}

/** The box's user runs git in trees root owns (the workspace, a test run's tree): git must not call that dubious. */
const gitTrustsRootsTrees = { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'safe.directory', GIT_CONFIG_VALUE_0: '*' }

/** Harnesses that are the project's own code and run no model: allowed without a box. */
const OWN_HARNESSES = new Set(['sim'])

/** Checks every option and picks the mode; throws (and starts nothing) on bad input or a mode that cannot run. */
export function createSandbox(o: SandboxOptions): Sandbox {
  const mode = parseSandboxMode(o.mode)
  const allowed = parseAllowList(o.allow ?? [])
  const runOnly = parseRunOnly(o.runOnly ?? [])
  const hide = parseHidden(o.hide ?? [])
  const support =
    o.support ??
    (mode === 'none'
      ? { bwrap: { ok: false as const, reason: 'not asked for' }, docker: { ok: false as const, reason: 'not asked for' } }
      : detectSupport())
  const kind = chooseSandbox(mode, support)
  const why = support.bwrap.ok ? '' : support.bwrap.reason
  if (kind === 'none') {
    return new Unconfined(
      mode === 'none'
        ? "sandbox: none (--sandbox none): agents and test runs run as the daemon's user with nothing around them"
        : `sandbox: none available (${why}); model-running harnesses will not start, the sim agent runs unconfined`,
      mode === 'none'
    )
  }
  const user = (o.asRoot ?? runsAsRoot()) ? sandboxUser(o.user ?? DEFAULT_SANDBOX_USER) : undefined
  const as = user != null ? `, as user ${user.name} (uid ${user.uid})` : ''
  return new BubblewrapSandbox(
    { ...o, hide },
    allowed,
    runOnly,
    `${mode === 'auto' ? 'sandbox: bwrap (auto: bubblewrap works here)' : 'sandbox: bwrap'}${as}`,
    user
  )
}

class Unconfined implements Sandbox {
  readonly kind = 'none'
  constructor(
    readonly summary: string,
    private readonly chosen: boolean
  ) {}

  admit(harness: string): void {
    if (!this.chosen && !OWN_HARNESSES.has(harness)) throw new UnconfinedHarnessError(harness, 'no sandbox works on this host')
  }

  countRefusals(): void {}

  homePath(realPath: string): string {
    return realPath
  }

  async confineHarness(launch: HarnessLaunch, o: HarnessBoxOptions): Promise<ConfinedHarness> {
    this.admit(o.harness)
    return { launch, stop: async () => {} }
  }

  confineTest(command: string, cwd: string, env: NodeJS.ProcessEnv): ConfinedTest {
    return { command: '/bin/sh', args: ['-c', command], env, finish: () => ({ notes: [] }) }
  }
}

class BubblewrapSandbox implements Sandbox {
  readonly kind = 'bwrap'
  private readonly standIn: string
  private readonly runOnly: Array<[string, string]>
  private readonly limits: RunLimits
  private count: (kind: RefusalKind) => void
  /** The last harness log a box was made for: a test run's refusals are named there too. */
  private harnessLog: string | undefined

  constructor(
    private readonly o: SandboxOptions,
    private readonly allowed: AllowedHost[],
    runOnly: RunOnlyFile[],
    readonly summary: string,
    private readonly user?: BoxUser
  ) {
    this.limits = o.limits ?? DEFAULT_RUN_LIMITS
    this.count = o.onRefusal ?? (() => {})
    // An empty file nobody may read, bound over each hidden file.
    const dir = mkdtempSync(join(tmpdir(), 'agency-standin-'))
    this.standIn = join(dir, 'hidden')
    writeFileSync(this.standIn, '')
    chmodSync(this.standIn, 0)
    this.runOnly = executeOnlyCopies(runOnly, dir)
    process.once('exit', () => {
      rmSync(dir, { recursive: true, force: true })
    })
  }

  admit(): void {}

  countRefusals(count: (kind: RefusalKind) => void): void {
    const before = this.count
    this.count = kind => {
      before(kind)
      count(kind)
    }
  }

  homePath(realPath: string): string {
    const rel = relative(homedir(), realPath)
    return rel === '' || rel.startsWith('..') || isAbsolute(rel) ? realPath : join(this.o.dataDir, 'sandbox-home', rel)
  }

  async confineHarness(launch: HarnessLaunch, h: HarnessBoxOptions): Promise<ConfinedHarness> {
    const env = { ...process.env, ...launch.env }
    const cli = harnessCli(h.harness)
    const destinations = expandPorts([
      ...(cli != null ? MODEL_ENDPOINTS[cli].map(e => ({ host: e.split(':')[0], port: Number(e.split(':')[1]) })) : []),
      ...baseUrlHosts(env),
      ...configuredBaseUrlHosts(homedir()),
      ...this.allowed
    ])
    const sockets: string[] = []
    if (h.apiAddress.startsWith('unix:')) sockets.push(h.apiAddress.slice('unix:'.length).replace(/^\/\//, ''))
    else {
      const m = /^(.*):(\d+)$/.exec(h.apiAddress)
      if (m != null) destinations.push({ host: m[1].replace(/^\[|\]$/g, ''), port: Number(m[2]) })
    }
    const bridges = new NetworkBridges(destinations)
    await bridges.start()
    // The CLI's own state (its config, sessions, caches) lives in a home of the box's own, kept across runs.
    const home = join(this.o.dataDir, 'sandbox-home')
    mkdirSync(home, { recursive: true })
    const realHome = homedir()
    let auth: Array<[string, string]> = existing(AUTH_FILES.map(f => join(realHome, f))).map(f => [f, join(home, relative(realHome, f))])
    const path = [...(launch.pathPrepend ?? []), env.PATH ?? ''].join(':')
    // The supervisor writes the harness's files when it starts; their directories are bound now.
    const harnessFiles = [...new Set(launch.files.map(f => dirname(f.path)))]
    for (const d of [...harnessFiles, ...(launch.writable ?? [])]) mkdirSync(d, { recursive: true })
    if (this.user != null) {
      auth = this.forUser(this.user, launch, home, sockets, auth)
    }
    const spec: BoxSpec = {
      readOnly: existing([
        ...SYSTEM_DIRS,
        nodePrefix(),
        packageRoot,
        ...programDirs(launch.command, path),
        ...toolchainRoots(path),
        ...gitDirsOutside(launch.cwd),
        ...harnessFiles
      ]),
      writable: [launch.cwd, home, ...(launch.writable ?? [])],
      hidden: this.hidden(),
      standIn: this.standIn,
      sockets: existing(sockets),
      readOnlyAt: auth,
      runOnly: this.runOnly,
      network: bridges.bridges,
      hostsFile: bridges.hostsFile,
      env: {},
      cwd: launch.cwd,
      ...(this.user != null ? { user: this.user } : {})
    }
    this.harnessLog = h.logFile
    const watch = new RefusalWatch(h.logFile, kind => {
      this.count(kind)
    })
    watch.start()
    const boxed: HarnessLaunch = {
      ...launch,
      command: 'bwrap',
      args: bwrapArgs(spec, launch.command, launch.args),
      boxed: { sandbox: 'bwrap', command: launch.command, args: launch.args },
      env: {
        ...launch.env,
        ...rehomed(env, realHome, home),
        HOME: home,
        TMPDIR: '/tmp',
        AGENCY_SANDBOX_KIND: 'bwrap',
        ...(this.user != null ? gitTrustsRootsTrees : {})
      }
    }
    return {
      launch: boxed,
      stop: async () => {
        watch.stop()
        await bridges.stop()
      }
    }
  }

  confineTest(command: string, cwd: string, env: NodeJS.ProcessEnv): ConfinedTest {
    if (this.user != null) shareWithGroup(cwd, this.user)
    const spec: BoxSpec = {
      readOnly: existing([
        ...SYSTEM_DIRS,
        nodePrefix(),
        ...programDirs('sh', env.PATH ?? ''),
        ...toolchainRoots(env.PATH ?? ''),
        ...gitDirsOutside(cwd)
      ]),
      writable: [cwd],
      hidden: this.hidden(),
      standIn: this.standIn,
      sockets: [],
      readOnlyAt: [],
      runOnly: this.runOnly,
      network: this.o.testNetwork === true ? 'host' : 'off',
      env: {},
      cwd,
      ...(this.user != null ? { user: this.user } : {})
    }
    const box = ['bwrap', ...bwrapArgs(spec, '/bin/sh', ['-c', command])]
    const group = runGroup(this.limits)
    const words = 'prefix' in group ? [...group.prefix, ...box] : box
    return {
      command: words[0],
      args: words.slice(1),
      env: { ...env, HOME: '/tmp', TMPDIR: '/tmp', ...(this.user != null ? gitTrustsRootsTrees : {}) },
      finish: output => {
        const notes: string[] = []
        let failure: string | undefined
        if ('prefix' in group) {
          failure = group.verdict()
          group.remove()
        } else notes.push(group.unavailable)
        const refused = refusalsIn(output)
        for (const r of refused) this.count(r.kind)
        notes.push(...refused.slice(0, 5).map(r => refusalNote(r.kind, r.line)))
        this.noteTestRefusals(refused)
        return { failure, notes }
      }
    }
  }

  /**
   * agentd as root: what the box's user needs of the host. The box's home and
   * the CLI's own directories become the user's, the workspace is shared with
   * its group (and what the daemon's git writes there later stays shared: the
   * daemon's umask keeps the group's write bit), the logins are copies the
   * user may read (the real ones are root's, mode 0600), and the daemon's
   * socket is opened to the group. Returns the logins to bind.
   */
  private forUser(
    user: BoxUser,
    launch: HarnessLaunch,
    home: string,
    sockets: string[],
    logins: Array<[string, string]>
  ): Array<[string, string]> {
    process.umask(0o002)
    // The directories the logins are bound into are made now, so that they are the user's too (bwrap would make them root's).
    for (const [, box] of logins) mkdirSync(dirname(box), { recursive: true })
    giveToUser(home, user)
    for (const d of launch.writable ?? []) giveToUser(d, user)
    shareWithGroup(launch.cwd, user)
    for (const s of existing(sockets)) {
      chownSync(s, -1, user.gid)
      chmodSync(s, 0o660)
    }
    const copies = join(this.o.dataDir, 'sandbox-logins')
    return logins.map(([real, box]) => {
      const copy = join(copies, relative(home, box))
      mkdirSync(dirname(copy), { recursive: true })
      rmSync(copy, { force: true })
      copyFileSync(real, copy)
      chownSync(copy, user.uid, user.gid)
      chmodSync(copy, 0o400)
      return [copy, box]
    })
  }

  /** A test run's refusals, named in the harness log (the watch there does not count our own lines again). */
  private noteTestRefusals(refused: Array<{ kind: RefusalKind; line: string }>): void {
    if (this.harnessLog == null || refused.length === 0) return
    const at = new Date().toISOString()
    try {
      appendFileSync(this.harnessLog, refused.map(r => `[${at}] ${refusalNote(r.kind, `test run: ${r.line}`)}\n`).join(''))
    } catch {
      /* no harness log */
    }
  }

  /** The user's home, the data dir and its neighbours (other agents' data dirs on this host), and what --sandbox-hide names. */
  private hidden(): HiddenDir[] {
    const dataDir = this.o.dataDir
    const parent = dirname(dataDir)
    const dirs = [homedir(), ...(parent !== tmpdir() ? [parent] : []), dataDir, ...(this.o.hide ?? [])]
    return dirs.map(hiddenDir).filter((d): d is HiddenDir => d != null && existsSync(d.path))
  }
}
