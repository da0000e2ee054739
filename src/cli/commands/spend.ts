// agency usage | budget | budget set: what the swarm has spent (tokens and
// dollars, from every agent's usage entries), its budget, and whether the
// budget is reached (then no agent starts a new run; raising it resumes).
import type { Command } from 'commander'
import { InvalidArgumentError } from '../../core/errors.js'
import { changedBudget } from '../../core/spend/index.js'
import { givenOperator, submitAction } from '../operator-client.js'
import { command, line, printJson, short, withAgency, type CommonOpts } from '../output.js'
import type { AgencyClient, BudgetReply, SpendTotals, UsageReply } from '../../gen/agency/v1/api.js'

const GROUPINGS = ['agent', 'model', 'task'] as const

/** Totals as --json shows them: snake_case, input counting cached input. */
export function totalsJson(t: SpendTotals | undefined): Record<string, number | boolean> {
  return {
    input_tokens: t?.inputTokens ?? 0,
    output_tokens: t?.outputTokens ?? 0,
    cache_read_tokens: t?.cacheReadTokens ?? 0,
    cache_write_tokens: t?.cacheWriteTokens ?? 0,
    usd: t?.usd ?? 0,
    estimated: t?.estimated ?? false,
    runs: t?.runs ?? 0,
    hours: (t?.agentSeconds ?? 0) / 3600
  }
}

export function usageJson(r: UsageReply): unknown {
  return {
    total: totalsJson(r.total),
    by: r.by,
    rows: r.rows.map(row => ({ key: row.key, ...(row.name !== '' ? { name: row.name } : {}), ...totalsJson(row.totals) }))
  }
}

const num = (n: number): string => n.toLocaleString('en-US')
export const dollars = (t: SpendTotals | undefined): string => `$${(t?.usd ?? 0).toFixed(4)}${t?.estimated === true ? ' (est.)' : ''}`

/** One line for a total: tokens in and out, dollars, runs, agent-hours. */
export function totalsLine(t: SpendTotals | undefined): string {
  return `${num(t?.inputTokens ?? 0)} in (${num(t?.cacheReadTokens ?? 0)} cache read) / ${num(t?.outputTokens ?? 0)} out tokens, ${dollars(t)}, ${t?.runs ?? 0} runs, ${((t?.agentSeconds ?? 0) / 3600).toFixed(2)} agent-h`
}

export function budgetLines(b: BudgetReply): string[] {
  const v = b.budget
  const caps = [
    v != null && v.usd > 0 ? `$${v.usd}` : '',
    v != null && v.tokens > 0 ? `${num(v.tokens)} tokens` : '',
    v != null && v.hours > 0 ? `${v.hours} agent-h` : '',
    v != null && v.perAgentUsd > 0 ? `$${v.perAgentUsd} per agent` : ''
  ].filter(c => c !== '')
  const out = [
    `budget: ${caps.length > 0 ? caps.join(', ') : 'none'}${v?.setBy != null && v.setBy !== '' ? ` (set by ${short(v.setBy)})` : ''}`
  ]
  out.push(`spent: ${totalsLine(b.spent)}${b.inFlightUsd > 0 ? `; $${b.inFlightUsd.toFixed(4)} counted in flight` : ''}`)
  out.push(b.reached ? `budget reached: ${b.reasons.join('; ')}. No new run starts; raise it with agency budget set` : 'budget not reached')
  if (b.hold != null && b.hold.until > Date.now())
    out.push(`provider limited (${b.hold.kind}) until ${new Date(b.hold.until).toISOString()}: ${b.hold.message}`)
  return out
}

function budgetJson(b: BudgetReply): unknown {
  return {
    budget: {
      usd: b.budget?.usd ?? 0,
      tokens: b.budget?.tokens ?? 0,
      hours: b.budget?.hours ?? 0,
      per_agent_usd: b.budget?.perAgentUsd ?? 0,
      set_by: b.budget?.setBy ?? ''
    },
    reached: b.reached,
    reasons: b.reasons,
    spent: totalsJson(b.spent),
    in_flight_usd: b.inFlightUsd,
    hold:
      b.hold != null
        ? { provider: b.hold.provider, until: b.hold.until, kind: b.hold.kind, message: b.hold.message, reported_by: b.hold.reportedBy }
        : null
  }
}

/** A budget flag's value: a number from 0, or a clear error. */
export function budgetNumber(flag: string, text: string | undefined, whole = false): number | undefined {
  if (text == null) return undefined
  const n = Number(text)
  if (text.trim() === '' || !Number.isFinite(n)) throw new InvalidArgumentError(`${flag}: "${text}" is not a number`)
  if (n < 0) throw new InvalidArgumentError(`${flag}: must not be negative, got ${text}`)
  if (whole && !Number.isSafeInteger(n)) throw new InvalidArgumentError(`${flag}: must be a whole number, got ${text}`)
  return n
}

export function registerSpendCommands(program: Command): void {
  command(
    program,
    'usage',
    'what the swarm has spent: tokens (input counts cached input) and dollars, in total or --by agent, model or task'
  )
    .option('--by <grouping>', `group by ${GROUPINGS.join(', ')}`)
    .action(
      withAgency(async (agency, opts: CommonOpts & { by?: string }) => {
        if (opts.by != null && !(GROUPINGS as readonly string[]).includes(opts.by))
          throw new InvalidArgumentError(`--by: "${opts.by}" is not one of ${GROUPINGS.join(', ')}`)
        const r = await agency.call((c: AgencyClient) => c.getUsage, { by: opts.by ?? '' })
        if (opts.json === true) {
          printJson(usageJson(r))
          return
        }
        line(`total: ${totalsLine(r.total)}`)
        for (const row of r.rows)
          line(
            `  ${(row.name !== '' ? `${row.name} ${short(row.key)}` : row.key !== '' ? row.key : '(none)').padEnd(24)} ${totalsLine(row.totals)}`
          )
      })
    )

  const budget = command(
    program,
    'budget',
    "the swarm's budget and whether it is reached (no new run starts then); `agency budget set` changes it"
  ).action(
    withAgency(async (agency, opts: CommonOpts) => {
      const b = await agency.call((c: AgencyClient) => c.getBudget, {})
      if (opts.json === true) {
        printJson(budgetJson(b))
        return
      }
      for (const l of budgetLines(b)) line(l)
    })
  )
  command(
    budget,
    'set',
    "set the swarm's caps (0 removes one; a cap left out is kept): every daemon stops starting runs when recorded spend plus runs in flight reach it; in a swarm with an operator, as the operator (--operator-key)"
  )
    .option('--usd <dollars>', 'dollars, the whole swarm')
    .option('--tokens <n>', 'tokens (input, cached too, and output), the whole swarm')
    .option('--hours <h>', 'agent-hours: run time summed over agents')
    .option('--per-agent-usd <dollars>', 'dollars per agent')
    .action(
      withAgency(async (agency, opts: CommonOpts & { usd?: string; tokens?: string; hours?: string; perAgentUsd?: string }) => {
        const req = {
          usd: budgetNumber('--usd', opts.usd),
          tokens: budgetNumber('--tokens', opts.tokens, true),
          hours: budgetNumber('--hours', opts.hours),
          perAgentUsd: budgetNumber('--per-agent-usd', opts.perAgentUsd)
        }
        if (Object.values(req).every(v => v == null))
          throw new InvalidArgumentError('budget set: give at least one of --usd, --tokens, --hours, --per-agent-usd')
        const operator = await givenOperator(opts)
        let b: BudgetReply
        if (operator !== undefined) {
          // as the operator: the whole caps, signed here (a cap left out is the current one)
          const now = (await agency.call((c: AgencyClient) => c.getBudget, {})).budget
          const caps = changedBudget(
            {
              microUsd: Math.round((now?.usd ?? 0) * 1e6),
              tokens: now?.tokens ?? 0,
              agentSeconds: Math.round((now?.hours ?? 0) * 3600),
              perAgentMicroUsd: Math.round((now?.perAgentUsd ?? 0) * 1e6)
            },
            req
          )
          await submitAction(agency, operator, { kind: 'budget', budget: caps })
          b = await agency.call((c: AgencyClient) => c.getBudget, {})
        } else {
          b = await agency.call((c: AgencyClient) => c.setBudget, req)
        }
        if (opts.json === true) {
          printJson(budgetJson(b))
          return
        }
        for (const l of budgetLines(b)) line(l)
      })
    )
}
