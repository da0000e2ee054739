// The test results in a JUnit XML document, read the way ProgramBench reads
// eval/results.xml (ElementTree for the XML, junitparser for the structure):
//
// - empty (or whitespace-only) text is EmptyTestResultError; text that is not
//   well-formed XML is XmlParseError; a root other than <testsuites> or
//   <testsuite> is JUnitXmlError. The scorer turns each into a score of 0 with
//   that name as the reason, as ProgramBench does for an error it did not plan for.
// - the cases are the <testcase> children of each top-level <testsuite> (a bare
//   <testsuite> root counts as one), then those of nested suites, depth first.
// - a case's results are the <failure>, <error> and <skipped> elements anywhere
//   inside it; none means passed; several of one kind count as one; several of
//   different kinds are a system_error.
// - its name is "<classname>.<name>", or the name alone when there is no classname;
//   a case with neither is left out.
import { SaxesParser, type SaxesTagNS } from 'saxes'

export type TestStatus = 'passed' | 'skipped' | 'failure' | 'error' | 'system_error' | 'not_run'

export interface ParsedCase {
  name: string
  status: TestStatus
  message?: string
}

/** A reason the whole evaluation stops, named as ProgramBench names it. */
export class JUnitReadError extends Error {
  readonly code: 'EmptyTestResultError' | 'XmlParseError' | 'JUnitXmlError'
  constructor(code: JUnitReadError['code'], message: string) {
    super(message)
    this.code = code
    this.name = code
  }
}

interface XmlElement {
  /** "{uri}local" for a namespaced element, as ElementTree names it */
  tag: string
  attrs: Map<string, string>
  children: XmlElement[]
  /** the text before the first child */
  text: string
}

const RESULT_TAGS = new Set(['failure', 'error', 'skipped'])

/** Parses well-formed XML into a tree; throws XmlParseError with the parser's message otherwise. */
export function parseXml(xml: string, what: string): XmlElement {
  const parser = new SaxesParser({ xmlns: true, position: true })
  const stack: XmlElement[] = []
  let root: XmlElement | undefined
  let failure: Error | undefined
  parser.on('error', err => {
    failure ??= err
  })
  parser.on('opentag', (node: SaxesTagNS) => {
    const attrs = new Map<string, string>()
    for (const a of Object.values(node.attributes)) {
      attrs.set(a.uri !== '' ? `{${a.uri}}${a.local}` : a.local, a.value)
    }
    const el: XmlElement = { tag: node.uri !== '' ? `{${node.uri}}${node.local}` : node.local, attrs, children: [], text: '' }
    const parent = stack.at(-1)
    if (parent != null) parent.children.push(el)
    else root = el
    stack.push(el)
  })
  const onText = (text: string): void => {
    const top = stack.at(-1)
    if (top != null && top.children.length === 0) top.text += text
  }
  parser.on('text', onText)
  parser.on('cdata', onText)
  parser.on('closetag', () => {
    stack.pop()
  })
  try {
    parser.write(xml).close()
  } catch (err) {
    failure ??= err as Error
  }
  if (failure != null || root == null) {
    const tail = xml.slice(-200)
    throw new JUnitReadError(
      'XmlParseError',
      `Malformed test results XML for branch ${JSON.stringify(what)}: ${failure?.message ?? 'no root element'} (len=${xml.length}, tail=${JSON.stringify(tail)})`
    )
  }
  return root
}

/** The test cases of a results document, for one branch. */
export function readJUnitCases(xml: string, branch: string): ParsedCase[] {
  if (xml.trim() === '') throw new JUnitReadError('EmptyTestResultError', `Empty test results XML for branch ${JSON.stringify(branch)}`)
  const root = parseXml(xml, branch)
  const suites =
    root.tag === 'testsuite' ? [root] : root.tag === 'testsuites' ? root.children.filter(c => c.tag === 'testsuite') : undefined
  if (suites == null)
    throw new JUnitReadError(
      'JUnitXmlError',
      `Invalid format: the root element of the test results of branch ${JSON.stringify(branch)} is <${root.tag}>, not <testsuites> or <testsuite>`
    )
  const cases: ParsedCase[] = []
  for (const suite of suites) {
    for (const c of casesOf(suite)) {
      const parsed = readCase(c)
      if (parsed != null) cases.push(parsed)
    }
  }
  return cases
}

function* casesOf(suite: XmlElement): Generator<XmlElement> {
  for (const c of suite.children) if (c.tag === 'testcase') yield c
  for (const s of suite.children) if (s.tag === 'testsuite') yield* casesOf(s)
}

function* descendants(el: XmlElement): Generator<XmlElement> {
  for (const c of el.children) {
    yield c
    yield* descendants(c)
  }
}

function readCase(c: XmlElement): ParsedCase | null {
  const classname = c.attrs.get('classname')
  const rawName = c.attrs.get('name')
  // Python's f"{classname}.{name}" writes a missing name as "None".
  const name = classname != null && classname !== '' ? `${classname}.${rawName ?? 'None'}` : rawName
  if (name == null || name === '') return null
  let results = [...descendants(c)].filter(d => RESULT_TAGS.has(d.tag))
  if (results.length > 1 && new Set(results.map(r => r.tag)).size === 1) results = [results[0]]
  if (results.length === 0) return { name, status: 'passed' }
  if (results.length > 1)
    return {
      name,
      status: 'system_error',
      message: `Expected 1 result for ${name}, got ${results.length}: ${results.map(r => `<${r.tag}>`).join(', ')}`
    }
  const r = results[0]
  const status: TestStatus = r.tag === 'skipped' ? 'skipped' : r.tag === 'failure' ? 'failure' : 'error'
  const message = [r.attrs.get('message') ?? '', r.text.trim()].filter(s => s !== '').join('\n')
  return message !== '' ? { name, status, message } : { name, status }
}

/** Cases whose <error> or <failure> reports a crashed pytest-xdist worker (0 for unreadable XML). */
export function countWorkerCrashes(xml: string): number {
  if (xml.trim() === '' || !xml.includes("worker '")) return 0
  let root: XmlElement
  try {
    root = parseXml(xml, '')
  } catch {
    return 0
  }
  let n = 0
  for (const c of [root, ...descendants(root)].filter(e => e.tag === 'testcase')) {
    const crashed = c.children.some(
      r =>
        (r.tag === 'error' || r.tag === 'failure') &&
        /worker '/.test(`${r.attrs.get('message') ?? ''} ${r.text}`) &&
        /crashed/.test(`${r.attrs.get('message') ?? ''} ${r.text}`)
    )
    if (crashed) n++
  }
  return n
}

/** Every <testcase> in the document (0 for unreadable XML). */
export function countTestCases(xml: string): number {
  if (xml.trim() === '') return 0
  try {
    const root = parseXml(xml, '')
    return [root, ...descendants(root)].filter(e => e.tag === 'testcase').length
  } catch {
    return 0
  }
}
