// The caller's W3C trace context reaches a tool's ctx.traceContext in both eras (from the
// request's _meta) and over HTTP (from the traceparent header), for a tracer of the app's own
// (e.g. @opentelemetry/api's propagation.extract) to continue.
import assert from 'node:assert/strict'
import { test } from 'node:test'

import { Server } from '../lib/index.mjs'
import { connect } from '../lib/testing.mjs'

const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'

function tracedServer() {
  const server = new Server({ name: 'traced', version: '1.0.0' })
  server.tool('context', (_args, ctx) => ({ ...ctx.traceContext }))
  return server
}

for (const protocolVersion of ['2025-11-25', '2026-07-28']) {
  test(`${protocolVersion}: ctx.traceContext is the request's _meta trace context`, async () => {
    const client = await connect(tracedServer(), { protocolVersion })
    const result = await client.request('tools/call', {
      name: 'context',
      arguments: {},
      _meta: { traceparent: TRACEPARENT, tracestate: 'vendor=1' },
    })
    assert.equal(result.structuredContent.traceparent, TRACEPARENT)
    assert.equal(result.structuredContent.tracestate, 'vendor=1')
    const none = await client.callTool('context', {})
    assert.equal(none.structuredContent.traceparent, null)
    await client.close()
  })
}

test('over HTTP the traceparent header is the trace context', async () => {
  const http = await tracedServer().serveHttp('127.0.0.1', 0, { stateless: true, jsonResponse: true })
  try {
    const reply = await fetch(http.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-11-25',
        traceparent: TRACEPARENT,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'context', arguments: {} } }),
    })
    assert.equal(reply.status, 200)
    const answer = await reply.json()
    assert.equal(answer.result.structuredContent.traceparent, TRACEPARENT)
  } finally {
    await http.close()
  }
})
