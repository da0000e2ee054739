// The scripted agent: a node program that follows the same loop as the prompt,
// through the same gRPC API, with no model. It reads AGENCY_ADDR and
// AGENCY_AGENT_ID from its environment and takes no arguments.
import { baseLaunch } from './common.js'
import { compiledModulePath } from '../package-paths.js'
import type { HarnessContext, HarnessLaunch } from '../types.js'

/** The compiled scripted agent, `dist/src/harness/scripted-agent/main.js`. */
export const SIM_AGENT_MAIN = compiledModulePath('harness/scripted-agent/main.js')

export function simLaunch (ctx: HarnessContext): HarnessLaunch {
  return baseLaunch(ctx, process.execPath, [SIM_AGENT_MAIN])
}
