// One raw gossipsub node in its own process, for the TCP half of the mesh
// benchmark: the same libp2p stack as agentd (createMeshNode: TCP, noise,
// yamux, identify, ping, gossipsub with agentd's options) and nothing else.
// stdout: "addr <multiaddr>", "ready", then "recv <seq> <ms since epoch>" per
// message received, and "sent <seq> <ms since epoch>" as it publishes one. stdin: "pub <seq> <bytes>" publishes a payload of that size;
// "connections" answers "connections <peers connected>".
//
//   tsx test/bench/mesh-raw-node.ts --topic T [--peers a,b]
import '../../src/polyfill.js'
import { createInterface } from 'node:readline'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { multiaddr } from '@multiformats/multiaddr'
import { createMeshNode } from '../../src/mesh/node.js'

const arg = (flag: string): string | undefined => {
  const i = process.argv.indexOf(flag)
  return i < 0 ? undefined : process.argv[i + 1]
}
const topic = arg('--topic') ?? 'bench'
const peers = (arg('--peers') ?? '').split(',').filter(s => s !== '')

const node = await createMeshNode({ privateKey: await generateKeyPair('Ed25519'), listen: ['/ip4/127.0.0.1/tcp/0'] })
await node.start()
const pubsub = node.services.pubsub
pubsub.subscribe(topic)
pubsub.addEventListener('message', evt => {
  const data = evt.detail.data
  if (data.length >= 5) process.stdout.write(`recv ${Buffer.from(data).readUInt32BE(1)} ${Date.now()}\n`)
})
for (const p of peers) await node.dial(multiaddr(p)).catch(() => {})
process.stdout.write(`addr ${node.getMultiaddrs()[0].toString()}\nready\n`)

// An exit, not the default kill, so that a profile asked for (--cpu-prof) is written.
process.on('SIGTERM', () => {
  process.exit(0)
})

createInterface({ input: process.stdin }).on('line', line => {
  const [cmd, a, b] = line.split(' ')
  if (cmd === 'pub') {
    const data = Buffer.alloc(Number(b))
    data[0] = 1
    data.writeUInt32BE(Number(a), 1)
    for (let i = 5; i < data.length; i++) data[i] = Math.floor(Math.random() * 256)
    process.stdout.write(`sent ${a} ${Date.now()}\n`)
    pubsub.publish(topic, data).catch(() => {})
  } else if (cmd === 'peers') {
    process.stdout.write(`peers ${pubsub.getSubscribers(topic).length}\n`)
  } else if (cmd === 'connections') {
    process.stdout.write(`connections ${node.getPeers().length}\n`)
  } else if (cmd === 'stop') {
    void Promise.resolve(node.stop()).finally(() => process.exit(0))
  }
})
