// A CPU profiler preloaded into the TCP mesh benchmark's processes (Node 20
// does not take --cpu-prof in NODE_OPTIONS):
//
//   BENCH_AGENTD_NODE_OPTIONS="--require $PWD/test/bench/cpu-profiler.cjs" \
//   BENCH_RAW_NODE_OPTIONS="--require $PWD/test/bench/cpu-profiler.cjs" \
//   BENCH_PROFILE_DIR=/tmp/prof npm run bench:mesh -- --sizes '' --tcp 10
//
// Each process profiles its whole life and writes <dir>/<pid>.cpuprofile as
// it exits. The benchmark sends SIGUSR2 to each daemon as a phase starts and
// ends (idle, then publishing): the daemon appends the time, on the monotonic
// clock the profile's timestamps use (microseconds), to <dir>/<pid>.marks,
// so the profile can be cut into start-up, idle and publishing (the raw
// nodes get no signal: cut theirs at a daemon's marks, the clock is the
// machine's).
'use strict'
const { Session } = require('node:inspector')
const { appendFileSync, mkdirSync, writeFileSync } = require('node:fs')
const { join } = require('node:path')

const dir = process.env.BENCH_PROFILE_DIR || '/tmp/agentd-profiles'
mkdirSync(dir, { recursive: true })
const session = new Session()
session.connect()
// A session in the same thread answers at once: the callbacks run before post returns.
session.post('Profiler.enable')
session.post('Profiler.setSamplingInterval', { interval: 500 })
session.post('Profiler.start')
process.on('SIGUSR2', () => {
  appendFileSync(join(dir, `${process.pid}.marks`), `${Number(process.hrtime.bigint() / 1000n)}\n`)
})
process.on('exit', () => {
  session.post('Profiler.stop', (err, res) => {
    if (err == null) writeFileSync(join(dir, `${process.pid}.cpuprofile`), JSON.stringify(res.profile))
  })
})
