// How agentd answers an ACP agent's permission requests: by a policy, and
// with `ask` in it, by the operator for what the policy does not grant (the
// session waits for the answer; core/operator/approval-book.ts). Each request is sorted into what it would touch (a file in or
// out of the workspace, the shell, the agency MCP tools, another MCP server,
// the web) and allowed only if the policy grants that. The agents word their
// requests differently (Claude names MCP tools mcp__<server>__<tool>, Codex
// says "Server: <name>" and gives server_name, Gemini titles them "<tool>
// (<server> MCP Server)", Copilot "<server>-<tool>" in its tool_call update
// and only "<tool>" in the request; option ids differ too), so the
// answer is chosen by option kind (allow_once / reject_once), not by id.
// Pure: the caller resolves the workspace's real path.
import { isAbsolute, relative, resolve, sep } from 'node:path'
import { InvalidArgumentError } from '../../core/errors.js'

/** What a policy can grant. */
export const PERMISSION_GRANTS = ['workspace', 'agency', 'shell', 'mcp', 'fetch', 'anywhere'] as const
export type PermissionGrant = (typeof PERMISSION_GRANTS)[number]

/** The default: files in the workspace, the agency tools and the shell; nothing outside. */
export const DEFAULT_PERMISSIONS = 'workspace,agency,shell'

/** The word in --acp-permissions that sends what is not granted to the operator instead of denying it. */
export const ASK_WORD = 'ask'

export interface PermissionPolicy {
  grants: ReadonlySet<PermissionGrant>
  /** a request beyond the grants is asked of the operator (else denied on the spot) */
  ask?: boolean
  /** As given, for logs and the status. */
  text: string
}

/** What a request would touch. */
export type PermissionCategory = 'file' | 'shell' | 'agency' | 'mcp' | 'fetch' | 'think' | 'mode' | 'unknown'

export interface PermissionOption {
  optionId: string
  name?: string
  kind: string
}

/** The fields of a session/request_permission this policy reads (the ACP schema's RequestPermissionRequest). */
export interface PermissionRequest {
  toolCall: {
    toolCallId?: string
    title?: string | null
    kind?: string | null
    locations?: Array<{ path: string }> | null
    rawInput?: unknown
    content?: unknown
  }
  options: PermissionOption[]
}

export interface PermissionDecision {
  allow: boolean
  category: PermissionCategory
  /** For logs: what was asked and why the answer. */
  what: string
  reason: string
  /** a denial: the grant that would have allowed it, if one would */
  grant?: PermissionGrant
  /** The JSON-RPC answer. */
  outcome: { outcome: 'selected'; optionId: string } | { outcome: 'cancelled' }
}

/**
 * Parses `--acp-permissions`: a comma-separated list of grants, or `all`.
 * Throws InvalidArgumentError naming the accepted words.
 */
export function parsePermissionPolicy(text: string = DEFAULT_PERMISSIONS): PermissionPolicy {
  const all = text
    .split(',')
    .map(w => w.trim())
    .filter(w => w !== '')
  const ask = all.includes(ASK_WORD)
  const words = all.filter(w => w !== ASK_WORD)
  if (words.length === 0 && !ask)
    throw new InvalidArgumentError(
      `--acp-permissions is empty: give grants from ${PERMISSION_GRANTS.join(', ')} (comma-separated), or all; add ask to have the operator answer the rest`
    )
  if (words.length === 1 && words[0] === 'all') return { grants: new Set(PERMISSION_GRANTS), text: 'all' }
  const grants = new Set<PermissionGrant>()
  for (const w of words) {
    if (!(PERMISSION_GRANTS as readonly string[]).includes(w))
      throw new InvalidArgumentError(
        `unknown permission grant "${w}" in --acp-permissions: use ${PERMISSION_GRANTS.join(', ')} (comma-separated), or all; add ask to have the operator answer the rest`
      )
    grants.add(w as PermissionGrant)
  }
  const named = [...grants].join(',')
  return ask ? { grants, ask, text: named === '' ? ASK_WORD : `${named},${ASK_WORD}` } : { grants, text: named }
}

/** The MCP server name the agency tools are registered under. */
const AGENCY_SERVER = 'agency'

/**
 * Decides one request. `workspaces` are the workspace's paths (as given and
 * its real path): file operations inside one of them count as in the workspace.
 */
export function decidePermission(
  policy: PermissionPolicy,
  req: PermissionRequest,
  workspaces: string[],
  seenTitle?: string
): PermissionDecision {
  const { category, what, paths } = classify(req, seenTitle)
  const g = policy.grants
  let allow: boolean
  let reason: string
  let grant: PermissionGrant | undefined
  switch (category) {
    case 'agency':
      grant = 'agency'
      allow = g.has('agency')
      reason = allow ? 'the agency tools are allowed' : 'the agency tools are not granted'
      break
    case 'mcp':
      grant = 'mcp'
      allow = g.has('mcp')
      reason = allow ? 'other MCP servers are allowed' : 'only the agency MCP server is allowed (grant mcp for others)'
      break
    case 'shell':
      grant = 'shell'
      allow = g.has('shell')
      reason = allow ? 'the shell is allowed' : 'the shell is not granted'
      break
    case 'fetch':
      grant = 'fetch'
      allow = g.has('fetch')
      reason = allow ? 'the web is allowed' : 'the web is outside the workspace (grant fetch for it)'
      break
    case 'file': {
      const outside = paths.filter(p => !workspaces.some(w => inside(p, w)))
      if (outside.length > 0) {
        grant = 'anywhere'
        allow = g.has('anywhere')
        reason = allow ? 'files anywhere are allowed' : `outside the workspace: ${outside.slice(0, 3).join(', ')}`
      } else {
        grant = 'workspace'
        allow = g.has('workspace') || g.has('anywhere')
        reason = allow ? 'inside the workspace' : 'files are not granted'
      }
      break
    }
    case 'think':
      // A sub-task or a to-do list touches nothing by itself; its own tool calls are asked for one by one.
      allow = true
      reason = 'touches nothing by itself'
      break
    default:
      allow = g.size === PERMISSION_GRANTS.length
      reason = allow ? 'everything is allowed (all)' : `not a kind of request the policy grants (${category})`
  }
  const d: PermissionDecision = { allow, category, what, reason, outcome: answer(req.options, allow) }
  if (!allow && grant !== undefined) d.grant = grant
  return d
}

/** The option of the right kind: once, not always, so every later call is asked again. */
export function answer(options: PermissionOption[], allow: boolean): PermissionDecision['outcome'] {
  const kinds = allow ? ['allow_once', 'allow_always'] : ['reject_once', 'reject_always']
  for (const kind of kinds) {
    const o = options.find(x => x.kind === kind)
    if (o != null) return { outcome: 'selected', optionId: o.optionId }
  }
  // No option of that kind: a denial without a reject option is a cancel; so is an allow nobody offered.
  return { outcome: 'cancelled' }
}

interface Classified {
  category: PermissionCategory
  what: string
  paths: string[]
}

/**
 * What a request is for. `seenTitle` is the title the agent's session updates
 * gave the same tool call, when the request's own says less (Copilot asks for
 * "status" after announcing "agency-status").
 */
export function classify(req: PermissionRequest, seenTitle?: string): Classified {
  const t = req.toolCall ?? {}
  const own = typeof t.title === 'string' ? t.title : ''
  const kind = typeof t.kind === 'string' ? t.kind : ''
  const raw = record(t.rawInput)
  const content = contentText(t.content)
  const titled = [own, seenTitle ?? ''].find(x => mcpServer(x, raw, content) != null)
  const title = titled ?? own
  const server = mcpServer(title, raw, content)
  if (server != null) {
    const tool = mcpTool(title, raw)
    return { category: server === AGENCY_SERVER ? 'agency' : 'mcp', what: `MCP ${server}${tool !== '' ? `/${tool}` : ''}`, paths: [] }
  }
  switch (kind) {
    case 'execute':
      return { category: 'shell', what: `shell: ${commandOf(raw) ?? title}`, paths: [] }
    case 'read':
    case 'edit':
    case 'delete':
    case 'move':
    case 'search': {
      const paths = pathsOf(t.locations, raw)
      return { category: 'file', what: `${kind} ${paths.length > 0 ? paths.join(', ') : title}`, paths }
    }
    case 'fetch':
      return { category: 'fetch', what: `fetch ${title}`, paths: [] }
    case 'think':
      return { category: 'think', what: title !== '' ? title : 'think', paths: [] }
    case 'switch_mode':
      return { category: 'mode', what: title !== '' ? title : 'switch mode', paths: [] }
    default:
      return { category: 'unknown', what: title !== '' ? title : kind !== '' ? kind : 'a tool call', paths: [] }
  }
}

/** The MCP server a request is for, if it is an MCP tool call (each agent says so its own way). */
function mcpServer(title: string, raw: Record<string, unknown>, content: string): string | undefined {
  const claude = /^mcp__(.+?)__.+$/.exec(title)
  if (claude != null) return claude[1]
  const codexCall = /^Tool: ([^/\s]+)\//.exec(title)
  if (codexCall != null) return codexCall[1]
  const gemini = /^\S+ \((.+) MCP Server\)$/.exec(title)
  if (gemini != null) return gemini[1]
  // Copilot: "<server>-<tool>"; only for the agency server, as any tool name may have a dash.
  if (title.startsWith(`${AGENCY_SERVER}-`)) return AGENCY_SERVER
  for (const key of ['server_name', 'serverName', 'server']) {
    {
      const v = raw[key]
      if (typeof v === 'string' && v !== '') return v
    }
  }
  const said = /^Server: (\S+)$/m.exec(content)
  return said?.[1]
}

function mcpTool(title: string, raw: Record<string, unknown>): string {
  const claude = /^mcp__.+?__(.+)$/.exec(title)
  if (claude != null) return claude[1]
  const gemini = /^(\S+) \(.+ MCP Server\)$/.exec(title)
  if (gemini != null) return gemini[1]
  if (title.startsWith(`${AGENCY_SERVER}-`)) return title.slice(AGENCY_SERVER.length + 1)
  if (typeof raw.tool === 'string') return raw.tool
  const meta = record(record(record(raw.request)._meta))
  const asked = /run tool "([^"]+)"/.exec(textOf(record(raw.request).message))
  return asked?.[1] ?? (typeof meta.tool_title === 'string' ? meta.tool_title : '')
}

function commandOf(raw: Record<string, unknown>): string | undefined {
  const c = raw.command
  if (typeof c === 'string') return c
  if (Array.isArray(c)) {
    // Codex: ["/bin/bash", "-c", "<command>"].
    const words = c.map(String)
    return words.length === 3 && words[1] === '-c' ? words[2] : words.join(' ')
  }
  return undefined
}

function pathsOf(locations: unknown, raw: Record<string, unknown>): string[] {
  const out = new Set<string>()
  if (Array.isArray(locations))
    for (const l of locations) {
      const p = record(l).path
      if (typeof p === 'string') out.add(p)
    }
  for (const key of ['file_path', 'path', 'notebook_path', 'source', 'destination']) {
    const v = raw[key]
    if (typeof v === 'string') out.add(v)
  }
  // Codex's apply_patch: {changes: {<path>: {...}}}.
  for (const p of Object.keys(record(raw.changes))) out.add(p)
  return [...out]
}

function contentText(content: unknown): string {
  if (!Array.isArray(content)) return ''
  return content
    .map(c => {
      const inner = record(record(c).content)
      return typeof inner.text === 'string' ? inner.text : ''
    })
    .join('\n')
}

/** Whether `path` (relative paths are taken as relative to the workspace) is inside `dir`. */
export function inside(path: string, dir: string): boolean {
  const abs = isAbsolute(path) ? resolve(path) : resolve(dir, path)
  const rel = relative(resolve(dir), abs)
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel))
}

function record(v: unknown): Record<string, unknown> {
  return v != null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {}
}

function textOf(v: unknown): string {
  return typeof v === 'string' ? v : ''
}
