import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { HARNESS_NAMES, harnessLaunch, type HarnessContext, type HarnessLaunch } from '../../src/harness/index.js'
import { SCRIPTED_AGENT_MAIN, isScriptedHarness } from '../../src/harness/adapters/scripted.js'
import { acpAgentLaunch } from '../../src/harness/acp/acp-agents.js'
import { packageRoot } from '../../src/harness/package-paths.js'
import { InvalidArgumentError } from '../../src/core/errors.js'

const ctx: HarnessContext = {
  agentId: 'agent-7',
  agentName: 'ada',
  workspace: '/work/ws/ada',
  dataDir: '/data/ada',
  agencyAddr: '127.0.0.1:7401',
  prompt: 'Do the work.',
  agencyBin: 'node /opt/agency/dist/src/cli/agency.js',
  // The golden lines below are those inside agency's sandbox; 'without agency's sandbox' has the others.
  confined: true
}

const agencyEnv = { AGENCY_ADDR: '127.0.0.1:7401', AGENCY_AGENT_ID: 'agent-7', AGENCY_AGENT_NAME: 'ada' }
const mcpServer = { command: 'node', args: ['/opt/agency/dist/src/cli/agency.js', 'mcp'], env: agencyEnv }

// What every launch carries: the prompt file, the `agency` shim on PATH, the agent's env.
const common = {
  env: { ...agencyEnv, AGENCY_PROMPT_FILE: '/data/ada/harness/prompt.md' },
  cwd: '/work/ws/ada',
  pathPrepend: ['/data/ada/harness/bin']
}
const commonFiles = [
  { path: '/data/ada/harness/prompt.md', content: 'Do the work.' },
  {
    path: '/data/ada/harness/bin/agency',
    mode: 0o755,
    content: [
      '#!/bin/sh',
      "# Written by agentd: the agency CLI for this agent's daemon.",
      ': "${AGENCY_ADDR:=127.0.0.1:7401}"',
      'export AGENCY_ADDR',
      'exec node /opt/agency/dist/src/cli/agency.js "$@"',
      ''
    ].join('\n')
  }
]

function json(value: unknown): string {
  return JSON.stringify(value, null, 2) + '\n'
}

describe('harness adapters: golden command lines, environments and MCP configuration', () => {
  it('claude: print mode, MCP config file (waited for), edits accepted, Bash and the agency tools allowed', () => {
    const expected: HarnessLaunch = {
      ...common,
      env: { ...common.env, MCP_CONNECT_TIMEOUT_MS: '30000' },
      command: 'claude',
      args: [
        '-p',
        'Do the work.',
        '--mcp-config',
        '/data/ada/harness/claude-mcp.json',
        '--permission-mode',
        'acceptEdits',
        '--allowedTools',
        'Bash,mcp__agency',
        '--output-format',
        'stream-json',
        '--verbose'
      ],
      files: [
        ...commonFiles,
        {
          path: '/data/ada/harness/claude-mcp.json',
          content: json({ mcpServers: { agency: { type: 'stdio', ...mcpServer, alwaysLoad: true } } })
        }
      ]
    }
    expect(harnessLaunch('claude', ctx)).toEqual(expected)
  })

  it('codex: exec, no approvals or sandbox, no login shell, the MCP server as required config overrides that forward the token', () => {
    const expected: HarnessLaunch = {
      ...common,
      command: 'codex',
      args: [
        'exec',
        '--dangerously-bypass-approvals-and-sandbox',
        '-c',
        'allow_login_shell=false',
        '-c',
        'mcp_servers.agency.command="node"',
        '-c',
        'mcp_servers.agency.args=["/opt/agency/dist/src/cli/agency.js", "mcp"]',
        '-c',
        'mcp_servers.agency.env.AGENCY_ADDR="127.0.0.1:7401"',
        '-c',
        'mcp_servers.agency.env.AGENCY_AGENT_ID="agent-7"',
        '-c',
        'mcp_servers.agency.env.AGENCY_AGENT_NAME="ada"',
        '-c',
        'mcp_servers.agency.env_vars=["AGENCY_TOKEN"]',
        '-c',
        'mcp_servers.agency.required=true',
        '-c',
        'mcp_servers.agency.startup_timeout_sec=60',
        '-c',
        'mcp_servers.agency.tool_timeout_sec=1800',
        'Do the work.'
      ],
      files: commonFiles
    }
    expect(harnessLaunch('codex', ctx)).toEqual(expected)
  })

  it('copilot: -p with all tools allowed, no auto-update, an additional MCP config file whose tools are never deferred', () => {
    const expected: HarnessLaunch = {
      ...common,
      command: 'copilot',
      args: [
        '-p',
        'Do the work.',
        '--allow-all-tools',
        '--no-auto-update',
        '--additional-mcp-config',
        '@/data/ada/harness/copilot-mcp.json',
        '--usage-output-file',
        '/data/ada/harness/copilot-usage/copilot-usage.json'
      ],
      writable: ['/data/ada/harness/copilot-usage'],
      files: [
        ...commonFiles,
        {
          path: '/data/ada/harness/copilot-mcp.json',
          content: json({ mcpServers: { agency: { type: 'stdio', ...mcpServer, tools: ['*'], deferTools: 'never', timeout: 1_800_000 } } })
        }
      ]
    }
    expect(harnessLaunch('copilot', ctx)).toEqual(expected)
  })

  it("gemini: headless yolo, the trusted agency server in the workspace's .gemini/settings.json (kept out of git), the folder trusted by environment", () => {
    const expected: HarnessLaunch = {
      ...common,
      env: { ...common.env, GEMINI_CLI_TRUST_WORKSPACE: 'true', GEMINI_SANDBOX: 'false' },
      command: 'gemini',
      args: ['--prompt', 'Do the work.', '--approval-mode', 'yolo', '--output-format', 'stream-json'],
      files: [
        ...commonFiles,
        {
          path: '/work/ws/ada/.gemini/settings.json',
          content: json({
            mcpServers: { agency: { ...mcpServer, trust: true } },
            // Names only: Gemini strips variables named like secrets from an MCP server's environment.
            security: { environmentVariableRedaction: { allowed: ['AGENCY_TOKEN', 'AGENCY_TOKEN_FILE'] } }
          })
        },
        { path: '/work/ws/ada/.gemini/.gitignore', content: '# Written by agentd for Gemini CLI: keep this directory out of git.\n*\n' }
      ]
    }
    expect(harnessLaunch('gemini', ctx)).toEqual(expected)
  })

  it('pi: print mode with the prompt as its message, sessions kept in the data dir, no MCP config (it uses the agency CLI)', () => {
    const expected: HarnessLaunch = {
      ...common,
      command: 'pi',
      args: ['--print', '--session-dir', '/data/ada/harness/pi-sessions', 'Do the work.'],
      writable: ['/data/ada/harness/pi-sessions'],
      files: commonFiles
    }
    expect(harnessLaunch('pi', ctx)).toEqual(expected)
  })

  it('pi: a prompt that starts like an option or a file stays a message', () => {
    expect(harnessLaunch('pi', { ...ctx, prompt: '--help me' }).args.at(-1)).toBe('\n--help me')
    expect(harnessLaunch('pi', { ...ctx, prompt: '@notes.md first' }).args.at(-1)).toBe('\n@notes.md first')
  })

  it('aider: the prompt file as its message, always yes, history kept out of the workspace, no MCP config', () => {
    const expected: HarnessLaunch = {
      ...common,
      command: 'aider',
      args: [
        '--message-file',
        '/data/ada/harness/prompt.md',
        '--yes-always',
        '--no-gitignore',
        '--chat-history-file',
        '/data/ada/harness/aider/aider.chat.history.md',
        '--input-history-file',
        '/data/ada/harness/aider/aider.input.history',
        '--no-check-update',
        '--no-show-release-notes',
        '--analytics-disable',
        '--no-pretty'
      ],
      writable: ['/data/ada/harness/aider'],
      files: commonFiles
    }
    expect(harnessLaunch('aider', ctx)).toEqual(expected)
  })

  it('scripted: this node running the compiled scripted agent, with no arguments; sim is the same harness', () => {
    expect(SCRIPTED_AGENT_MAIN).toBe(join(packageRoot, 'dist', 'src', 'harness', 'scripted-agent', 'main.js'))
    const expected: HarnessLaunch = { ...common, command: process.execPath, args: [SCRIPTED_AGENT_MAIN], files: commonFiles }
    expect(harnessLaunch('scripted', ctx)).toEqual(expected)
    expect(harnessLaunch('sim', ctx)).toEqual(expected)
    expect(['scripted', 'sim', 'claude', undefined].map(isScriptedHarness)).toEqual([true, true, false, false])
  })

  it('cmd: any shell command under /bin/sh -c, quoted or not', () => {
    const expected: HarnessLaunch = { ...common, command: '/bin/sh', args: ['-c', './my-agent --fast "x y"'], files: commonFiles }
    expect(harnessLaunch('cmd:./my-agent --fast "x y"', ctx)).toEqual(expected)
    expect(harnessLaunch('cmd:"./my-agent --fast \\"x y\\""', ctx)).toEqual(expected)
    expect(harnessLaunch('cmd:\'./my-agent --fast "x y"\'', ctx)).toEqual(expected)
    // Two quoted words are a command line already, not one quoted command.
    expect(harnessLaunch('cmd:"./my agent" "x y"', ctx).args).toEqual(['-c', '"./my agent" "x y"'])
  })

  it('splits a quoted agency command for the MCP server and quotes it back in the shim', () => {
    const launch = harnessLaunch('claude', { ...ctx, agencyBin: '"/opt/my node/bin/node" /opt/agency/agency.js' })
    const config = JSON.parse(launch.files.find(f => f.path.endsWith('claude-mcp.json'))!.content)
    expect(config.mcpServers.agency.command).toBe('/opt/my node/bin/node')
    expect(config.mcpServers.agency.args).toEqual(['/opt/agency/agency.js', 'mcp'])
    const shim = launch.files.find(f => f.path.endsWith('/bin/agency'))!.content
    expect(shim).toContain('exec \'/opt/my node/bin/node\' /opt/agency/agency.js "$@"')
  })

  it('never writes a secret: only the agent identity, the daemon and config paths reach the environment', () => {
    for (const name of ['claude', 'codex', 'copilot', 'gemini', 'pi', 'aider', 'scripted', 'sim', 'cmd:true']) {
      const launch = harnessLaunch(name, ctx)
      for (const key of Object.keys(launch.env))
        expect(key).toMatch(/^(AGENCY_|GEMINI_CLI_TRUST_WORKSPACE$|GEMINI_SANDBOX$|MCP_CONNECT_TIMEOUT_MS$)/)
      // Gemini's redaction allow-list names the token variables: a name, never the value.
      for (const file of launch.files)
        expect(file.content.replace(/"AGENCY_TOKEN(_FILE)?"/g, '""')).not.toMatch(/api[_-]?key|token|secret/i)
    }
  })
})

describe("without agency's sandbox: each CLI in its own safest mode that still works", () => {
  const bare: HarnessContext = { ...ctx, confined: false }
  const bypass = /--dangerously|danger-full-access|--allow-all-tools|yolo|^Bash$|,Bash,|^Bash,/

  it('no CLI gets its bypass or yolo flag; absent is the same as false', () => {
    for (const name of ['claude', 'codex', 'copilot', 'gemini', 'pi', 'aider']) {
      const launch = harnessLaunch(name, bare)
      for (const word of launch.args) expect(word, `${name}: ${word}`).not.toMatch(bypass)
      const { confined: _, ...unsaid } = ctx
      expect(harnessLaunch(name, unsaid)).toEqual(launch)
    }
    for (const name of ['acp:claude', 'acp:codex', 'acp:gemini', 'acp:copilot', 'acp:pi']) {
      for (const word of acpAgentLaunch(name, bare).launch.args) expect(word, `${name}: ${word}`).not.toMatch(bypass)
    }
  })

  it('claude: edits accepted, the agency tools, and Bash only for the commands of the loop', () => {
    const args = harnessLaunch('claude', bare).args
    expect(args.slice(args.indexOf('--permission-mode'), args.indexOf('--permission-mode') + 4)).toEqual([
      '--permission-mode',
      'acceptEdits',
      '--allowedTools',
      'Bash(agency:*),Bash(git:*),Bash(node:*),Bash(npm:*),Bash(ls:*),Bash(cat:*),mcp__agency'
    ])
  })

  it('codex: its own workspace-write sandbox; acp:codex too, with agentd answering its approvals', () => {
    expect(harnessLaunch('codex', bare).args.slice(0, 3)).toEqual(['exec', '--sandbox', 'workspace-write'])
    // codex exec never asks: without the bypass the agency tools must be approved in advance.
    expect(harnessLaunch('codex', bare).args).toContain('mcp_servers.agency.default_tools_approval_mode="approve"')
    expect(harnessLaunch('codex', ctx).args.join(' ')).not.toContain('default_tools_approval_mode')
    const acp = acpAgentLaunch('acp:codex', bare).launch.args
    expect(acp).toContain('sandbox_mode="workspace-write"')
    expect(acp).toContain('approval_policy="untrusted"')
    expect(acpAgentLaunch('acp:codex', ctx).launch.args).toContain('sandbox_mode="danger-full-access"')
  })

  it("copilot: file writes, the agency server and the loop's shell commands allowed by name, nothing else", () => {
    const args = harnessLaunch('copilot', bare).args
    expect(args.slice(0, 2)).toEqual(['-p', 'Do the work.'])
    const allowed = args.flatMap((a, i) => (a === '--allow-tool' ? [args[i + 1]] : []))
    expect(allowed).toEqual([
      'write',
      'agency',
      'shell(agency:*)',
      'shell(git:*)',
      'shell(node:*)',
      'shell(npm:*)',
      'shell(ls:*)',
      'shell(cat:*)'
    ])
  })

  it("gemini: auto_edit, and the loop's shell commands allowed in its settings", () => {
    const launch = harnessLaunch('gemini', bare)
    expect(launch.args).toEqual(['--prompt', 'Do the work.', '--approval-mode', 'auto_edit', '--output-format', 'stream-json'])
    const settings = JSON.parse(launch.files.find(f => f.path.endsWith('settings.json'))!.content)
    expect(settings.tools.allowed).toEqual([
      'run_shell_command(agency)',
      'run_shell_command(git)',
      'run_shell_command(node)',
      'run_shell_command(npm)',
      'run_shell_command(ls)',
      'run_shell_command(cat)'
    ])
    expect(settings.mcpServers.agency.trust).toBe(true)
    expect(launch.env.GEMINI_SANDBOX).toBe('false')
  })

  it('pi and aider have no mode of their own to choose: the same line either way', () => {
    expect(harnessLaunch('pi', bare)).toEqual(harnessLaunch('pi', ctx))
    expect(harnessLaunch('aider', bare)).toEqual(harnessLaunch('aider', ctx))
  })
})

describe('harnessLaunch input checks', () => {
  it('names the valid harnesses when given an unknown one', () => {
    expect(() => harnessLaunch('cursor', ctx)).toThrow(InvalidArgumentError)
    expect(() => harnessLaunch('cursor', ctx)).toThrow(
      /unknown harness "cursor".*claude, codex, copilot, gemini, pi, aider, scripted, sim, cmd:<shell command>/
    )
    expect(() => harnessLaunch('toString', ctx)).toThrow(InvalidArgumentError)
    expect(HARNESS_NAMES).toEqual([
      'claude',
      'codex',
      'copilot',
      'gemini',
      'pi',
      'aider',
      'scripted',
      'sim',
      'cmd:<shell command>',
      'acp:claude',
      'acp:codex',
      'acp:gemini',
      'acp:copilot',
      'acp:pi',
      'acp:"<command>"'
    ])
  })

  it('rejects an empty cmd: command', () => {
    expect(() => harnessLaunch('cmd:', ctx)).toThrow(InvalidArgumentError)
    expect(() => harnessLaunch('cmd:""', ctx)).toThrow(InvalidArgumentError)
  })

  it('rejects a context it cannot launch from', () => {
    expect(() => harnessLaunch('claude', { ...ctx, dataDir: 'relative/dir' })).toThrow(/dataDir must be an absolute path/)
    expect(() => harnessLaunch('claude', { ...ctx, workspace: '' })).toThrow(InvalidArgumentError)
    expect(() => harnessLaunch('claude', { ...ctx, agentId: ' ' })).toThrow(/agentId is empty/)
    expect(() => harnessLaunch('claude', { ...ctx, agencyAddr: '127.0.0.1:1"; rm -rf /' })).toThrow(/not an address/)
    expect(() => harnessLaunch('claude', { ...ctx, agencyBin: '' })).toThrow(/agencyBin is empty/)
    expect(() => harnessLaunch('claude', { ...ctx, agencyBin: 'node "/x/agency.js' })).toThrow(/unbalanced/)
    expect(() => harnessLaunch('claude', { ...ctx, prompt: '' })).toThrow(/prompt is empty/)
  })
})
