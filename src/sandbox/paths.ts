// What a box reads, found on the host when the box is made: the toolchain,
// the directories on PATH, the program's own package, the git objects a
// clone borrows; and what it must not see into, with what each held.
import { existsSync, readdirSync, readFileSync, realpathSync, statSync } from 'node:fs'
import { basename, delimiter, dirname, isAbsolute, join, resolve } from 'node:path'
import { InvalidArgumentError } from '../core/errors.js'
import type { HiddenDir } from './box.js'

/** The system's own directories: programs, libraries, configuration. */
export const SYSTEM_DIRS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/etc', '/opt']

/** Login and config files of the CLIs, relative to home: read-only in the box's own home, and nothing else of home. */
export const AUTH_FILES = [
  '.claude/.credentials.json',
  '.claude/settings.json',
  '.codex/auth.json',
  '.codex/config.toml',
  '.config/github-copilot/hosts.json',
  '.config/github-copilot/apps.json',
  '.copilot/config.json',
  '.gemini/oauth_creds.json',
  '.gemini/google_accounts.json',
  '.gemini/settings.json',
  '.pi/agent/auth.json',
  '.pi/agent/models.json',
  '.pi/agent/settings.json',
  '.gitconfig'
]

export function existing(paths: Iterable<string>): string[] {
  return [...new Set([...paths].filter(p => isAbsolute(p) && existsSync(p)))]
}

/** The directories on PATH, and where the program `command` really lives (its package, for a node CLI). */
export function programDirs(command: string, path: string): string[] {
  const dirs = path.split(delimiter).filter(d => isAbsolute(d))
  const found = command.includes('/') ? resolve(command) : dirs.map(d => join(d, command)).find(f => existsSync(f))
  if (found == null) return dirs
  let real: string
  try {
    real = realpathSync(found)
  } catch {
    return dirs
  }
  // A node CLI is a link into its package: read the whole package (node_modules beside its bin).
  let dir = dirname(real)
  for (let i = 0; i < 6 && dir !== '/'; i++, dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return [...dirs, dir]
  }
  return [...dirs, dirname(real)]
}

/**
 * What the programs on PATH run from when they are shims or proxies: a
 * version manager's root (pyenv, rbenv, nodenv: `<root>/shims` and
 * `<root>/bin` exec `<root>/libexec` on `<root>/versions`) and rustup's
 * toolchains beside `~/.cargo/bin`. Toolchains only: no credentials live there.
 */
export function toolchainRoots(path: string): string[] {
  const out: string[] = []
  for (const d of path.split(delimiter).filter(d => isAbsolute(d))) {
    // <root>/shims, <root>/bin, <root>/plugins/<plugin>/shims
    for (let up = dirname(d), i = 0; i < 3 && up !== '/'; i++, up = dirname(up)) {
      if (existsSync(join(up, 'versions')) && existsSync(join(up, 'libexec'))) {
        out.push(up)
        break
      }
    }
    if (basename(d) === 'bin' && basename(dirname(d)) === '.cargo') out.push(join(dirname(dirname(d)), '.rustup'))
  }
  return existing(out)
}

/** --sandbox-hide: directories no box sees into; never the root, /tmp or a system directory the box needs. */
export function parseHidden(entries: readonly string[]): string[] {
  return entries
    .flatMap(e => e.split(','))
    .map(e => e.trim())
    .filter(e => e !== '')
    .map(entry => {
      const path = resolve(entry)
      let dir = false
      try {
        dir = statSync(path).isDirectory()
      } catch {
        /* said below */
      }
      if (!dir) throw new InvalidArgumentError(`--sandbox-hide: ${path} is not a directory`)
      const real = realpathSync(path)
      if (real === '/' || real === '/tmp' || SYSTEM_DIRS.includes(real))
        throw new InvalidArgumentError(`--sandbox-hide: ${real} holds what every box needs: name a directory under it`)
      return real
    })
}

/** node itself: its prefix (bin, lib/node_modules with npm). */
export function nodePrefix(): string {
  return dirname(dirname(realpathSync(process.execPath)))
}

/** The git directories a tree uses outside itself: a worktree's gitdir and common dir, borrowed objects. */
export function gitDirsOutside(tree: string): string[] {
  const out: string[] = []
  let gitDir = join(tree, '.git')
  try {
    if (statSync(gitDir).isFile()) {
      const m = /^gitdir: (.+)$/m.exec(readFileSync(gitDir, 'utf8'))
      if (m != null) {
        gitDir = resolve(tree, m[1].trim())
        out.push(gitDir)
        const common = join(gitDir, 'commondir')
        if (existsSync(common)) {
          const c = resolve(gitDir, readFileSync(common, 'utf8').trim())
          out.push(c)
          gitDir = c
        }
      }
    }
  } catch {
    return out
  }
  try {
    for (const line of readFileSync(join(gitDir, 'objects', 'info', 'alternates'), 'utf8').split('\n')) {
      if (line.trim() !== '' && !line.startsWith('#')) out.push(resolve(join(gitDir, 'objects'), line.trim()))
    }
  } catch {
    /* borrows nothing */
  }
  return out
}

/** A directory to hide, with its entries as they are now; undefined when it does not exist or is a system directory. */
export function hiddenDir(path: string): HiddenDir | undefined {
  if (path === '/' || SYSTEM_DIRS.includes(path) || path === '/tmp' || !existsSync(path)) return undefined
  try {
    const entries = readdirSync(path, { withFileTypes: true })
      .filter(e => e.isFile() || e.isDirectory())
      .map(e => ({ name: e.name, dir: e.isDirectory() }))
    return { path, entries }
  } catch {
    return { path, entries: [] }
  }
}

/**
 * Variables that point into the real home (XDG_CONFIG_HOME, CLAUDE_CONFIG_DIR,
 * CODEX_HOME...) point to the same place in the box's home instead: the CLI
 * keeps its state there, and the real home stays out of reach.
 */
export function rehomed(env: Record<string, string | undefined>, realHome: string, boxHome: string): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(env)) {
    if (name === 'HOME' || value == null || !value.startsWith(realHome + '/')) continue
    if (value.includes(':')) continue // a PATH-like list: its directories are bound as they are
    out[name] = join(boxHome, value.slice(realHome.length + 1))
  }
  return out
}
