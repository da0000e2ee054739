// `npm run test:deploy` (test/deploy/run.sh) runs this: the deploy/ tests that
// need dockerd and images, kept out of `npm test` (their files end in .deploy.ts).
import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    root: fileURLToPath(new URL('../..', import.meta.url)),
    include: ['test/deploy/**/*.deploy.ts'],
    testTimeout: 600_000,
    hookTimeout: 600_000,
    pool: 'forks',
    maxWorkers: 1,
    fileParallelism: false
  }
})
