// What each harness's runs spent and whether they ended on a provider's limit,
// read from each CLI's own reports; dollars estimated from a price table where
// a CLI gives none.
export { type ModelUsage, type RunUsage, inputTotal, mergeByModel } from './run-usage.js'
export { type RunOutput, type RunReport, type RunReader } from './run-report.js'
export { type RateLimitKind, type RateLimitSignal, DEFAULT_HOLD_MS, rateLimitInLine } from './rate-limit.js'
export { runReader, usageReportPaths } from './readers.js'
export { acpSessionCostUsd, acpTurnUsage } from './acp.js'
export { DEFAULT_PRICES, PriceFileError, parsePrices, priceOf, priced, type PriceRow, type PriceTable } from './prices.js'
export { readRunReport, type RunFilesInput } from './run-files.js'
export { providerAccount } from './provider-account.js'
