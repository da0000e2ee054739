// The permission policy on the requests the real agents send (shapes taken
// from claude-agent-acp 0.49 and codex-acp 0.16 sessions): what each asks for,
// and which option of theirs the answer picks.
import { describe, expect, it } from 'vitest'
import {
  DEFAULT_PERMISSIONS,
  decidePermission,
  parsePermissionPolicy,
  type PermissionRequest
} from '../../../src/harness/acp/permission-policy.js'
import { InvalidArgumentError } from '../../../src/core/errors.js'

const WS = '/tmp/agent/workspace'
const CLAUDE_OPTIONS = [
  { optionId: 'allow_always', kind: 'allow_always' },
  { optionId: 'allow', kind: 'allow_once' },
  { optionId: 'reject', kind: 'reject_once' }
]
const CODEX_MCP_OPTIONS = [
  { optionId: 'approved', kind: 'allow_once' },
  { optionId: 'approved-for-session', kind: 'allow_always' },
  { optionId: 'approved-always', kind: 'allow_always' },
  { optionId: 'cancel', kind: 'reject_once' }
]
const CODEX_EXEC_OPTIONS = [
  { optionId: 'approved', kind: 'allow_once' },
  { optionId: 'approved-execpolicy-amendment', kind: 'allow_always' },
  { optionId: 'abort', kind: 'reject_once' }
]

const claude = (toolCall: PermissionRequest['toolCall']): PermissionRequest => ({ toolCall, options: CLAUDE_OPTIONS })
const policy = parsePermissionPolicy()
const decide = (req: PermissionRequest, p = policy): ReturnType<typeof decidePermission> => decidePermission(p, req, [WS])

describe('parsePermissionPolicy', () => {
  it('takes grants, or all, and refuses anything else naming the accepted words', () => {
    expect([...parsePermissionPolicy().grants]).toEqual(['workspace', 'agency', 'shell'])
    expect(parsePermissionPolicy().text).toBe(DEFAULT_PERMISSIONS)
    expect(parsePermissionPolicy('all').grants.size).toBe(6)
    expect([...parsePermissionPolicy(' agency , workspace ').grants]).toEqual(['agency', 'workspace'])
    expect(() => parsePermissionPolicy('workspace,sudo')).toThrow(InvalidArgumentError)
    expect(() => parsePermissionPolicy('workspace,sudo')).toThrow(
      /unknown permission grant "sudo".*workspace, agency, shell, mcp, fetch, anywhere/
    )
    expect(() => parsePermissionPolicy(' , ')).toThrow(/--acp-permissions is empty/)
  })

  it('takes ask beside the grants: what they do not grant goes to the operator, and the denial names the grant it would need', () => {
    const p = parsePermissionPolicy('workspace,ask,shell')
    expect(p).toMatchObject({ ask: true, text: 'workspace,shell,ask' })
    expect([...p.grants]).toEqual(['workspace', 'shell'])
    expect(parsePermissionPolicy('ask')).toMatchObject({ ask: true, text: 'ask' })
    expect(parsePermissionPolicy().ask).toBeUndefined()
    const d = decidePermission(
      p,
      { toolCall: { toolCallId: 'x', title: 'Write /etc/x', kind: 'edit', locations: [{ path: '/etc/x' }] }, options: [] },
      ['/w']
    )
    expect(d).toMatchObject({ allow: false, grant: 'anywhere' })
  })
})

describe('decidePermission', () => {
  it("allows the agency MCP tools as Claude and Codex ask for them, choosing each agent's allow-once option", () => {
    const c = decide(claude({ toolCallId: 'toolu_1', kind: 'other', title: 'mcp__agency__claim', rawInput: { task: 'greet' } }))
    expect(c).toMatchObject({
      allow: true,
      category: 'agency',
      what: 'MCP agency/claim',
      outcome: { outcome: 'selected', optionId: 'allow' }
    })
    const codex = decide({
      toolCall: {
        toolCallId: 'call_5',
        title: 'Approve MCP tool call',
        content: [
          {
            type: 'content',
            content: { type: 'text', text: 'Allow the agency MCP server to run tool "claim"?\n\nServer: agency\n\nClaim a task' }
          }
        ],
        rawInput: {
          server_name: 'agency',
          id: 'mcp_tool_call_approval_call_5',
          request: {
            mode: 'form',
            message: 'Allow the agency MCP server to run tool "claim"?',
            _meta: { codex_approval_kind: 'mcp_tool_call' }
          }
        }
      },
      options: CODEX_MCP_OPTIONS
    })
    expect(codex).toMatchObject({
      allow: true,
      category: 'agency',
      what: 'MCP agency/claim',
      outcome: { outcome: 'selected', optionId: 'approved' }
    })
    const gemini = decide({
      toolCall: { toolCallId: 'mcp_agency_claim__1', title: 'claim (agency MCP Server)', locations: [] },
      options: [
        { optionId: 'proceed_always', kind: 'allow_always' },
        { optionId: 'proceed_once', kind: 'allow_once' },
        { optionId: 'cancel', kind: 'reject_once' }
      ]
    })
    expect(gemini).toMatchObject({
      allow: true,
      category: 'agency',
      what: 'MCP agency/claim',
      outcome: { outcome: 'selected', optionId: 'proceed_once' }
    })
    // Copilot asks for "status" after its tool_call update announced "agency-status".
    const copilot: PermissionRequest = {
      toolCall: { toolCallId: 'call_1', title: 'status', kind: 'other', rawInput: {} },
      options: [
        { optionId: 'allow_once', kind: 'allow_once' },
        { optionId: 'allow_always', kind: 'allow_always' },
        { optionId: 'reject_once', kind: 'reject_once' }
      ]
    }
    expect(decidePermission(policy, copilot, [WS], 'agency-status')).toMatchObject({
      allow: true,
      category: 'agency',
      what: 'MCP agency/status',
      outcome: { optionId: 'allow_once' }
    })
    expect(decidePermission(policy, copilot, [WS])).toMatchObject({ allow: false, category: 'unknown' })
  })

  it('denies another MCP server unless mcp is granted', () => {
    const req = claude({ kind: 'other', title: 'mcp__github__create_issue' })
    expect(decide(req)).toMatchObject({ allow: false, category: 'mcp', outcome: { outcome: 'selected', optionId: 'reject' } })
    expect(decide(req, parsePermissionPolicy('agency,mcp')).allow).toBe(true)
  })

  it('allows the shell; a policy without shell denies it', () => {
    const codex: PermissionRequest = {
      toolCall: {
        toolCallId: 'call_4',
        kind: 'execute',
        title: 'node --test',
        rawInput: { command: ['/bin/bash', '-c', 'node --test'], cwd: WS }
      },
      options: CODEX_EXEC_OPTIONS
    }
    expect(decide(codex)).toMatchObject({ allow: true, category: 'shell', what: 'shell: node --test', outcome: { optionId: 'approved' } })
    expect(decide(codex, parsePermissionPolicy('workspace,agency'))).toMatchObject({ allow: false, outcome: { optionId: 'abort' } })
  })

  it('allows file changes inside the workspace and denies them outside, naming the path', () => {
    const inside = decide(
      claude({
        kind: 'edit',
        title: 'Write src/greet.js',
        locations: [{ path: `${WS}/src/greet.js` }],
        rawInput: { file_path: `${WS}/src/greet.js` }
      })
    )
    expect(inside).toMatchObject({ allow: true, category: 'file', reason: 'inside the workspace' })
    const codexPatch = decide({
      toolCall: {
        kind: 'edit',
        title: 'Edit',
        rawInput: { changes: { [`${WS}/src/a.js`]: { type: 'add' }, '/etc/passwd': { type: 'update' } } }
      },
      options: CODEX_EXEC_OPTIONS
    })
    expect(codexPatch).toMatchObject({ allow: false, reason: 'outside the workspace: /etc/passwd', outcome: { optionId: 'abort' } })
    const escape = decide(claude({ kind: 'edit', title: 'Write', locations: [{ path: `${WS}/../other/x.js` }] }))
    expect(escape.allow).toBe(false)
    const relative = decide(claude({ kind: 'read', title: 'Read', rawInput: { file_path: '../../secrets' } }))
    expect(relative.allow).toBe(false)
    const sibling = decide(claude({ kind: 'edit', title: 'Write', locations: [{ path: `${WS}-other/x.js` }] }))
    expect(sibling.allow).toBe(false)
    expect(
      decide(claude({ kind: 'edit', title: 'Write /tmp/x', locations: [{ path: '/tmp/x' }] }), parsePermissionPolicy('anywhere')).allow
    ).toBe(true)
  })

  it('denies the web, mode switches and unknown tools by default; all allows them', () => {
    expect(decide(claude({ kind: 'fetch', title: 'Fetch https://example.com' }))).toMatchObject({ allow: false, category: 'fetch' })
    expect(decide(claude({ kind: 'switch_mode', title: 'Ready to code?' }))).toMatchObject({ allow: false, category: 'mode' })
    expect(decide(claude({ kind: 'other', title: 'SomethingNew' }))).toMatchObject({ allow: false, category: 'unknown' })
    const all = parsePermissionPolicy('all')
    expect(decide(claude({ kind: 'other', title: 'SomethingNew' }), all).allow).toBe(true)
    expect(decide(claude({ kind: 'fetch', title: 'Fetch' }), all).allow).toBe(true)
  })

  it('answers cancelled when the agent offered no option of the right kind', () => {
    const d = decidePermission(policy, { toolCall: { kind: 'fetch', title: 'Fetch' }, options: [{ optionId: 'ok', kind: 'allow_once' }] }, [
      WS
    ])
    expect(d).toMatchObject({ allow: false, outcome: { outcome: 'cancelled' } })
  })
})
