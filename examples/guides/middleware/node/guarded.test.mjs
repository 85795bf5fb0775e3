import assert from 'node:assert/strict'
import { test } from 'node:test'

import { McpError, connect } from 'toolwire/testing'

import { audit, server } from './guarded.mjs'

test('the rule, the audit and the metrics', async () => {
  const client = await connect(server)
  try {
    assert.equal((await client.callTool('ping')).content[0].text, 'pong')
    // A test client has no principal.
    await assert.rejects(client.callTool('wipe'), (err) => err instanceof McpError && err.code === -32001)
  } finally {
    await client.close()
  }
  assert.deepEqual(audit, ['tools/call ping: result']) // the refused call never reached next()
  // The engine's own counters: a JSON snapshot, and Prometheus text for a /metrics route.
  const metrics = server.metrics()
  assert.deepEqual(metrics.methods['tools/call'].outcomes, { result: 1, refused: 1 })
  assert.deepEqual(metrics.tools.ping.outcomes, { result: 1 })
  assert.match(server.metricsText(), /^toolwire_tool_calls_total\{tool="ping",outcome="result"\} 1$/m)
})
