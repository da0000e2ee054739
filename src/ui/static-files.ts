// The page's files, built by `npm run build` (vite) into dist/ui and served
// from memory: nothing is fetched from anywhere else at run time.
import { readdir, readFile } from 'node:fs/promises'
import { existsSync } from 'node:fs'
import { extname, join, relative, sep } from 'node:path'
import { gzipSync } from 'node:zlib'
import { createHash } from 'node:crypto'
import { packageRoot } from '../harness/package-paths.js'
import { FailedPreconditionError } from '../core/errors.js'

export interface StaticFile {
  body: Buffer
  gzip?: Buffer
  type: string
  etag: string
  /** vite names assets by their hash: they may be cached for good */
  immutable: boolean
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.woff2': 'font/woff2'
}

/** Where the built page is: <package>/dist/ui, from src/ (tests) or dist/src/ alike. */
export const DEFAULT_UI_DIR = join(packageRoot, 'dist', 'ui')

/** Loads every file of the built page; a clear error when it was not built. */
export async function loadStaticFiles(dir = DEFAULT_UI_DIR): Promise<Map<string, StaticFile>> {
  if (!existsSync(join(dir, 'index.html'))) {
    throw new FailedPreconditionError(`the dashboard is not built: ${join(dir, 'index.html')} is missing (run npm run build)`)
  }
  const files = new Map<string, StaticFile>()
  for (const e of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!e.isFile()) continue
    const full = join(e.parentPath, e.name)
    const path = '/' + relative(dir, full).split(sep).join('/')
    const body = await readFile(full)
    const type = TYPES[extname(e.name)] ?? 'application/octet-stream'
    const compressible = /^(text\/|application\/json|image\/svg)/.test(type) && body.length > 1024
    files.set(path, {
      body,
      gzip: compressible ? gzipSync(body) : undefined,
      type,
      etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`,
      immutable: path.startsWith('/assets/')
    })
  }
  return files
}
