// `promtool check metrics`: lints a /metrics text (names, suffixes, units, help).
import { spawn } from 'node:child_process'

export interface LintResult {
  code: number | null
  /** promtool's complaints, one per line; empty when clean */
  problems: string
}

export async function promtoolCheckMetrics(promtool: string, text: string): Promise<LintResult> {
  return await new Promise((resolve, reject) => {
    const child = spawn(promtool, ['check', 'metrics'], { stdio: ['pipe', 'pipe', 'pipe'] })
    let out = ''
    child.stdout.on('data', d => {
      out += String(d)
    })
    child.stderr.on('data', d => {
      out += String(d)
    })
    child.once('error', reject)
    child.once('close', code => {
      resolve({ code, problems: out.trim() })
    })
    child.stdin.end(text)
  })
}
