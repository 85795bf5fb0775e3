import assert from 'node:assert/strict'
import { test } from 'node:test'

import { server } from './notes-http.mjs'

test('any HTTP client speaks to it: JSON-RPC in a POST', async () => {
  // Port 0: a free one. jsonResponse: every answer one JSON body (by default one that is not
  // ready at once streams as SSE, with the call's progress and logs before it).
  const http = await server.serveHttp('127.0.0.1', 0, { jsonResponse: true })
  try {
    const post = async (message, session) => {
      const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }
      if (session) Object.assign(headers, { 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' })
      return fetch(http.url, { method: 'POST', headers, body: JSON.stringify(message) })
    }
    const clientInfo = { name: 'fetch', version: '1' }
    const init = await post({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo } })
    const session = init.headers.get('mcp-session-id') // the session the server opened
    assert.equal((await init.json()).result.serverInfo.name, 'notes')
    assert.equal((await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, session)).status, 202)
    const call = await post({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'add_note', arguments: { text: 'buy milk' } } }, session)
    assert.equal(call.headers.get('content-type'), 'application/json')
    assert.equal((await call.json()).result.content[0].text, '1 notes')
  } finally {
    await http.close()
  }
})
