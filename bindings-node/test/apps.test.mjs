// MCP Apps (SEP-1865) from JavaScript: the greeter example's view and tools (examples/apps), what a
// client that renders views sees and what one that does not sees, and what registration refuses.
import { test } from 'node:test'
import assert from 'node:assert/strict'

import { Server, ToolwireError } from '../lib/index.js'
import { VIEW_URI, addGreeter } from '../../examples/node/greeter.mjs'
import { Client } from './client.mjs'

const UI = 'io.modelcontextprotocol/ui'
const MIME = 'text/html;profile=mcp-app'
const RENDERS = { extensions: { [UI]: { mimeTypes: [MIME] } } }

async function request(client, id, method, params = {}) {
  client.send({ jsonrpc: '2.0', id, method, params })
  return client.recv()
}

const greeter = () => addGreeter(new Server({ name: 'greeter', version: '1' }))

test('a client that renders views gets the view and every tool', async () => {
  const client = new Client(greeter())
  const init = await client.initialize('2025-11-25', RENDERS)
  assert.deepEqual(init.result.capabilities.extensions[UI], {})
  const { tools } = (await request(client, 1, 'tools/list')).result
  assert.deepEqual(tools.map((t) => t.name), ['say_hello', 'shout'])
  assert.deepEqual(tools[1]._meta, { ui: { resourceUri: VIEW_URI, visibility: ['app'] }, 'ui/resourceUri': VIEW_URI })
  const [view] = (await request(client, 2, 'resources/read', { uri: VIEW_URI })).result.contents
  assert.equal(view.mimeType, MIME)
  assert.match(view.text, /^<!DOCTYPE html>/)
  client.call(3, 'say_hello', { name: 'Ada' })
  assert.deepEqual((await client.recv()).result.structuredContent, { greeting: 'Hello, Ada!', name: 'Ada' })
  client.call(4, 'shout', { text: 'hi' })
  assert.deepEqual((await client.recv()).result.structuredContent, { shouted: 'HI' })
})

test('a client without views gets text and never the app-only tool', async () => {
  const client = new Client(greeter())
  await client.initialize()
  const { tools } = (await request(client, 1, 'tools/list')).result
  assert.deepEqual(tools.map((t) => t.name), ['say_hello'])
  client.call(2, 'say_hello', { name: 'Ada' })
  const answer = (await client.recv()).result
  assert.deepEqual(answer.content, [{ type: 'text', text: 'Hello, Ada!' }])
  assert.equal(answer.structuredContent, undefined)
  client.call(3, 'shout', { text: 'hi' })
  assert.deepEqual((await client.recv()).error, { code: -32602, message: 'Unknown tool: shout' })
})

test('what the spec forbids is refused, naming it', () => {
  const server = new Server({ name: 'apps', version: '1' })
  const refused = (pattern) => (err) => err instanceof ToolwireError && err.code === 'TOOLWIRE_REGISTRATION' && pattern.test(err.message)
  assert.throws(() => server.uiResource('https://apps/view.html', { html: '<!DOCTYPE html>' }), refused(/ui:\/\/ URI/))
  assert.throws(() => server.uiResource('ui://apps/view.html', { html: '<p>x</p>' }), refused(/HTML5 document/))
  assert.throws(() => server.uiResource('ui://apps/view.html', { html: '<!DOCTYPE html>', csp: { connectDomains: ['api.example.com'] } }), refused(/connectDomains/))
  assert.throws(() => server.uiResource('ui://apps/view.html', { html: '<!DOCTYPE html>', colour: 'red' }), TypeError)
  assert.throws(() => server.tool('orphan', { uiResource: 'ui://apps/missing.html' }, () => 'x'), refused(/no view is registered/))
})
