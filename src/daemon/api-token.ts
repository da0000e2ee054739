// The local API's bearer token, kept in a file only its owner can read.
import { randomBytes } from 'node:crypto'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { dirname } from 'node:path'

/** Shortest token accepted from a file someone wrote by hand. */
export const MIN_API_TOKEN_LENGTH = 16

/**
 * Reads the token in `file`; when the file does not exist, makes a new random
 * token and writes it there (mode 0600), so `agency` and `agency mcp` can read
 * it (AGENCY_TOKEN_FILE) and nobody else on the host can.
 */
export async function loadOrCreateApiToken(file: string): Promise<string> {
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
      throw new Error(`cannot read the API token ${file}: ${(err as Error).message}`, { cause: err })
    const token = randomBytes(32).toString('base64url')
    try {
      await mkdir(dirname(file), { recursive: true, mode: 0o700 })
      // 'wx': never overwrite a token another process wrote meanwhile.
      await writeFile(file, token + '\n', { mode: 0o600, flag: 'wx' })
      return token
    } catch (writeErr) {
      if ((writeErr as NodeJS.ErrnoException).code === 'EEXIST') return await loadOrCreateApiToken(file)
      throw new Error(`cannot write a new API token to ${file}: ${(writeErr as Error).message}`, { cause: writeErr })
    }
  }
  const token = text.trim()
  if (token.length < MIN_API_TOKEN_LENGTH) throw new Error(`the API token in ${file} is shorter than ${MIN_API_TOKEN_LENGTH} characters`)
  return token
}
