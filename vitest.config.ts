import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    setupFiles: ['./src/polyfill.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Multi-process tests start real daemons; two cores in CI.
    maxWorkers: 2,
    fileParallelism: true
  }
})
