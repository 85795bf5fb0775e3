// Who sees what, from JavaScript: tools, resources and prompts that require scopes or tags (the
// token validator's), and a `visibleWhen` rule; a hidden item answers exactly as a missing one.
import { test } from 'node:test'
import assert from 'node:assert/strict'

import { Server } from '../lib/index.js'
import { Client } from './client.mjs'

const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' }

const TOKENS = {
  guest: { subject: 'gus', scopes: [] },
  admin: { subject: 'ada', scopes: ['admin'], tags: ['hr', 'staff'] },
}

// --8<-- [start:server]
function notesServer() {
  return new Server({ name: 'notes', version: '1' })
    .tool('search', { description: 'Searches the notes' }, () => 'found')
    .tool('admin_reset', { description: 'Deletes every note', requiredScopes: ['admin'] }, () => 'reset')
    .resource('memo://payroll', { requiredTags: ['hr'] }, () => 'salaries')
    .prompt('review', { requiredTags: ['staff'] }, () => 'Review it')
}
// --8<-- [end:server]

async function post(url, token, method, params = {}) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { ...HEADERS, authorization: `Bearer ${token}` },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  })
  const text = await res.text()
  // An answer not ready at once comes as one SSE event.
  const data = text.split('\n').filter((line) => line.startsWith('data: '))
  return JSON.parse(data.length > 0 ? data.at(-1).slice(6) : text)
}

test('each token sees what its scopes and tags allow, and a hidden item answers as a missing one', async () => {
  const http = await notesServer().serveHttp('127.0.0.1', 0, { stateless: true, tokenValidator: (token) => TOKENS[token] ?? null })
  try {
    const names = async (token, method, key, field) => (await post(http.url, token, method)).result[key].map((item) => item[field])
    assert.deepEqual(await names('guest', 'tools/list', 'tools', 'name'), ['search'])
    assert.deepEqual(await names('admin', 'tools/list', 'tools', 'name'), ['admin_reset', 'search'])
    assert.deepEqual(await names('guest', 'prompts/list', 'prompts', 'name'), [])
    assert.deepEqual(await names('admin', 'prompts/list', 'prompts', 'name'), ['review'])
    assert.deepEqual(await names('admin', 'resources/list', 'resources', 'uri'), ['memo://payroll'])

    const hidden = await post(http.url, 'guest', 'tools/call', { name: 'admin_reset', arguments: {} })
    const missing = await post(http.url, 'guest', 'tools/call', { name: 'nope', arguments: {} })
    assert.equal(hidden.error.code, -32602)
    assert.equal(hidden.error.message.replace('admin_reset', 'X'), missing.error.message.replace('nope', 'X'))
    assert.equal((await post(http.url, 'guest', 'resources/read', { uri: 'memo://payroll' })).error.code, -32002)
    const called = await post(http.url, 'admin', 'tools/call', { name: 'admin_reset', arguments: {} })
    assert.equal(called.result.content[0].text, 'reset')
  } finally {
    await http.close()
  }
})

test('an async rule decides per request and sees the item and the client', async () => {
  const asked = []
  // --8<-- [start:rule]
  const server = notesServer()
    .tool('beta_summarize', () => 'summary')
    .visibleWhen(async (item, viewer) => {
      asked.push({ item, viewer })
      return !item.name.startsWith('beta_') || viewer.tags.includes('beta')
    })
  // --8<-- [end:rule]
  const client = new Client(server)
  await client.initialize()
  client.send({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} })
  assert.deepEqual((await client.recv()).result.tools.map((t) => t.name), ['search'])
  const beta = asked.find(({ item }) => item.name === 'beta_summarize')
  assert.deepEqual(beta.item, { kind: 'tool', name: 'beta_summarize', requiredScopes: [], requiredTags: [] })
  assert.equal(beta.viewer.protocolVersion, '2025-11-25')
  assert.equal(typeof beta.viewer.clientInfo.name, 'string')
  assert.equal(beta.viewer.subject, null)
  // The rule is not asked about what the requirements already hid.
  assert.ok(asked.every(({ item }) => item.name !== 'admin_reset'))
  client.call(2, 'beta_summarize', {})
  assert.equal((await client.recv()).error.message, 'Unknown tool: beta_summarize')
})

test('a rule that throws hides what it was asked about, and the server keeps serving', async () => {
  const server = notesServer().visibleWhen(() => {
    throw new Error('the feature-flag service is down')
  })
  const client = new Client(server)
  await client.initialize()
  client.send({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} })
  assert.deepEqual((await client.recv()).result.tools, [])
  client.send({ jsonrpc: '2.0', id: 2, method: 'ping' })
  assert.equal((await client.recv()).id, 2)
})

test('requirements must be arrays of strings', () => {
  const server = new Server({ name: 'strict', version: '1' })
  assert.throws(() => server.tool('t', { requiredScopes: 'admin' }, () => 'x'), /requiredScopes must be an array of strings/)
  assert.throws(() => server.visibleWhen('yes'), /needs a function/)
})

test('a view that requires a tag is neither listed nor read without it', async () => {
  const server = notesServer().uiResource('ui://admin/panel.html', { html: '<!DOCTYPE html><html><body>panel</body></html>', requiredTags: ['staff'] })
  const client = new Client(server)
  await client.initialize()
  client.send({ jsonrpc: '2.0', id: 1, method: 'resources/list', params: {} })
  assert.deepEqual((await client.recv()).result.resources, [])
  client.send({ jsonrpc: '2.0', id: 2, method: 'resources/read', params: { uri: 'ui://admin/panel.html' } })
  assert.equal((await client.recv()).error.code, -32002)
  assert.throws(() => server.uiResource('ui://admin/other.html', { html: '<!DOCTYPE html>', requiredTags: 'staff' }), /requiredTags must be an array of strings/)
})
