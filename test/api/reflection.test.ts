// Server reflection: a standard reflection client (grpc-js and the reflection
// proto, as grpcurl speaks it) lists the services and gets the Agency
// service's description, which matches the generated service method for method.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  credentials,
  loadPackageDefinition,
  status,
  type ClientDuplexStream,
  type GrpcObject,
  type ServiceClientConstructor
} from '@grpc/grpc-js'
import { loadSync } from '@grpc/proto-loader'
import { fromBinary } from '@bufbuild/protobuf'
import { FileDescriptorProtoSchema } from '@bufbuild/protobuf/wkt'
import { fileURLToPath } from 'node:url'
import { startGrpcServer, type GrpcServer } from '../../src/api/grpc-server.js'
import { AgencyService, type AgencyServer } from '../../src/gen/agency/v1/api.js'

interface ReflectionResponse {
  listServicesResponse?: { service: Array<{ name: string }> }
  fileDescriptorResponse?: { fileDescriptorProto: Buffer[] }
  errorResponse?: { errorCode: number; errorMessage: string }
}

const REFLECTION_PROTO = fileURLToPath(import.meta.resolve('@grpc/reflection/build/proto/grpc/reflection/v1/reflection.proto'))

function reflectionClient(address: string): ClientDuplexStream<object, ReflectionResponse> {
  const pkg = loadPackageDefinition(loadSync(REFLECTION_PROTO))
  const v1 = ((pkg.grpc as GrpcObject).reflection as GrpcObject).v1 as GrpcObject
  const Client = v1.ServerReflection as ServiceClientConstructor
  const client = new Client(address, credentials.createInsecure())
  return (client as unknown as { ServerReflectionInfo: () => ClientDuplexStream<object, ReflectionResponse> }).ServerReflectionInfo()
}

/** One request on the reflection stream, one answer. */
async function ask(address: string, request: object): Promise<ReflectionResponse> {
  const call = reflectionClient(address)
  const answer = new Promise<ReflectionResponse>((resolve, reject) => {
    call.once('data', resolve)
    call.once('error', reject)
  })
  call.write(request)
  try {
    return await answer
  } finally {
    call.end()
  }
}

describe('gRPC server reflection', () => {
  let server: GrpcServer
  beforeAll(async () => {
    // No daemon behind the handlers: reflection answers from the service descriptions alone.
    const handlers = Object.fromEntries(
      Object.keys(AgencyService).map(name => [
        name,
        (_call: unknown, cb: (err: { code: number }) => void) => {
          cb({ code: status.UNIMPLEMENTED })
        }
      ])
    ) as unknown as AgencyServer
    server = await startGrpcServer('127.0.0.1:0', handlers)
  })
  afterAll(async () => {
    await server?.close()
  })

  it('lists the Agency and health services', async () => {
    const r = await ask(server.address, { listServices: '' })
    const names = (r.listServicesResponse?.service ?? []).map(s => s.name)
    expect(names).toEqual(expect.arrayContaining(['agency.v1.Agency', 'grpc.health.v1.Health']))
  })

  it('describes every method of the Agency service', async () => {
    const r = await ask(server.address, { fileContainingSymbol: 'agency.v1.Agency' })
    const files = (r.fileDescriptorResponse?.fileDescriptorProto ?? []).map(b => fromBinary(FileDescriptorProtoSchema, b))
    const api = files.find(f => f.service.some(s => s.name === 'Agency'))
    const methods = api?.service.find(s => s.name === 'Agency')?.method.map(m => m.name) ?? []
    const generated = Object.values(AgencyService).map(m => m.path.split('/').pop())
    expect(methods.length).toBeGreaterThan(0)
    expect(methods.sort()).toEqual(generated.sort())
    // The request and response types come along, so a tool can encode calls.
    const messages = new Set(files.flatMap(f => f.messageType.map(m => `.${f.package}.${m.name}`)))
    const used = api?.service.find(s => s.name === 'Agency')?.method.flatMap(m => [m.inputType, m.outputType]) ?? []
    expect(used.filter(t => !messages.has(t))).toEqual([])
  })

  it('answers on every server of a process (the agents of `agentd --agents` share the descriptions)', async () => {
    const handlers = Object.fromEntries(
      Object.keys(AgencyService).map(name => [
        name,
        (_call: unknown, cb: (err: { code: number }) => void) => {
          cb({ code: status.UNIMPLEMENTED })
        }
      ])
    ) as unknown as AgencyServer
    const second = await startGrpcServer('127.0.0.1:0', handlers)
    try {
      for (const address of [server.address, second.address]) {
        const r = await ask(address, { fileContainingSymbol: 'agency.v1.Agency' })
        expect((r.fileDescriptorResponse?.fileDescriptorProto ?? []).length).toBeGreaterThan(0)
      }
    } finally {
      await second.close()
    }
  })

  it('answers NOT_FOUND for a symbol the API does not have', async () => {
    const r = await ask(server.address, { fileContainingSymbol: 'agency.v1.Nothing' })
    expect(r.errorResponse?.errorCode).toBe(status.NOT_FOUND)
  })
})
