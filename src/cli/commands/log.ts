// agency note | find | log [info]
import type { Command } from 'commander'
import { command, withAgency, printJson, line, short, type CommonOpts } from '../output.js'
import type { AgencyClient, FindingHit, LogEntry } from '../../gen/agency/v1/api.js'
import { printOperatorActions } from './operator.js'

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value]
}

function wholeNumber(name: string, value: string): number {
  const n = Number(value)
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`${name} must be a whole number, got "${value}"`)
  return n
}

function hitLine(h: FindingHit): string {
  const f = h.finding
  const paths = f != null && f.paths.length > 0 ? ` [${f.paths.join(', ')}]` : ''
  const tags = f != null && f.tags.length > 0 ? ` #${f.tags.join(' #')}` : ''
  const e = h.entry
  return `${e?.id.slice(0, 12) ?? ''} ${f?.kind ?? ''}${h.superseded ? ' (superseded)' : ''} by ${short(e?.author ?? '')}${paths}${tags}: ${f?.text ?? ''}`
}

function entryLine(e: LogEntry): string {
  return `#${e.cursor} ${new Date(e.time).toISOString()} ${short(e.author)} ${e.kind} ${e.bodyJson}`
}

export function registerLogCommands(program: Command): void {
  command(program, 'note', 'record a finding in the shared record: a discovery, a failed approach, a bug, an interface decision or a note')
    .argument('<text...>', 'what was learned')
    .option('--kind <kind>', 'discovery | failure | bug | decision | note', 'note')
    .option('--path <path>', 'a path the finding is about (repeatable)', collect)
    .option('--tag <tag>', 'a tag (repeatable)', collect)
    .option('--ref <entry-id>', 'an entry this refers to (repeatable)', collect)
    .option('--supersedes <entry-id>', 'a finding this one replaces')
    .action(
      withAgency(
        async (
          agency,
          text: string[],
          opts: CommonOpts & { kind: string; path?: string[]; tag?: string[]; ref?: string[]; supersedes?: string }
        ) => {
          const res = await agency.call((c: AgencyClient) => c.recordFinding, {
            kind: opts.kind,
            text: text.join(' '),
            paths: opts.path ?? [],
            tags: opts.tag ?? [],
            refs: opts.ref ?? [],
            supersedes: opts.supersedes ?? ''
          })
          if (opts.json === true) printJson(res.entry)
          else line(`recorded ${res.entry?.id ?? ''}`)
        }
      )
    )

  command(program, 'find', 'search the findings of the whole swarm (full text over text, paths and tags)')
    .argument('[query...]', 'words to look for; none lists the newest findings')
    .option('--kind <kind>', 'only this kind')
    .option('--path <prefix>', 'only findings about paths under this prefix')
    .option('--tag <tag>', 'only findings with this tag')
    .option('--author <peer-id>', 'only findings by this peer')
    .option('--limit <n>', 'at most this many', '20')
    .action(
      withAgency(
        async (
          agency,
          query: string[],
          opts: CommonOpts & { kind?: string; path?: string; tag?: string; author?: string; limit: string }
        ) => {
          const res = await agency.call((c: AgencyClient) => c.searchFindings, {
            query: query.join(' '),
            kind: opts.kind ?? '',
            pathPrefix: opts.path ?? '',
            tag: opts.tag ?? '',
            author: opts.author ?? '',
            since: 0,
            until: 0,
            limit: wholeNumber('--limit', opts.limit)
          })
          if (opts.json === true) {
            printJson(res.hits)
            return
          }
          if (res.hits.length === 0) line('no findings match')
          for (const h of res.hits) line(hitLine(h))
        }
      )
    )

  command(program, 'log', 'the shared record, entry by entry in arrival order; `agency log info` for counts, authors and the vector digest')
    .argument('[what]', '"info" for a summary')
    .option('--after <cursor>', 'only entries after this cursor', '0')
    .option('--follow', 'keep printing new entries')
    .option(
      '--kind <kind>',
      'only entries of this kind; operator: the audit of operator actions, with who signed each and whether it counts'
    )
    .action(
      withAgency(async (agency, what: string | undefined, opts: CommonOpts & { after: string; follow?: boolean; kind?: string }) => {
        if (opts.kind === 'operator' && what == null && opts.follow !== true) {
          await printOperatorActions(agency, opts)
          return
        }
        if (what === 'info') {
          const info = await agency.call((c: AgencyClient) => c.logInfo, {})
          if (opts.json === true) {
            printJson(info)
            return
          }
          line(
            `${info.entries} entries from ${info.authors.length} authors; ${info.pending} pending; ${info.forks} forks; digest ${info.vectorDigest.slice(0, 16)}`
          )
          line(
            `by kind: ${
              Object.entries(info.byKind)
                .map(([k, n]) => `${k} ${n}`)
                .join(', ') || 'none'
            }`
          )
          const rejected = Object.entries(info.rejected)
          if (rejected.length > 0) line(`rejected: ${rejected.map(([k, n]) => `${k} ${n}`).join(', ')}`)
          for (const a of info.authors) line(`  ${a.author} seq ${a.seq}${a.faulty ? ' FAULTY (forked)' : ''}`)
          return
        }
        if (what != null) throw new Error(`unknown argument "${what}": use \`agency log\` or \`agency log info\``)
        const stream = agency.stream((c: AgencyClient, m) =>
          c.watchLog({ after: wholeNumber('--after', opts.after), follow: opts.follow === true }, m)
        )
        const all: LogEntry[] = []
        for await (const e of stream) {
          if (opts.kind != null && e.kind !== opts.kind) continue
          if (opts.json === true) {
            if (opts.follow === true) process.stdout.write(JSON.stringify(e) + '\n')
            else all.push(e)
          } else line(entryLine(e))
        }
        if (opts.json === true && opts.follow !== true) printJson(all)
      })
    )
}
