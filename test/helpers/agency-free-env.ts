// The environment a test gives a process it spawns (agentd, the agency CLI, a
// harness): this process's own, without the AGENCY_* variables a developer's
// shell may set, so a test never talks to the developer's daemon or token.

/** process.env without any AGENCY_* variable. */
export function envWithoutAgency(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('AGENCY_')) env[k] = v
  return env
}
