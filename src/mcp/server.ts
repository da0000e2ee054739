// `agency mcp`: an MCP server on stdio that exposes the coordination tools of
// the local agentd. stdout carries the protocol; logs go to stderr only.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import { connectAgency, type Agency } from '../client/agency.js'
import { isAgencyError } from '../core/errors.js'
import { VERSION } from '../version.js'
import { TOOLS } from './tools.js'

export function createMcpServer(agency: Agency): McpServer {
  const server = new McpServer({ name: 'agency', version: VERSION })
  for (const tool of TOOLS) {
    server.registerTool(tool.name, { description: tool.description, inputSchema: tool.input }, async (args: unknown) => {
      try {
        const result = await tool.run(agency, args ?? {})
        // Every answer is a JSON object: Gemini CLI parses the text into structuredContent and
        // refuses anything else (a bare list). No structuredContent of our own: Copilot CLI shows
        // that to the model instead of the text, reformatted and cut short.
        const answer = result != null && typeof result === 'object' && !Array.isArray(result) ? result : { result: result ?? null }
        return { content: [{ type: 'text' as const, text: JSON.stringify(answer, null, 2) }] }
      } catch (err) {
        const code = isAgencyError(err) ? `${err.code}: ` : ''
        return { isError: true, content: [{ type: 'text' as const, text: `${tool.name} failed: ${code}${(err as Error).message}` }] }
      }
    })
  }
  return server
}

export async function runMcpServer(addr?: string): Promise<void> {
  const agency = connectAgency(addr)
  const server = createMcpServer(agency)
  const transport = new StdioServerTransport()
  await server.connect(transport)
  process.stderr.write(`agency mcp: serving ${TOOLS.length} tools for the daemon at ${agency.addr}\n`)
  await new Promise<void>(resolve => {
    transport.onclose = () => {
      resolve()
    }
  })
  agency.close()
}
