// gRPC handlers for the shared record: findings, entries, the log stream and log info.
import type { AgencyServer, LogInfoReply } from '../gen/agency/v1/api.js'
import type { LogService } from '../daemon/log-service.js'
import { InvalidArgumentError, NotFoundError } from '../core/errors.js'
import { isEntryIdHex } from '../core/log/entry.js'
import { isFindingKind, FINDING_KINDS } from '../core/findings/finding-kinds.js'
import { toHex } from '../core/log/crypto.js'
import { serverStream, unary } from './grpc-errors.js'
import { logEntryView } from './log-entry-view.js'
import { WakeSignal } from './wake-signal.js'
import { checkStrings } from './validate.js'

const LOG_PAGE = 1000

/** What the log's handlers use of the daemon. */
export interface LogApiParts {
  logService: Pick<LogService, 'state' | 'digest' | 'append' | 'arrivals' | 'findingsReady' | 'onAccepted'>
}

export function logInfo(d: { logService: Pick<LogService, 'state' | 'digest'> }): LogInfoReply {
  const state = d.logService.state
  const vector = state.vector()
  return {
    entries: state.size,
    byKind: Object.fromEntries(state.countsByKind()),
    authors: [...vector].map(([author, seq]) => ({ author, seq, faulty: state.isFaulty(author) })),
    vectorDigest: toHex(d.logService.digest()),
    pending: state.pendingCount,
    rejected: Object.fromEntries(Object.entries(state.rejected).filter(([, n]) => n > 0)),
    forks: state.forks.length
  }
}

export function logHandlers(d: LogApiParts): Pick<AgencyServer, 'recordFinding' | 'searchFindings' | 'getEntry' | 'watchLog' | 'logInfo'> {
  return {
    recordFinding: unary(async req => {
      const kind = req.kind === '' ? 'note' : req.kind
      if (!isFindingKind(kind)) throw new InvalidArgumentError(`unknown finding kind "${req.kind}": use one of ${FINDING_KINDS.join(', ')}`)
      if (req.text.trim() === '') throw new InvalidArgumentError('a finding needs text')
      checkStrings('path', req.paths, 256, 1024)
      checkStrings('tag', req.tags, 64, 128)
      checkStrings('ref', req.refs, 64, 64)
      for (const r of [...req.refs, ...(req.supersedes !== '' ? [req.supersedes] : [])]) {
        if (!isEntryIdHex(r)) throw new InvalidArgumentError(`"${r}" is not an entry id (64 hex digits)`)
      }
      const stored = await d.logService.append('finding', {
        kind,
        text: req.text,
        paths: req.paths,
        tags: req.tags,
        refs: req.refs,
        supersedes: req.supersedes
      })
      return { entry: logEntryView(stored, d.logService.arrivals) }
    }),
    searchFindings: unary(async req => {
      // right after a restart, waits for the findings checkpoint (read off the event loop)
      const hits = (await d.logService.findingsReady()).search({
        query: req.query,
        kind: req.kind,
        pathPrefix: req.pathPrefix,
        tag: req.tag,
        author: req.author,
        since: req.since,
        until: req.until,
        limit: req.limit
      })
      return {
        hits: hits.map(h => ({
          entry: logEntryView(h.entry, d.logService.arrivals),
          finding: h.finding,
          score: h.score,
          superseded: h.superseded
        }))
      }
    }),
    getEntry: unary(async req => {
      if (!isEntryIdHex(req.id)) throw new InvalidArgumentError(`"${req.id}" is not an entry id (64 hex digits)`)
      const e = d.logService.state.get(req.id)
      if (e == null) throw new NotFoundError(`no entry ${req.id} in this daemon's log`)
      return { entry: logEntryView(e, d.logService.arrivals) }
    }),
    watchLog: serverStream(async (req, write, closed) => {
      const wake = new WakeSignal()
      const unsubscribe = d.logService.onAccepted(() => {
        wake.notify()
      })
      try {
        let after = req.after
        while (!closed.aborted) {
          const page = d.logService.state.afterCursor(after, LOG_PAGE)
          for (const e of page) {
            write(logEntryView(e, d.logService.arrivals))
            after = e.cursor
          }
          if (page.length === LOG_PAGE) continue
          if (!req.follow) return
          await wake.wait(closed)
        }
      } finally {
        unsubscribe()
      }
    }),
    logInfo: unary(async () => logInfo(d))
  }
}
