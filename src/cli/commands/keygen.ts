// agency keygen: writes a swarm key (a libp2p pre-shared key) for private swarms.
import type { Command } from 'commander'
import { writeFile } from 'node:fs/promises'
import { generateKey } from '@libp2p/pnet'
import { fail, line } from '../output.js'

export function registerKeygenCommand(program: Command): void {
  program
    .command('keygen')
    .description('write a new swarm key: give the same file to every agentd of a private swarm with --swarm-key')
    .option('--out <file>', 'where to write it (mode 0600); default: print it to stdout')
    .option('--force', 'overwrite an existing file')
    .action(async (opts: { out?: string; force?: boolean }) => {
      try {
        const key = new Uint8Array(95)
        generateKey(key)
        if (opts.out == null) {
          process.stdout.write(Buffer.from(key))
          return
        }
        await writeFile(opts.out, key, { mode: 0o600, flag: opts.force === true ? 'w' : 'wx' }).catch((err: NodeJS.ErrnoException) => {
          throw new Error(err.code === 'EEXIST' ? `${opts.out} exists; pass --force to replace it` : err.message)
        })
        line(`wrote a swarm key to ${opts.out}; start every agentd of the swarm with --swarm-key ${opts.out}`)
      } catch (err) {
        fail(err)
      }
    })
}
