// server.metrics() and server.metricsText(): calls counted by tool and outcome in both eras,
// serveHttp's metricsPath serving the Prometheus text, and metrics turned off.
import assert from 'node:assert/strict'
import { test } from 'node:test'

import { z } from 'zod'

import { Server } from '../lib/index.mjs'
import { McpError, connect } from '../lib/testing.mjs'

function meteredServer(options = {}) {
  const server = new Server({ name: 'metered', version: '1.0.0', ...options })
  server.tool('echo', { inputSchema: { text: z.string() } }, ({ text }) => text)
  server.tool('fail', () => {
    throw new Error('broken')
  })
  return server
}

for (const protocolVersion of ['2025-11-25', '2026-07-28']) {
  test(`${protocolVersion}: calls are counted by tool and by how they ended`, async () => {
    const server = meteredServer()
    const client = await connect(server, { protocolVersion })
    assert.equal((await client.callTool('echo', { text: 'hi' })).content[0].text, 'hi')
    assert.equal((await client.callTool('echo', { text: 3 })).isError, true)
    assert.equal((await client.callTool('fail', {})).isError, true)
    const unknown = await client.callTool('nope', {}).catch((e) => e)
    assert.ok(unknown instanceof McpError && unknown.code === -32602, String(unknown))

    const metrics = server.metrics()
    assert.equal(metrics.enabled, true)
    assert.deepEqual(metrics.tools.echo.outcomes, { result: 1, tool_error: 1 })
    assert.deepEqual(metrics.tools.fail.outcomes, { tool_error: 1 })
    assert.equal(metrics.tools.nope, undefined)
    const calls = metrics.methods['tools/call']
    assert.equal(calls.calls, 4)
    assert.equal(calls.outcomes.invalid_params, 1)
    assert.equal(calls.inFlight, 0)
    assert.equal(calls.latency.count, 4)
    assert.deepEqual(calls.latency.buckets.at(-1), { le: 10, count: 4 })
    assert.equal(metrics.sessions, protocolVersion === '2025-11-25' ? 1 : 0)

    const lines = server.metricsText().split('\n')
    assert.ok(lines.includes('toolwire_tool_calls_total{tool="echo",outcome="result"} 1'), lines.join('\n'))
    assert.ok(lines.includes('toolwire_tool_call_duration_seconds_count{tool="echo"} 2'))
    await client.close()
  })
}

test('serveHttp with metricsPath serves the Prometheus text; metrics can be off', async () => {
  const server = meteredServer()
  const http = await server.serveHttp('127.0.0.1', 0, { metricsPath: '/metrics' })
  try {
    const scraped = await fetch(http.url.replace(/\/mcp$/, '/metrics'))
    assert.equal(scraped.status, 200)
    assert.equal(scraped.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8')
    const lines = (await scraped.text()).split('\n')
    assert.ok(lines.includes('toolwire_sessions 0'), lines.join('\n'))
    assert.ok(lines.includes('# TYPE toolwire_tool_calls_total counter'))
    const posted = await fetch(http.url.replace(/\/mcp$/, '/metrics'), { method: 'POST', body: '{}' })
    assert.equal(posted.status, 405)
  } finally {
    await http.close()
  }

  const quiet = meteredServer({ metrics: false })
  const client = await connect(quiet)
  await client.callTool('echo', { text: 'hi' })
  await client.close()
  assert.equal(quiet.metrics().enabled, false)
  assert.deepEqual(quiet.metrics().tools, {})
})
