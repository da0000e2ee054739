// The tiny projects the real-agent tests build, and the playbooks the scripted
// models follow for them: what files a task needs is the one thing the script
// is told, the way a real model would know how to write a greet function.
import type { Playbook } from './models/agent-script.js'

// TAP, which the daemon's test-result parser reads, whatever Node's default reporter is.
export const TEST_COMMAND = 'node --test --test-reporter=tap'

const PACKAGE_JSON =
  JSON.stringify({ name: 'greetings', version: '0.0.0', private: true, type: 'module', scripts: { test: TEST_COMMAND } }, null, 2) + '\n'

const greetTest = [
  "import { test } from 'node:test'",
  "import assert from 'node:assert/strict'",
  "import { greet } from '../greet.js'",
  '',
  "test('greet says hello to the name', () => {",
  "  assert.equal(greet('Ada'), 'Hello, Ada!')",
  '})',
  ''
].join('\n')

const shoutTest = [
  "import { test } from 'node:test'",
  "import assert from 'node:assert/strict'",
  "import { shout } from '../shout.js'",
  '',
  "test('shout upper-cases and adds an exclamation mark', () => {",
  "  assert.equal(shout('hi'), 'HI!')",
  '})',
  ''
].join('\n')

const welcomeTest = [
  "import { test } from 'node:test'",
  "import assert from 'node:assert/strict'",
  "import { welcome } from '../welcome.js'",
  '',
  "test('welcome shouts the greeting', () => {",
  "  assert.equal(welcome('Ada'), 'HELLO, ADA!!')",
  '})',
  ''
].join('\n')

const GREET_SOLUTION = 'export function greet (name) {\n  return `Hello, ${name}!`\n}\n'

/**
 * The one-task project (greeter-scenario.ts): a test for a greet function that
 * does not exist yet, a goal whose test command is TEST_COMMAND, and one task.
 */
export const GREETER = {
  goal: 'A greet function: greet(name) returns "Hello, <name>!" (src/greet.js).',
  task: {
    id: 'greet',
    title: 'greet function',
    description: 'Write src/greet.js exporting greet(name), which returns "Hello, <name>!".',
    scope: ['src/**']
  },
  files: {
    'package.json': JSON.stringify({ name: 'greeter', private: true, type: 'module' }, null, 2) + '\n',
    'README.md': '# greeter\n\nA function that says hello.\n',
    'test/greet.test.js': greetTest.replace('../greet.js', '../src/greet.js')
  } as Record<string, string>,
  /** What greet.js holds once the task is done. */
  solution: GREET_SOLUTION,
  /** The scripted model writes the file, the tests pass. */
  playbook: { work: { greet: [[{ path: 'src/greet.js', content: GREET_SOLUTION }]] } } satisfies Playbook,
  /** The first attempt forgets the punctuation; the tests catch it and an edit fixes it. */
  redFirstPlaybook: {
    work: {
      greet: [
        [{ path: 'src/greet.js', content: 'export function greet (name) {\n  return `Hello ${name}`\n}\n' }],
        [{ path: 'src/greet.js', find: 'return `Hello ${name}`', replace: 'return `Hello, ${name}!`' }]
      ]
    }
  } satisfies Playbook
}

/** A goal with no tasks: whoever holds `plan` splits it into three, the third depending on the other two. */
const SEED = {
  'package.json': PACKAGE_JSON,
  'README.md': '# greetings\n\nA tiny library the swarm writes. `npm test` runs the tests.\n'
}

export const WELCOME = {
  goal: 'A greetings library: greet(name) -> "Hello, <name>!" in greet.js, shout(text) -> upper case plus "!" in shout.js, and welcome(name) = shout(greet(name)) in welcome.js, each with its test under test/.',
  files: SEED,
  playbook: {
    plan: [
      {
        id: 'greet',
        title: 'greet(name) in greet.js',
        description: 'greet.js: greet(name) returns "Hello, <name>!"; test/greet.test.js.',
        scope: ['greet.js', 'test/greet.test.js']
      },
      {
        id: 'shout',
        title: 'shout(text) in shout.js',
        description: 'shout.js: shout(text) returns text upper-cased plus "!"; test/shout.test.js.',
        scope: ['shout.js', 'test/shout.test.js']
      },
      {
        id: 'welcome',
        title: 'welcome(name) in welcome.js',
        description: 'welcome.js: welcome(name) = shout(greet(name)); test/welcome.test.js.',
        deps: ['greet', 'shout'],
        scope: ['welcome.js', 'test/welcome.test.js']
      }
    ],
    work: {
      greet: [
        [
          { path: 'greet.js', content: GREET_SOLUTION },
          { path: 'test/greet.test.js', content: greetTest }
        ]
      ],
      shout: [
        [
          { path: 'shout.js', content: 'export function shout (text) {\n  return `${text.toUpperCase()}!`\n}\n' },
          { path: 'test/shout.test.js', content: shoutTest }
        ]
      ],
      welcome: [
        [
          {
            path: 'welcome.js',
            content:
              "import { greet } from './greet.js'\nimport { shout } from './shout.js'\n\nexport function welcome (name) {\n  return shout(greet(name))\n}\n"
          },
          { path: 'test/welcome.test.js', content: welcomeTest }
        ]
      ]
    }
  } satisfies Playbook
}
