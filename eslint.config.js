// Lint: typescript-eslint's type-checked recommendations (floating and misused
// promises, awaiting what is no promise, unsafe any) plus a line width a
// reader takes in without scrolling. The layout is prettier's (`npm run
// format`; `npm run lint` checks it first); the width rule catches what
// prettier leaves long: comments. Strings and template literals are not
// broken up for it. `npm run lint`; .ci/run runs it before the tests.
import js from '@eslint/js'
import stylistic from '@stylistic/eslint-plugin'
import { defineConfig } from 'eslint/config'
import tseslint from 'typescript-eslint'

const WIDTH = 140

export default defineConfig(
  // Generated code, build output, and the example projects the agents work on.
  { ignores: ['dist/**', 'node_modules/**', 'src/gen/**', 'src/ui/page/dist/**', 'src/ui/page/vite.config.ts', 'examples/**', '**/*.js', '**/*.mjs', '**/*.cjs'] },
  {
    files: ['**/*.ts'],
    extends: [js.configs.recommended, tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname }
    },
    plugins: { '@stylistic': stylistic },
    rules: {
      '@stylistic/max-len': ['error', { code: WIDTH, ignoreUrls: true, ignoreRegExpLiterals: true, ignoreStrings: true, ignoreTemplateLiterals: true }],
      // Every method taken off a client here goes through Agency.call
      // (`a.call(c => c.getStatus, {})`), which calls it on its client; the
      // rule cannot see that, and flags each of them.
      '@typescript-eslint/unbound-method': 'off',
      // An async function with no await still returns the promise its
      // interface promises (gRPC and MCP handlers); not a bug.
      '@typescript-eslint/require-await': 'off',
      // A leading underscore marks a binding kept for its position.
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }]
    }
  },
  {
    // Tests read the CLI's JSON output and reach into replies and internals;
    // typing each such value would restate what the assertion checks.
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off'
    }
  }
)
