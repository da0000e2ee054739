// What the strkit example's tests need on the machine: a C compiler for its
// reference and Python 3 with pytest for its hidden tests (and the scripted
// agent's own). Without them those tests say so and skip.
import { execFileSync } from 'node:child_process'

function works(command: string, args: string[]): boolean {
  try {
    execFileSync(command, args, { stdio: 'ignore', timeout: 60_000 })
    return true
  } catch {
    return false
  }
}

export const missingTools: string | undefined = (() => {
  const missing = [
    works('cc', ['--version']) ? undefined : 'a C compiler (cc)',
    works('python3', ['-m', 'pytest', '--version']) ? undefined : 'python3 with pytest (python3 -m pytest)'
  ].filter(m => m != null)
  return missing.length > 0 ? missing.join(' and ') : undefined
})()

if (missingTools != null) process.stderr.write(`strkit example tests skipped: no ${missingTools} on this machine\n`)
