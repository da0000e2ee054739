// Where this package's files are, whether we run from src/ (tests, tsx) or
// from the compiled dist/src/. The prompt template sits at the package root;
// spawned node programs must be the compiled ones under dist/.
import { basename, dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const srcDir = dirname(dirname(fileURLToPath(import.meta.url))) // <root>/src or <root>/dist/src
const compiled = basename(dirname(srcDir)) === 'dist'

/** The package root: the directory holding package.json, prompts/ and dist/. */
export const packageRoot: string = compiled ? dirname(dirname(srcDir)) : dirname(srcDir)

/** The compiled module at `dist/src/<relative>`, e.g. "harness/scripted-agent/main.js". */
export function compiledModulePath(relative: string): string {
  return join(packageRoot, 'dist', 'src', relative)
}
