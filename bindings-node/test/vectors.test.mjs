// Replays the shared golden wire vectors (tests/vectors) against the Node demo server.
import assert from 'node:assert/strict'
import { readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'

import { buildConformanceServer } from '../../examples/node/conformance.mjs'
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
    if (pattern.startsWith('$capture:')) return typeof actual === 'string'
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

// Strings a case captured in an expectation ("$capture:NAME", e.g. a task id) and uses in later
// steps ("$var:NAME", in what it sends and what it expects).
class Captured {
  values = new Map()

  resolve(value) {
    if (typeof value === 'string' && value.startsWith('$var:')) {
      const name = value.slice(5)
      assert.ok(this.values.has(name), `${value}: nothing captured as ${name} yet`)
      return this.values.get(name)
    }
    if (Array.isArray(value)) return value.map((item) => this.resolve(item))
    if (value !== null && typeof value === 'object') {
      return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, this.resolve(item)]))
    }
    return value
  }

  // After `actual` matched `pattern`: what each "$capture:NAME" stood for (the same string each
  // time a name is captured).
  record(pattern, actual) {
    if (typeof pattern === 'string' && pattern.startsWith('$capture:')) {
      const name = pattern.slice(9)
      if (!this.values.has(name)) this.values.set(name, actual)
      assert.equal(actual, this.values.get(name), `${name} was captured before as another value`)
    } else if (Array.isArray(pattern) && Array.isArray(actual)) {
      pattern.forEach((p, i) => this.record(p, actual[i]))
    } else if (pattern !== null && typeof pattern === 'object' && actual !== null && typeof actual === 'object') {
      for (const [key, p] of Object.entries(pattern)) if (key in actual) this.record(p, actual[key])
    }
  }
}

// The demo of the shared contract, or the conformance server (its tasks fixtures).
function build(vector, options) {
  const server = vector.server ?? 'demo'
  if (server === 'conformance') {
    assert.deepEqual(options, {}, 'the conformance server takes no options here')
    return buildConformanceServer()
  }
  assert.equal(server, 'demo', `unknown server ${server}`)
  return buildServer({ ...options, onToolError() {} })
}

const OPTION_NAMES = { pageSize: 'pageSize', maxFrameBytes: 'maxFrameBytes', maxDepth: 'maxDepth' }

test('there are enough vectors', () => {
  assert.ok(cases.length >= 60, `only ${cases.length} cases`)
})

for (const vector of cases) {
  test(vector.name, async () => {
    const options = {}
    for (const [key, value] of Object.entries(vector.options ?? {})) options[OPTION_NAMES[key]] = value
    const client = new Client(build(vector, options))
    const captured = new Captured()
    if (vector.initialize) {
      const answer = await client.initialize(vector.initialize, vector.clientCapabilities ?? {})
      assert.equal(answer.result.protocolVersion, vector.initialize)
    }
    for (const [index, original] of vector.steps.entries()) {
      const where = `step ${index}`
      const step = captured.resolve(original)
      if ('send' in step) client.send(JSON.stringify(step.send))
      else if ('sendRaw' in step) client.send(step.sendRaw)
      else if ('sendHex' in step) client.connection.handleFrame(Buffer.from(step.sendHex, 'hex'))
      else if ('expect' in step) {
        const got = await client.recv()
        assert.ok(matches(step.expect, got), `${where}: expected ${JSON.stringify(step.expect)}\n got ${JSON.stringify(got)}`)
        captured.record(step.expect, got)
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
          if (matches(step.until, got)) {
            captured.record(step.until, got)
            break
          }
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
