// deploy/: the compose file (and the override npm run test:deploy puts on it),
// the Dockerfile, the Kubernetes manifests and the systemd unit parse, agree
// with each other and with agentd's flags, and reference only files that
// exist. No Docker engine or cluster is needed here: the shared-repository init
// script is run for real, and `npm run test:deploy` (test/deploy/) builds the
// image and runs the compose swarm for real.
import { execFile } from 'node:child_process'
import { existsSync, readFileSync, statSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parse, parseAllDocuments } from 'yaml'
import { AGENTD_BIN, REPO_ROOT } from './support/agentd.js'
import { findTool, missingTool } from './support/tools.js'

const run = promisify(execFile)
const DEPLOY = join(REPO_ROOT, 'deploy')
const read = (path: string): string => readFileSync(path, 'utf8')
const isDir = (p: string): boolean => existsSync(p) && statSync(p).isDirectory()

/** The AGENCY_* variable of every agentd flag, from `agentd --help`. */
let AGENTD_ENV: string[] = []
beforeAll(async () => {
  if (!existsSync(AGENTD_BIN)) throw new Error(`${AGENTD_BIN} is missing: build first (npx tsc -p .)`)
  const { stdout } = await run(process.execPath, [AGENTD_BIN, '--help'])
  AGENTD_ENV = [...stdout.matchAll(/env:\s+(AGENCY_[A-Z0-9_]+)/g)].map(m => m[1])
  expect(AGENTD_ENV).toContain('AGENCY_PEERS')
})

function agencyVars(env: Record<string, unknown> | undefined): string[] {
  return Object.keys(env ?? {}).filter(k => k.startsWith('AGENCY_'))
}

describe('deploy/docker-compose.yml', () => {
  const file = join(DEPLOY, 'docker-compose.yml')
  const compose = parse(read(file), { merge: true }) as {
    services: Record<
      string,
      {
        image?: string
        build?: { context: string; dockerfile: string }
        environment?: Record<string, string>
        volumes?: string[]
        ports?: string[]
        container_name?: string
        depends_on?: Record<string, unknown> | string[]
        entrypoint?: string[]
      }
    >
    volumes: Record<string, unknown>
  }
  const services = compose.services
  const agentdServices = ['seed', 'agentd']

  it('has the shared repository, a seed, the scalable agentd, Prometheus and Grafana', () => {
    expect(Object.keys(services).sort()).toEqual(['agentd', 'grafana', 'prometheus', 'seed', 'shared-repo'])
  })

  it('builds from the repository root with deploy/Dockerfile', () => {
    for (const [name, s] of Object.entries(services)) {
      if (s.build == null) continue
      const context = resolve(DEPLOY, s.build.context)
      expect(isDir(context), `${name} build context`).toBe(true)
      expect(existsSync(join(context, s.build.dockerfile)), `${name} dockerfile`).toBe(true)
      expect(resolve(context, s.build.dockerfile)).toBe(join(DEPLOY, 'Dockerfile'))
    }
  })

  it('mounts only files and directories that exist, and declared volumes', () => {
    for (const [name, s] of Object.entries(services)) {
      for (const v of s.volumes ?? []) {
        const source = v.split(':')[0]
        if (source.startsWith('.') || source.startsWith('/')) expect(existsSync(resolve(DEPLOY, source)), `${name}: ${v}`).toBe(true)
        else expect(Object.keys(compose.volumes), `${name}: ${v}`).toContain(source)
      }
    }
  })

  it('lets agentd scale: no fixed name or host port, and one bootstrap address', () => {
    const a = services.agentd
    expect(a.container_name).toBeUndefined()
    expect(a.ports).toBeUndefined()
    const listenPort = /\/tcp\/(\d+)$/.exec(services.seed.environment!.AGENCY_LISTEN)![1]
    expect(a.environment!.AGENCY_PEERS).toBe(`/dns4/seed/tcp/${listenPort}`)
    expect(Object.keys(a.depends_on as Record<string, unknown>)).toEqual(expect.arrayContaining(['shared-repo', 'seed']))
  })

  it('gives every daemon the shared bare repository that the one-shot service creates', () => {
    const repoPath = services['shared-repo'].environment!.AGENCY_SHARED_REPO
    expect(services['shared-repo'].entrypoint).toEqual(['/usr/local/bin/init-shared-repo'])
    for (const name of agentdServices) {
      expect(services[name].environment!.AGENCY_REPO, name).toBe(repoPath)
      const mount = services[name].volumes!.find(v => v.startsWith('shared-repo:'))!
      expect(repoPath.startsWith(mount.split(':')[1] + '/'), name).toBe(true)
    }
  })

  it('sets only AGENCY_* variables that agentd knows', () => {
    for (const name of agentdServices) {
      expect(
        agencyVars(services[name].environment).filter(v => !AGENTD_ENV.includes(v)),
        name
      ).toEqual([])
    }
    const init = read(join(DEPLOY, 'docker/init-shared-repo.sh'))
    for (const v of agencyVars(services['shared-repo'].environment)) expect(init, v).toContain(v)
  })

  it('has Prometheus discover every agentd through DNS on the metrics port', () => {
    const mount = services.prometheus.volumes!.find(v => v.endsWith(':/etc/prometheus/prometheus.yml:ro'))!
    const config = parse(read(resolve(DEPLOY, mount.split(':')[0]))) as {
      global: { scrape_interval: string }
      scrape_configs: Array<{ job_name: string; dns_sd_configs?: Array<{ names: string[]; type: string; port: number }> }>
    }
    const job = config.scrape_configs.find(j => j.job_name === 'agentd')!
    const sd = job.dns_sd_configs![0]
    expect(sd.names.sort()).toEqual([...agentdServices].sort())
    for (const name of agentdServices) expect(services[name].environment!.AGENCY_METRICS).toBe(`0.0.0.0:${sd.port}`)
    const datasource = parse(read(join(REPO_ROOT, 'grafana/provisioning/datasources/prometheus.yml'))) as {
      datasources: Array<{ url: string; jsonData: { timeInterval: string } }>
    }
    expect(datasource.datasources[0].jsonData.timeInterval).toBe(config.global.scrape_interval)
    expect(datasource.datasources[0].url).toBe('http://prometheus:9090')
  })

  it('provisions Grafana with the datasource and the dashboards where the provider looks', () => {
    const g = services.grafana.volumes!
    const target = (source: string): string | undefined =>
      g.find(v => resolve(DEPLOY, v.split(':')[0]) === join(REPO_ROOT, source))?.split(':')[1]
    const provider = parse(read(join(REPO_ROOT, 'grafana/provisioning/dashboards/agency.yml'))) as {
      providers: Array<{ options: { path: string } }>
    }
    expect(target('grafana/dashboards')).toBe(provider.providers[0].options.path)
    expect(target('grafana/provisioning/datasources')).toBe('/etc/grafana/provisioning/datasources')
    expect(target('grafana/provisioning/dashboards')).toBe('/etc/grafana/provisioning/dashboards')
    const home = services.grafana.environment!.GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH
    expect(existsSync(join(REPO_ROOT, 'grafana/dashboards', home.slice(provider.providers[0].options.path.length + 1)))).toBe(true)
  })
})

describe('deploy/docker-compose.test.yml (the override of npm run test:deploy)', () => {
  type Service = {
    image?: string
    build?: { context: string; dockerfile: string; network?: string; args?: Record<string, string> }
    environment?: Record<string, string>
    profiles?: string[]
    ports?: unknown
  }
  const base = parse(read(join(DEPLOY, 'docker-compose.yml')), { merge: true }) as { services: Record<string, Service> }
  const reset = { tag: '!reset', collection: 'seq' as const, resolve: () => ({ reset: true }) }
  const override = parse(read(join(DEPLOY, 'docker-compose.test.yml')), { merge: true, customTags: [reset] }) as {
    services: Record<string, Service>
    networks: Record<string, { internal?: boolean }>
  }

  it('overrides only services of the compose file', () => {
    expect(Object.keys(base.services)).toEqual(expect.arrayContaining(Object.keys(override.services)))
  })

  it("builds every agentd service into one test image, from deploy/Dockerfile, on the host's network", () => {
    const images = new Set<string>()
    for (const [name, s] of Object.entries(base.services)) {
      if (s.build == null) continue
      const o = override.services[name]
      expect(o?.image, name).toMatch(/^\$\{AGENCY_TEST_AGENTD_IMAGE:\?/)
      images.add(o.image as string)
      expect(resolve(DEPLOY, o.build!.context, o.build!.dockerfile), name).toBe(join(DEPLOY, 'Dockerfile'))
      expect(o.build!.network, name).toBe('host')
    }
    expect(images.size).toBe(1)
  })

  it('runs the scripted agent beside every daemon', () => {
    for (const name of ['seed', 'agentd']) expect(override.services[name].environment?.AGENCY_HARNESS, name).toBe('sim')
  })

  it('replaces Prometheus with the Debian build, on the base the agentd image uses', () => {
    const b = override.services.prometheus.build!
    const dockerfile = read(resolve(DEPLOY, b.context, b.dockerfile))
    expect(dockerfile).toMatch(/^FROM \$\{BASE\}$/m)
    expect(dockerfile).toMatch(/apt-get install -y --no-install-recommends prometheus/)
    expect(JSON.parse(/^ENTRYPOINT (.*)$/m.exec(dockerfile)![1])).toEqual(['/usr/bin/prometheus'])
    const agentdBase = /^FROM (\S+)/m.exec(read(join(DEPLOY, 'Dockerfile')))![1]
    expect(b.args?.BASE).toBe(agentdBase)
    expect(/^ARG BASE=(\S+)$/m.exec(dockerfile)![1]).toBe(agentdBase)
  })

  it('publishes nothing on the host, leaves Grafana out, and keeps the network internal', () => {
    for (const [name, s] of Object.entries(base.services)) {
      if (s.ports == null) continue
      expect(override.services[name]?.ports, name).toEqual({ reset: true })
    }
    expect(override.services.grafana.profiles).toEqual(['grafana'])
    expect(override.networks.default.internal).toBe(true)
  })

  it('is what test/deploy/run.sh and the compose test use, with npm run test:deploy', () => {
    const pkg = JSON.parse(read(join(REPO_ROOT, 'package.json'))) as { scripts: Record<string, string> }
    expect(pkg.scripts['test:deploy']).toBe('bash test/deploy/run.sh')
    const runner = read(join(REPO_ROOT, 'test/deploy/run.sh'))
    expect(runner).toContain('-f deploy/docker-compose.yml -f deploy/docker-compose.test.yml')
    expect(runner).toContain('deploy/offline/build-node-base.sh')
    expect(read(join(REPO_ROOT, 'test/deploy/compose-swarm.deploy.ts'))).toContain(
      "'-f', 'deploy/docker-compose.yml', '-f', 'deploy/docker-compose.test.yml'"
    )
    expect(statSync(join(DEPLOY, 'offline/build-node-base.sh')).mode & 0o111).not.toBe(0)
  })
})

describe('deploy/Dockerfile', () => {
  const text = read(join(DEPLOY, 'Dockerfile'))
  const ignore = read(join(DEPLOY, 'Dockerfile.dockerignore'))
    .split('\n')
    .filter(l => l.startsWith('!'))
    .map(l => l.slice(1))

  it('builds on node:20 with npm ci and npm run build (dist/src and the dashboard in dist/ui), and runs agentd', () => {
    expect([...text.matchAll(/^FROM (\S+)/gm)].map(m => m[1]).every(image => image.startsWith('node:20'))).toBe(true)
    expect(text).toMatch(/RUN npm ci/)
    expect(text).toMatch(/RUN npm run build/)
    const pkg = JSON.parse(read(join(REPO_ROOT, 'package.json'))) as { scripts: Record<string, string> }
    for (const out of ['dist/src', 'dist/ui']) expect(text).toContain(`COPY --from=build /app/${out} ./${out}`)
    expect(pkg.scripts.build).toContain('vite build')
    const entry = JSON.parse(/^ENTRYPOINT (.*)$/m.exec(text)![1]) as string[]
    const script = entry.find(a => a.endsWith('agentd.js'))!
    expect(script).toBe('/app/dist/src/cli/agentd.js')
    expect(existsSync(join(REPO_ROOT, 'src/cli/agentd.ts'))).toBe(true)
  })

  it('copies only files that exist and that the build context sends', () => {
    const copies = [...text.matchAll(/^COPY (?!--from)(.+)$/gm)].map(m => m[1].trim().split(/\s+/).slice(0, -1))
    expect(copies.length).toBeGreaterThan(3)
    for (const sources of copies) {
      for (const s of sources) {
        expect(existsSync(join(REPO_ROOT, s)), s).toBe(true)
        expect(
          ignore.some(i => s === i || s.startsWith(i + '/')),
          `${s} is excluded by Dockerfile.dockerignore`
        ).toBe(true)
      }
    }
  })

  it('sets only AGENCY_* variables that agentd knows', () => {
    const envs = [...text.matchAll(/\b(AGENCY_[A-Z0-9_]+)=/g)].map(m => m[1])
    expect(envs.length).toBeGreaterThan(0)
    expect(envs.filter(v => !AGENTD_ENV.includes(v))).toEqual([])
  })
})

describe('deploy/docker/init-shared-repo.sh', () => {
  let dir: string
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agency-init-repo-'))
  })
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true })
  })
  const script = join(DEPLOY, 'docker/init-shared-repo.sh')
  const initRepo = async (env: Record<string, string>): Promise<string> =>
    (await run('sh', [script], { env: { ...process.env, ...env } })).stdout

  it('creates a bare repository with a main branch, once', async () => {
    const repo = join(dir, 'plain.git')
    expect(await initRepo({ AGENCY_SHARED_REPO: repo })).toContain('created')
    const head = (await run('git', ['--git-dir', repo, 'rev-parse', 'main'])).stdout.trim()
    expect(head).toMatch(/^[0-9a-f]{40}$/)
    expect(await initRepo({ AGENCY_SHARED_REPO: repo })).toContain('exists')
    expect((await run('git', ['--git-dir', repo, 'rev-parse', 'main'])).stdout.trim()).toBe(head)
  })

  it('seeds the repository from an example project', async () => {
    const repo = join(dir, 'calc.git')
    await initRepo({ AGENCY_SHARED_REPO: repo, AGENCY_EXAMPLE: 'calc', AGENCY_APP_DIR: REPO_ROOT })
    const files = (await run('git', ['--git-dir', repo, 'ls-tree', '-r', '--name-only', 'main'])).stdout
    expect(files).toContain('.sim/project.json')
  })
})

describe('deploy/k8s', () => {
  const K8S = join(DEPLOY, 'k8s')
  const kustomization = parse(read(join(K8S, 'kustomization.yaml'))) as { resources: string[]; namespace: string }
  type Doc = Record<string, any>
  const docs: Doc[] = kustomization.resources.flatMap(r =>
    parseAllDocuments(read(join(K8S, r))).map(d => {
      if (d.errors.length > 0) throw new Error(`${r}: ${d.errors[0].message}`)
      return d.toJS() as Doc
    })
  )
  const find = (kind: string, name: string): Doc | undefined => docs.find(d => d.kind === kind && d.metadata?.name === name)
  const sts = docs.find(d => d.kind === 'StatefulSet')!
  const pod = sts.spec.template.spec
  const container = pod.containers[0]
  const env: Record<string, string> = Object.fromEntries(
    (container.env as Array<{ name: string; value?: string }>).map(e => [e.name, e.value ?? ''])
  )
  const config = find('ConfigMap', container.envFrom[0].configMapRef.name)!

  it('lists only resources that exist, each a named Kubernetes object', () => {
    for (const r of kustomization.resources) expect(existsSync(join(K8S, r)), r).toBe(true)
    for (const d of docs) {
      expect(typeof d.apiVersion).toBe('string')
      expect(typeof d.kind).toBe('string')
      expect(typeof d.metadata?.name).toBe('string')
    }
  })

  it('runs agentd as a StatefulSet behind a headless Service', () => {
    const svc = find('Service', sts.spec.serviceName)!
    expect(svc.spec.clusterIP).toBe('None')
    expect(svc.spec.publishNotReadyAddresses).toBe(true)
    expect(sts.spec.template.metadata.labels).toMatchObject(sts.spec.selector.matchLabels)
    expect(sts.spec.template.metadata.labels).toMatchObject(svc.spec.selector)
  })

  it('bootstraps every pod to pod 0 by its stable name', () => {
    expect(env.AGENCY_PEERS).toMatch(
      new RegExp(`^/dns4/${sts.metadata.name}-0\\.${sts.spec.serviceName}\\.\\$\\(POD_NAMESPACE\\)\\.svc\\.`)
    )
    const p2p = container.ports.find((p: Doc) => p.name === 'p2p').containerPort
    expect(env.AGENCY_PEERS.endsWith(`/tcp/${p2p}`)).toBe(true)
    expect(config.data.AGENCY_LISTEN).toBe(`/ip4/0.0.0.0/tcp/${p2p}`)
  })

  it('keeps identity and LevelDB on a persistent volume per pod', () => {
    const claim = sts.spec.volumeClaimTemplates[0].metadata.name
    const mount = container.volumeMounts.find((m: Doc) => m.name === claim)
    expect(mount.mountPath).toBe(config.data.AGENCY_DATA_DIR)
  })

  it('mounts the swarm key Secret at /etc/agency/swarm.key', () => {
    expect(env.AGENCY_SWARM_KEY).toBe('/etc/agency/swarm.key')
    const volume = pod.volumes.find((v: Doc) => v.secret != null)
    const secret = find('Secret', volume.secret.secretName)!
    expect(Object.keys(secret.stringData ?? secret.data)).toContain('swarm.key')
    expect(volume.secret.items).toEqual([{ key: 'swarm.key', path: 'swarm.key' }])
    expect(container.volumeMounts.find((m: Doc) => m.name === volume.name).mountPath).toBe('/etc/agency')
  })

  it('is scraped by a PodMonitor on the metrics port, and probed on /healthz', () => {
    const pm = docs.find(d => d.kind === 'PodMonitor')!
    expect(sts.spec.template.metadata.labels).toMatchObject(pm.spec.selector.matchLabels)
    const metricsPort = container.ports.find((p: Doc) => p.name === pm.spec.podMetricsEndpoints[0].port)
    expect(metricsPort, 'the PodMonitor port names a container port').toBeDefined()
    expect(config.data.AGENCY_METRICS).toBe(`0.0.0.0:${metricsPort.containerPort}`)
    for (const probe of [container.readinessProbe, container.livenessProbe]) {
      expect(probe.httpGet.path).toBe('/healthz')
      expect(probe.httpGet.port).toBe(metricsPort.name)
    }
  })

  it('serves the shared repository from the git server in the namespace', () => {
    const url = new URL(config.data.AGENCY_REPO)
    expect(url.protocol).toBe('git:')
    const svc = find('Service', url.hostname)!
    expect(svc.spec.ports[0].port).toBe(Number(url.port === '' ? 9418 : url.port))
    const deploy = find('Deployment', 'git')!
    expect(deploy.spec.template.metadata.labels).toMatchObject(svc.spec.selector)
    const daemon = deploy.spec.template.spec.containers[0]
    const base = daemon.command.find((a: string) => a.startsWith('--base-path=')).slice('--base-path='.length)
    expect(deploy.spec.template.spec.initContainers[0].env[0]).toEqual({ name: 'AGENCY_SHARED_REPO', value: `${base}${url.pathname}` })
  })

  it('sets only AGENCY_* variables that agentd knows', () => {
    const used = [...agencyVars(config.data), ...agencyVars(env)]
    expect(used.length).toBeGreaterThan(5)
    expect(used.filter(v => !AGENTD_ENV.includes(v))).toEqual([])
  })

  it('builds with kustomize', async ctx => {
    const kubectl = findTool('kubectl')
    if (kubectl == null) ctx.skip(missingTool('kustomize build of deploy/k8s', 'kubectl', 'kubectl ships kustomize'))
    const { stdout } = await run(kubectl!, ['kustomize', K8S])
    const built = parseAllDocuments(stdout).map(d => d.toJS() as Doc)
    expect(built.length).toBe(docs.length)
    expect(built.every(d => d.kind === 'Namespace' || d.metadata.namespace === kustomization.namespace)).toBe(true)
  })
})

describe('deploy/systemd', () => {
  const unitFile = join(DEPLOY, 'systemd/agentd.service')
  const unit = read(unitFile)
  const directive = (key: string): string | undefined => new RegExp(`^${key}=(.*)$`, 'm').exec(unit)?.[1]
  const envText = read(join(DEPLOY, 'systemd/agentd.env'))

  it('runs agentd from the built package with the environment file', () => {
    expect(directive('ExecStart')).toMatch(/ \S+\/dist\/src\/cli\/agentd\.js$/)
    expect(dirname(directive('EnvironmentFile')!)).toBe('/etc/agency')
    expect(directive('EnvironmentFile')!.endsWith('/agentd.env')).toBe(true)
    expect(directive('KillSignal')).toBe('SIGTERM')
  })

  it("names every agentd flag's variable in agentd.env, and nothing else", () => {
    const named = [...envText.matchAll(/^#?(AGENCY_[A-Z0-9_]+)=/gm)].map(m => m[1])
    expect(AGENTD_ENV.filter(v => !named.includes(v))).toEqual([])
    expect(named.filter(v => !AGENTD_ENV.includes(v))).toEqual([])
  })

  it('sets no variable to an empty value (that would override the default)', () => {
    expect([...envText.matchAll(/^(AGENCY_[A-Z0-9_]+)=\s*$/gm)].map(m => m[1])).toEqual([])
  })

  it('passes `systemd-analyze verify`', async ctx => {
    const analyze = findTool('systemd-analyze')
    if (analyze == null)
      ctx.skip(missingTool('systemd-analyze verify of agentd.service', 'systemd-analyze', 'Debian: apt-get install -y systemd'))
    const node = directive('ExecStart')!.split(' ')[0]
    if (!existsSync(node)) ctx.skip(missingTool('systemd-analyze verify of agentd.service', node, "the unit's ExecStart interpreter"))
    const { stdout, stderr } = await run(analyze!, ['verify', unitFile]).catch((err: { stdout: string; stderr: string }) => err)
    expect(`${stdout}${stderr}`.trim()).toBe('')
  })
})
