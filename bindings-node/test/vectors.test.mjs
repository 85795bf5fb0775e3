// Replays the shared golden wire vectors (tests/vectors) against the Node demo server.
import assert from 'node:assert/strict'
import { readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'

import { buildServer } from '../../examples/node/demo.mjs'
import { Client } from './client.mjs'

const dir = join(import.meta.dirname, '..', '..', 'tests', 'vectors')
const cases = readdirSync(dir)
  .filter((name) => name.endsWith('.json'))
  .sort()
  .flatMap((name) => JSON.parse(readFileSync(join(dir, name), 'utf8')).cases)

function matches(pattern, actual) {
  if (typeof pattern === 'string') {
    if (pattern === '$any') return true
    if (pattern === '$string') return typeof actual === 'string'
    if (pattern === '$number') return typeof actual === 'number'
    if (pattern.startsWith('$prefix:')) return typeof actual === 'string' && actual.startsWith(pattern.slice(8))
  }
  if (Array.isArray(pattern)) {
    return Array.isArray(actual) && pattern.length === actual.length && pattern.every((p, i) => matches(p, actual[i]))
  }
  if (pattern !== null && typeof pattern === 'object') {
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) return false
    const keys = Object.keys(pattern)
    return keys.length === Object.keys(actual).length && keys.every((k) => k in actual && matches(pattern[k], actual[k]))
  }
  return pattern === actual
}

function matchesUnordered(patterns, actual) {
  if (patterns.length !== actual.length) return false
  const used = actual.map(() => false)
  return patterns.every((p) => {
    const i = actual.findIndex((a, j) => !used[j] && matches(p, a))
    if (i < 0) return false
    used[i] = true
    return true
  })
}

const OPTION_NAMES = { pageSize: 'pageSize', maxFrameBytes: 'maxFrameBytes', maxDepth: 'maxDepth' }

test('there are enough vectors', () => {
  assert.ok(cases.length >= 60, `only ${cases.length} cases`)
})

for (const vector of cases) {
  test(vector.name, async () => {
    const options = {}
    for (const [key, value] of Object.entries(vector.options ?? {})) options[OPTION_NAMES[key]] = value
    const client = new Client(buildServer({ ...options, onToolError() {} }))
    if (vector.initialize) {
      const answer = await client.initialize(vector.initialize, vector.clientCapabilities ?? {})
      assert.equal(answer.result.protocolVersion, vector.initialize)
    }
    for (const [index, step] of vector.steps.entries()) {
      const where = `step ${index}`
      if ('send' in step) client.send(JSON.stringify(step.send))
      else if ('sendRaw' in step) client.send(step.sendRaw)
      else if ('sendHex' in step) client.connection.handleFrame(Buffer.from(step.sendHex, 'hex'))
      else if ('expect' in step) {
        const got = await client.recv()
        assert.ok(matches(step.expect, got), `${where}: expected ${JSON.stringify(step.expect)}\n got ${JSON.stringify(got)}`)
      } else if ('expectUnordered' in step) {
        const got = []
        for (let i = 0; i < step.expectUnordered.length; i++) got.push(await client.recv())
        assert.ok(matchesUnordered(step.expectUnordered, got), `${where}: got ${JSON.stringify(got)}`)
      } else if ('expectUnorderedArray' in step) {
        const got = await client.recv()
        assert.ok(Array.isArray(got) && matchesUnordered(step.expectUnorderedArray, got), `${where}: got ${JSON.stringify(got)}`)
      } else if ('collect' in step) {
        let seen = 0
        for (;;) {
          const got = await client.recv()
          if (matches(step.until, got)) break
          assert.ok(matches(step.collect, got), `${where}: unexpected ${JSON.stringify(got)}`)
          seen++
        }
        assert.ok(seen >= (step.min ?? 0) && seen <= (step.max ?? Infinity), `${where}: collected ${seen}`)
      } else {
        assert.fail(`unknown step ${JSON.stringify(step)}`)
      }
    }
    const rest = await client.finish()
    assert.deepEqual(rest, [], 'unexpected frames after the last step')
  })
}
