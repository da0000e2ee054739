// gRPC server reflection, so standard tools (grpcurl, grpcui, Postman) can
// list and call the API without being handed the .proto files. The service
// descriptions come from the same .proto files the client code is generated
// from, read at start: the generated TypeScript keeps no descriptors.
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { loadSync } from '@grpc/proto-loader'
import { ReflectionService } from '@grpc/reflection'
import type { Server } from '@grpc/grpc-js'

const API_PROTO = 'agency/v1/api.proto'

// src/api/ and dist/src/api/ sit at different depths below the package root.
function protoRoot(): string {
  for (const rel of ['../../proto/', '../../../proto/']) {
    const dir = fileURLToPath(new URL(rel, import.meta.url))
    if (existsSync(dir + API_PROTO)) return dir
  }
  throw new Error(`cannot find ${API_PROTO} below the package root`)
}

function healthProto(): string {
  return fileURLToPath(import.meta.resolve('grpc-health-check/proto/health/v1/health.proto'))
}

let reflection: ReflectionService | undefined

/**
 * Answer reflection requests for the Agency and health services on `server`.
 * The descriptions are read and indexed once per process and shared by its
 * servers: it answers from them alone, and with `agentd --agents` building
 * them for each agent's server was a tenth of a host's start.
 */
export function addReflection(server: Pick<Server, 'addService'>): void {
  reflection ??= new ReflectionService(loadSync([API_PROTO, healthProto()], { includeDirs: [protoRoot()] }))
  reflection.addToServer(server)
}
