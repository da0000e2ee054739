// Every agency command, found by walking `--help`, takes the global options
// wherever they stand: each gets one real call with `--addr` and `--json`
// after its own arguments (where a subcommand's option of the same name was
// once swallowed by the root's). Commands that print data print JSON; the
// rest either do their job or fail with one clear line, never a usage error.
import { spawn } from 'node:child_process'
import { chmod, mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AGENCY_BIN, REPO_ROOT, Scratch } from '../helpers/agent-loop.js'
import { envWithoutAgency } from '../helpers/agency-free-env.js'
import type { LocalDaemon } from '../../src/swarm/local-daemon.js'

interface Result {
  code: number | null
  stdout: string
  stderr: string
}

async function agency(args: string[], stdin = ''): Promise<Result> {
  const child = spawn(process.execPath, [AGENCY_BIN, ...args], { env: envWithoutAgency(), stdio: ['pipe', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (b: Buffer) => {
    stdout += b.toString()
  })
  child.stderr.on('data', (b: Buffer) => {
    stderr += b.toString()
  })
  child.stdin.end(stdin)
  // 'close', not 'exit': the output can still be on its way when the process exits.
  const code = await new Promise<number | null>(resolve => child.once('close', resolve))
  return { code, stdout, stderr }
}

/** Each command below `path` (in order, groups too) with its `--help`. */
async function walkHelp(path: string[] = []): Promise<Array<{ path: string[]; help: string }>> {
  const r = await agency([...path, '--help'])
  if (r.code !== 0 || r.stdout === '') throw new Error(`agency ${path.join(' ')} --help: exit ${r.code}\n${r.stderr}`)
  const help = r.stdout
  const section = help.split(/^Commands:$/m)[1]?.split(/^\S/m)[0] ?? ''
  const names = [...section.matchAll(/^ {2}([a-z][\w-]*)/gm)].map(m => m[1]).filter(n => n !== 'help')
  const below = await Promise.all(names.map(async name => await walkHelp([...path, name])))
  return [...(path.length > 0 ? [{ path, help }] : []), ...below.flat()]
}

type Expect = 'json' | 'ran' | 'clear-error'
interface Call {
  args: string[]
  expect: Expect
  stdin?: string
}

const scratch = new Scratch()
let d: LocalDaemon
let dir: string
let commands: string[][]
let helps: Map<string, string>

beforeAll(async () => {
  d = await scratch.daemon('commands')
  dir = await scratch.dir('agency-commands-')
  const walked = await walkHelp()
  commands = walked.map(c => c.path)
  helps = new Map(walked.map(c => [c.path.join(' '), c.help]))
}, 300_000)
afterAll(async () => {
  await scratch.cleanup()
})

/** One call per command, in an order that lets later ones find what earlier ones made. */
function calls(): Record<string, Call> {
  return {
    status: { args: ['status'], expect: 'json' },
    peers: { args: ['peers'], expect: 'json' },
    // One daemon: a direct message to itself is refused, in one line.
    send: { args: ['send', d.peerId, 'a note to myself'], expect: 'clear-error' },
    inbox: { args: ['inbox', '--peek'], expect: 'json' },
    announce: { args: ['announce', 'hello'], expect: 'json' },
    note: { args: ['note', 'a finding', '--kind', 'discovery'], expect: 'json' },
    find: { args: ['find', 'finding'], expect: 'json' },
    log: { args: ['log'], expect: 'json' },
    goal: { args: ['goal'], expect: 'json' },
    'task add': { args: ['task', 'add', 'walk-1', 'the first task'], expect: 'json' },
    'task add-plan': {
      args: ['task', 'add-plan', '-'],
      stdin: JSON.stringify([{ id: 'walk-2', title: 'the second', deps: [], scope: [] }]),
      expect: 'json'
    },
    'task list': { args: ['task', 'list'], expect: 'json' },
    'task show': { args: ['task', 'show', 'walk-1'], expect: 'json' },
    ready: { args: ['ready'], expect: 'json' },
    claim: { args: ['claim', 'walk-1'], expect: 'json' },
    workspace: { args: ['workspace'], expect: 'clear-error' },
    release: { args: ['release', 'walk-1'], expect: 'json' },
    done: { args: ['done', 'walk-2', '--no-change', 'nothing to change'], expect: 'clear-error' },
    wait: { args: ['wait', '--timeout', '1'], expect: 'json' },
    'review request': { args: ['review', 'request', 'walk-1'], expect: 'json' },
    'review approve': { args: ['review', 'approve', 'walk-1'], expect: 'json' },
    'review reject': { args: ['review', 'reject', 'walk-1'], expect: 'json' },
    'review retract': { args: ['review', 'retract', 'walk-1'], expect: 'json' },
    'review list': { args: ['review', 'list'], expect: 'json' },
    experts: { args: ['experts', 'src/'], expect: 'json' },
    assist: { args: ['assist'], expect: 'json' },
    integrate: { args: ['integrate'], expect: 'clear-error' },
    'request-integration': { args: ['request-integration'], expect: 'clear-error' },
    integrator: { args: ['integrator', '--once'], expect: 'clear-error' },
    tests: { args: ['tests'], expect: 'json' },
    events: { args: ['events'], expect: 'ran' },
    'swarm up': { args: ['swarm', 'up', '--harness', 'no-such-harness', '--dir', join(dir, 'swarm')], expect: 'clear-error' },
    'swarm down': { args: ['swarm', 'down', '--dir', join(dir, 'no-swarm')], expect: 'clear-error' },
    'swarm export': { args: ['swarm', 'export', '--dir', join(dir, 'no-swarm')], expect: 'clear-error' },
    keygen: { args: ['keygen', '--out', join(dir, 'swarm.key')], expect: 'ran' },
    'experiment run': {
      args: [
        'experiment',
        'run',
        '--task',
        join(dir, 'no-task'),
        '--agents',
        '1',
        '--harness',
        'sim',
        '--budget',
        '1m',
        '--out',
        join(dir, 'run')
      ],
      expect: 'clear-error'
    },
    'experiment score': {
      args: [
        'experiment',
        'score',
        '--task',
        join(REPO_ROOT, 'test/experiment/fixtures/echo-task'),
        '--submission',
        join(dir, 'submission')
      ],
      expect: 'json'
    },
    'experiment report': { args: ['experiment', 'report', join(dir, 'no-run')], expect: 'clear-error' },
    // No operator key: the operator's commands are refused in one line; the readers answer.
    'task cancel': { args: ['task', 'cancel', 'walk-2'], expect: 'clear-error' },
    'task priority': { args: ['task', 'priority', 'walk-2', '5'], expect: 'clear-error' },
    'operator keygen': { args: ['operator', 'keygen', '--out', join(dir, 'operator.key')], expect: 'ran' },
    'operator actions': { args: ['operator', 'actions'], expect: 'json' },
    pause: { args: ['pause'], expect: 'clear-error' },
    resume: { args: ['resume'], expect: 'clear-error' },
    broadcast: { args: ['broadcast', 'hello'], expect: 'clear-error' },
    approvals: { args: ['approvals'], expect: 'json' },
    approve: { args: ['approve', 'no-such-request'], expect: 'clear-error' },
    deny: { args: ['deny', 'no-such-request'], expect: 'clear-error' },
    members: { args: ['members'], expect: 'json' },
    'member allow': { args: ['member', 'allow', 'no-such-peer'], expect: 'clear-error' },
    'member remove': { args: ['member', 'remove', 'no-such-peer'], expect: 'clear-error' },
    usage: { args: ['usage', '--by', 'agent'], expect: 'json' },
    budget: { args: ['budget'], expect: 'json' },
    'budget set': { args: ['budget', 'set', '--usd', '5'], expect: 'json' },
    mcp: { args: ['mcp'], expect: 'ran' },
    // Last: it stops the daemon.
    stop: { args: ['stop'], expect: 'json' }
  }
}

describe('agency: global options on every command', () => {
  it('finds every command by its --help, and each lists the global options', async () => {
    expect(commands.length).toBeGreaterThan(30)
    for (const path of commands) {
      const help = helps.get(path.join(' '))
      expect(help, path.join(' ')).toMatch(/--json/)
      expect(help, path.join(' ')).toMatch(/--addr <addr>/)
      expect(help, path.join(' ')).toMatch(/--token-file <file>/)
    }
  })

  it('makes one call to each with --addr and --json after its arguments', async () => {
    // A submission that does not compile: scored, with the reason, as JSON.
    await mkdir(join(dir, 'submission'))
    await writeFile(join(dir, 'submission', 'compile.sh'), 'exit 1\n')
    await chmod(join(dir, 'submission', 'compile.sh'), 0o755)

    const table = calls()
    const groups = new Set(commands.filter(c => commands.some(o => o.length > c.length && o[0] === c[0])).map(c => c.join(' ')))
    expect(commands.map(c => c.join(' ')).filter(c => !groups.has(c) && table[c] == null)).toEqual([])

    for (const [name, call] of Object.entries(table)) {
      const r = name === 'events' ? await firstEvent() : await agency([...call.args, '--addr', d.grpc, '--json'], call.stdin)
      const what = `agency ${name}: exit ${r.code}\n${r.stdout}\n${r.stderr}`
      expect.soft(r.stderr, what).not.toMatch(/unknown option|error: /)
      if (call.expect === 'json') {
        expect.soft(r.code, what).toBe(0)
        expect.soft(() => JSON.parse(r.stdout) as unknown, what).not.toThrow()
      } else if (call.expect === 'ran') {
        expect.soft(r.code, what).toBe(0)
      } else {
        expect.soft(r.code, what).not.toBe(0)
        expect.soft(r.stderr.trim(), what).toMatch(/^agency: \S.*$/)
      }
    }
  }, 300_000)
})

/** `agency events` streams until stopped: its first event, as one JSON line, then stop it. */
async function firstEvent(): Promise<Result> {
  const child = spawn(process.execPath, [AGENCY_BIN, 'events', '--addr', d.grpc, '--json'], { env: envWithoutAgency() })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (b: Buffer) => {
    stdout += b.toString()
  })
  child.stderr.on('data', (b: Buffer) => {
    stderr += b.toString()
  })
  const exited = new Promise<void>(resolve =>
    child.once('exit', () => {
      resolve()
    })
  )
  try {
    // Events are live only, and a daemon's own announcement is no event of its own: the stream is
    // shown to open and stay open while another call goes through, saying nothing on stderr.
    await agency(['status', '--addr', d.grpc])
    return { code: child.exitCode ?? 0, stdout, stderr }
  } finally {
    child.kill('SIGTERM')
    await exited
  }
}
