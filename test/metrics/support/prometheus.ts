// A real Prometheus server on 127.0.0.1 (a random free port), with a temp
// config that scrapes the given targets every second and temp storage.
import { spawn, type ChildProcess } from 'node:child_process'
import { closeSync, openSync } from 'node:fs'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { freePort } from '../../helpers/free-port.js'

export interface PrometheusServer {
  url: string
  /** an instant query's result vector (throws on a query error) */
  query: (expr: string) => Promise<Array<{ metric: Record<string, string>; value: [number, string] }>>
  labelValues: (label: string, match: string) => Promise<string[]>
  stop: () => Promise<void>
}

async function getJson(url: string): Promise<any> {
  const res = await fetch(url)
  const body = (await res.json()) as { status: string; data: unknown; error?: string }
  if (body.status !== 'success') throw new Error(`${url}: ${body.error ?? res.status}`)
  return body.data
}

export async function startPrometheus(bin: string, dir: string, targets: string[]): Promise<PrometheusServer> {
  await mkdir(join(dir, 'data'), { recursive: true })
  const config = join(dir, 'prometheus.yml')
  await writeFile(
    config,
    [
      'global:',
      '  scrape_interval: 1s',
      '  evaluation_interval: 1s',
      'scrape_configs:',
      '  - job_name: agentd',
      '    static_configs:',
      `      - targets: [${targets.map(t => `'${t}'`).join(', ')}]`,
      ''
    ].join('\n')
  )
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  const logFile = join(dir, 'prometheus.log')
  const log = openSync(logFile, 'a')
  const child: ChildProcess = spawn(
    bin,
    [
      `--config.file=${config}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--storage.tsdb.retention.time=1h',
      '--log.level=warn'
    ],
    { stdio: ['ignore', log, log] }
  )
  closeSync(log)
  const exited = new Promise<void>(resolve => {
    child.once('exit', () => {
      resolve()
    })
  })
  const kill = (): void => {
    child.kill('SIGKILL')
  }
  process.once('exit', kill)
  const stop = async (): Promise<void> => {
    process.off('exit', kill)
    if (child.exitCode != null || child.signalCode != null) return
    const hard = setTimeout(kill, 10_000)
    child.kill('SIGTERM')
    await exited
    clearTimeout(hard)
  }
  const deadline = Date.now() + 30_000
  while (true) {
    const ready = await fetch(`${url}/-/ready`).then(
      r => r.ok,
      () => false
    )
    if (ready) break
    if (child.exitCode != null || Date.now() > deadline) {
      await stop()
      throw new Error(`prometheus did not become ready:\n${(await readFile(logFile, 'utf8').catch(() => '')).slice(-3000)}`)
    }
    await new Promise(resolve => setTimeout(resolve, 200))
  }
  return {
    url,
    query: async expr => {
      const data = (await getJson(`${url}/api/v1/query?query=${encodeURIComponent(expr)}`)) as { resultType: string; result: any }
      if (data.resultType === 'scalar') return [{ metric: {}, value: data.result }]
      return data.result
    },
    labelValues: async (label, match) =>
      (await getJson(`${url}/api/v1/label/${label}/values?match[]=${encodeURIComponent(match)}`)) as string[],
    stop
  }
}
