// `server.toolSearch(...)`: a large catalog offered through `search_tools` and `call_tool`; the
// search ranks what the client may see, `call_tool` is the named tool's own call (middleware
// sees that tool), and every tool stays callable by its name.
import { test } from 'node:test'
import assert from 'node:assert/strict'

import { Server, ToolError } from '../lib/index.mjs'
import { Client } from './client.mjs'

// --8<-- [start:server]
function bigServer() {
  const server = new Server({ name: 'big', version: '1' })
    .tool('help', { description: 'What this server can do.' }, () => 'search for a tool, then call it')
    .tool('send_email', {
      title: 'Send an email',
      description: 'Sends a message to one recipient.',
      inputSchema: { type: 'object', properties: { to: { type: 'string' } }, required: ['to'] },
    }, ({ to }) => `sent to ${to}`)
    .tool('payroll_export', { description: 'Exports the payroll as CSV.', requiredScopes: ['hr'] }, () => 'name,salary')
  for (let n = 0; n < 300; n++) {
    server.tool(`metric_${n}`, { description: `Reads metric number ${n}.` }, () => `metric ${n} is 42`)
  }
  // Lists `help`, `search_tools` and `call_tool`; finds any of the others.
  return server.toolSearch({ pinned: ['help'], maxResults: 3 })
}
// --8<-- [end:server]

const names = (tools) => tools.map((tool) => tool.name)

async function request(client, id, method, params) {
  client.send({ jsonrpc: '2.0', id, method, params })
  for (;;) {
    const frame = await client.recv()
    if (frame.id === id) return frame
  }
}

test('the listing offers the search, which finds and calls', async () => {
  const client = new Client(bigServer())
  await client.initialize()
  const listed = await request(client, 1, 'tools/list', {})
  assert.deepEqual(names(listed.result.tools), ['call_tool', 'help', 'search_tools'])

  const found = await client.callResult(2, 'search_tools', { query: 'email someone' })
  assert.equal(found.structuredContent.tools[0].name, 'send_email')
  assert.deepEqual(found.structuredContent.tools[0].inputSchema.required, ['to'])
  assert.equal((await client.callResult(3, 'search_tools', { query: 'metric' })).structuredContent.tools.length, 3)
  const exact = await client.callResult(4, 'search_tools', { query: 'metric_42', limit: 1 })
  assert.deepEqual(names(exact.structuredContent.tools), ['metric_42'])

  const called = await client.callResult(5, 'call_tool', { name: 'send_email', arguments: { to: 'ada' } })
  assert.equal(called.content[0].text, 'sent to ada')
  assert.equal((await client.callResult(6, 'metric_7')).content[0].text, 'metric 7 is 42')
  assert.equal((await client.callResult(7, 'search_tools', { query: 'x', limit: 9 })).isError, true)
  client.call(8, 'call_tool', { name: 'no_such' })
  assert.equal((await client.recv()).error.message, 'Unknown tool: no_such')
})

test('a client finds only what it may see, and middleware sees the tool call_tool calls', async () => {
  const server = bigServer().middleware(async (request, next) => {
    if (request.name === 'send_email') throw new ToolError('email is off today')
    await next()
  })
  const client = new Client(server)
  await client.initialize()
  const found = await client.callResult(1, 'search_tools', { query: 'payroll' })
  assert.deepEqual(found.structuredContent.tools, [])
  client.call(2, 'call_tool', { name: 'payroll_export' })
  assert.equal((await client.recv()).error.message, 'Unknown tool: payroll_export')
  const refused = await client.callResult(3, 'call_tool', { name: 'send_email', arguments: { to: 'ada' } })
  assert.equal(refused.isError, true)
  assert.equal(refused.content[0].text, 'email is off today')
})

test('the search can be turned off, and bad settings are refused', async () => {
  const server = bigServer()
  assert.throws(() => server.toolSearch({ maxResults: 0 }), /max_results/)
  assert.throws(() => server.toolSearch({ maxResult: 3 }), /maxResult/)
  assert.throws(() => server.toolSearch('yes'), /takes an object/)
  assert.throws(() => server.tool('search_tools', () => 'mine'), /search_tools/)
  server.toolSearch(null)
  const client = new Client(server)
  await client.initialize()
  // Every tool but payroll_export, which this client may not see.
  assert.equal((await request(client, 1, 'tools/list', {})).result.tools.length, 302)
  server.tool('call_tool', () => 'mine')
  assert.throws(() => server.toolSearch(), /call_tool/)
  server.toolSearch({ callToolName: 'invoke' })
})
