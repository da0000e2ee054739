// Each daemon's heartbeats say what its agent runs in, so every agent's
// sandbox mode is seen everywhere, not only on its own daemon: two agentd
// processes, one running an agent in a bubblewrap box and one running an
// agent with --sandbox none, and a third with no agent; the third's
// `agency status` (text and --json) and `agency peers` name each peer's mode.
import { afterAll, describe, expect, it } from 'vitest'
import { detectSupport } from '../../../src/sandbox/index.js'
import { Scratch } from '../../helpers/agent-loop.js'
import { agencyJson, runAgency } from '../../helpers/agentd-process.js'
import { waitFor } from '../../helpers/wait-for.js'

const support = detectSupport()
if (!support.bwrap.ok) console.log(`skipping the peers' sandbox modes test: ${support.bwrap.reason}`)

const scratch = new Scratch()
afterAll(async () => {
  await scratch.cleanup()
}, 60_000)

describe.skipIf(!support.bwrap.ok)("peers' sandbox modes", () => {
  it("agency status and agency peers show each peer's mode from its heartbeats", async () => {
    const watcher = await scratch.daemon('watcher', { extraArgs: ['--sandbox', 'none'] })
    const agent = ['--harness', 'cmd:exec sleep 1000']
    const boxed = await scratch.daemon('boxed', { peers: watcher.addrs, extraArgs: [...agent, '--sandbox', 'bwrap'] })
    const open = await scratch.daemon('open', { peers: watcher.addrs, extraArgs: [...agent, '--sandbox', 'none'] })
    const status = await waitFor(
      async () => {
        const d = await agencyJson(watcher.grpc, ['status'])
        const shown = d.peers.shown as Array<{ name: string; sandbox: string }>
        return shown.some(p => p.name === 'boxed' && p.sandbox === 'bwrap') && shown.some(p => p.name === 'open' && p.sandbox === 'none')
          ? shown
          : undefined
      },
      { timeoutMs: 60_000, what: "both peers' sandbox modes at the watcher" }
    )
    expect(status.map(p => `${p.name}:${p.sandbox}`).sort()).toEqual(['boxed:bwrap', 'open:none'])

    const text = await runAgency(['status', '--addr', watcher.grpc])
    expect(text.stdout).toMatch(/^ {2}boxed \(sandbox bwrap\)/m)
    expect(text.stdout).toMatch(/^ {2}open \(sandbox none\)/m)
    const peers = await agencyJson(watcher.grpc, ['peers'])
    expect(peers.find((p: { peerId: string }) => p.peerId === boxed.peerId)).toMatchObject({ sandbox: 'bwrap', harness: 'running' })
    expect(peers.find((p: { peerId: string }) => p.peerId === open.peerId)).toMatchObject({ sandbox: 'none' })
    // A daemon without an agent says nothing of a sandbox.
    const seenByBoxed = await waitFor(
      async () => (await agencyJson(boxed.grpc, ['peers'])).find((p: { peerId: string }) => p.peerId === watcher.peerId),
      { timeoutMs: 30_000, what: 'the watcher at boxed' }
    )
    expect(seenByBoxed.sandbox ?? '').toBe('')
  }, 120_000)
})
