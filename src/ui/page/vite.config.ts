// Builds the dashboard page into dist/ui (npm run build): one HTML file and
// hashed assets that agentd serves itself; nothing is loaded from elsewhere.
import { defineConfig } from 'vite'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('.', import.meta.url))

export default defineConfig({
  root,
  base: './',
  logLevel: 'warn',
  publicDir: false,
  build: {
    outDir: fileURLToPath(new URL('../../../dist/ui', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
    // A single script: no module preload helper, no inline script for the CSP to refuse.
    modulePreload: false,
    assetsInlineLimit: 0,
    chunkSizeWarningLimit: 300
  }
})
