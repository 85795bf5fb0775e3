// Replays the shared golden wire vectors (tests/vectors) against the Node demo server, with
// core's replayer (`replayVector` from toolwire/testing): the format is read once, for every
// language.
import assert from 'node:assert/strict'
import { readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'

import { buildConformanceServer } from '../../examples/node/conformance.mjs'
import { buildServer } from '../../examples/node/demo.mjs'
import { replayVector } from '../lib/testing.mjs'

/**
 * Each case's own JSON text, cut from its file (`{"cases": [case, …]}`): replayed as written,
 * since JSON.parse would round an integer beyond 2^53 (jsonrpc/large-integer-id's id).
 */
function caseTexts(text) {
  const texts = []
  let depth = 0
  let start = -1
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (c === '"') {
      // Past the string: a backslash escapes the character after it.
      for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === '\\') i++
    } else if (c === '{' || c === '[') {
      // Depth 2 is inside the cases array.
      if (depth++ === 2) start = i
    } else if ((c === '}' || c === ']') && --depth === 2) {
      texts.push(text.slice(start, i + 1))
    }
  }
  return texts
}

const dir = join(import.meta.dirname, '..', '..', 'tests', 'vectors')
const cases = readdirSync(dir)
  .filter((name) => name.endsWith('.json'))
  .sort()
  .flatMap((name) => {
    const text = readFileSync(join(dir, name), 'utf8')
    const parsed = JSON.parse(text).cases
    const texts = caseTexts(text)
    assert.deepEqual(texts.map((t) => JSON.parse(t)), parsed, `${name}: each case's text cut as its cases`)
    return parsed.map((vector, i) => ({ vector, text: texts[i] }))
  })

// The demo of the shared contract, or the conformance server (its tasks fixtures).
function build(vector) {
  const options = vector.options ?? {}
  const server = vector.server ?? 'demo'
  if (server === 'conformance') {
    assert.deepEqual(options, {}, 'the conformance server takes no options here')
    return buildConformanceServer()
  }
  assert.equal(server, 'demo', `unknown server ${server}`)
  // The vectors' option names (pageSize, maxFrameBytes, maxDepth) are the Server's.
  return buildServer({ ...options, onToolError() {} })
}

test('there are enough vectors', () => {
  assert.ok(cases.length >= 60, `only ${cases.length} cases`)
})

for (const { vector, text } of cases) {
  test(vector.name, () => replayVector(build(vector), text))
}
