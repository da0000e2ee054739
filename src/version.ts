// The package version, read once from package.json.
import { readFileSync } from 'node:fs'

function readVersion(): string {
  for (const rel of ['../package.json', '../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(rel, import.meta.url), 'utf8')) as { name?: string; version?: string }
      if (pkg.name === 'agency' && pkg.version != null) return pkg.version
    } catch {
      /* try the next location: src/ and dist/src/ differ in depth */
    }
  }
  return '0.0.0'
}

export const VERSION = readVersion()
