// A benchmark's helper process, forked with an IPC channel: a request is
// { id, op, args }, its answer { id, value } or { id, error }. The claims and
// mesh benchmarks spread their daemons over a few such processes.
import { fork, type ChildProcess } from 'node:child_process'

export interface IpcHost {
  child: ChildProcess
  call: <T>(op: string, args?: Record<string, unknown>) => Promise<T>
}

/** Forks `script`; a call still waiting when the process exits is rejected, naming `what` exited. */
export function forkIpcHost(script: string, o: { what: string; execArgv?: string[]; env?: NodeJS.ProcessEnv }): IpcHost {
  const child = fork(script, [], { execArgv: o.execArgv ?? process.execArgv, env: o.env, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  let next = 0
  const waiting = new Map<number, { resolve: (v: any) => void; reject: (e: Error) => void }>()
  child.on('message', (m: { id: number; value?: unknown; error?: string }) => {
    const w = waiting.get(m.id)
    waiting.delete(m.id)
    if (m.error !== undefined) w?.reject(new Error(m.error))
    else w?.resolve(m.value)
  })
  child.on('exit', code => {
    for (const w of waiting.values()) w.reject(new Error(`${o.what} exited (${code ?? 'signal'})`))
    waiting.clear()
  })
  return {
    child,
    call: async (op, args) =>
      await new Promise((resolve, reject) => {
        const id = next++
        waiting.set(id, { resolve, reject })
        child.send({ id, op, args }, err => {
          if (err != null) {
            waiting.delete(id)
            reject(err)
          }
        })
      })
  }
}
