// The scripted agent: a node program that follows the same loop as the prompt,
// through the same gRPC API, with no model. It reads AGENCY_ADDR and
// AGENCY_AGENT_ID from its environment and takes no arguments.
import { baseLaunch } from './common.js'
import { compiledModulePath } from '../package-paths.js'
import type { HarnessContext, HarnessLaunch } from '../types.js'

/** The compiled scripted agent, `dist/src/harness/scripted-agent/main.js`. */
export const SCRIPTED_AGENT_MAIN = compiledModulePath('harness/scripted-agent/main.js')

/** `--harness scripted`, and `sim`, the name the demo, compose files and docs use. */
export const SCRIPTED_HARNESS_NAMES: readonly string[] = ['scripted', 'sim']

/** Whether `--harness <name>` runs the scripted agent (which reads recipes instead of a model). */
export function isScriptedHarness(name: string | undefined): boolean {
  return name !== undefined && SCRIPTED_HARNESS_NAMES.includes(name)
}

export function scriptedAgentLaunch(ctx: HarnessContext): HarnessLaunch {
  return baseLaunch(ctx, process.execPath, [SCRIPTED_AGENT_MAIN])
}
