// Resources, templates, prompts, completion and Streamable HTTP registered from JavaScript.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { setTimeout as delay } from 'node:timers/promises'

import { ResourceNotFound, Server, ToolwireError, image } from '../lib/index.js'
import { Client } from './client.mjs'

async function request(client, id, method, params = {}) {
  client.send({ jsonrpc: '2.0', id, method, params })
  return client.recv()
}

function catalogServer() {
  return new Server({ name: 'catalog', version: '1' })
    .resource('memo://readme', { name: 'readme', description: 'The read-me.', mimeType: 'text/plain' }, () => 'read me')
    .resource('memo://logo', { name: 'logo', mimeType: 'image/png' }, () => new Uint8Array([0x89, 0x50]))
    .resource('memo://notes/{day}', { name: 'notes', mimeType: 'text/plain' }, async (uri, { day }) => {
      await delay(5)
      if (day === 'never') throw new ResourceNotFound(`no notes for ${day}`)
      return `notes of ${day} at ${uri}`
    })
    .resource('memo://broken', { name: 'broken' }, () => {
      throw new Error('disk on fire')
    })
    .prompt('greet', { description: 'Greets', arguments: [{ name: 'name', required: true }, { name: 'style' }] }, ({ name, style }) =>
      `Hello ${name} (${style ?? 'plain'})`,
    )
    .prompt('show', { arguments: [{ name: 'url', required: true }] }, async ({ url }) => [
      image('AAAA', 'image/png'),
      { role: 'assistant', content: `Seen ${url}` },
    ])
    .completion({ prompt: 'greet' }, (_argument, value) => ['ada', 'alan', 'grace'].filter((n) => n.startsWith(value)))
}

test('capabilities follow what is registered', async () => {
  const client = new Client(catalogServer())
  const caps = (await client.initialize()).result.capabilities
  assert.deepEqual(caps.resources, { subscribe: true, listChanged: true })
  assert.deepEqual(caps.prompts, { listChanged: true })
  assert.deepEqual(caps.completions, {})
  const plain = new Client(new Server({ name: 'plain', version: '1' }))
  const bare = (await plain.initialize()).result.capabilities
  assert.equal(bare.resources, undefined)
  assert.equal(bare.prompts, undefined)
})

test('lists and reads resources, sync and async, text and blob', async () => {
  const client = new Client(catalogServer())
  await client.initialize()
  const listed = (await request(client, 1, 'resources/list')).result.resources
  assert.deepEqual(listed.map((r) => r.uri), ['memo://broken', 'memo://logo', 'memo://readme'])
  const templates = (await request(client, 2, 'resources/templates/list')).result.resourceTemplates
  assert.deepEqual(templates, [{ uriTemplate: 'memo://notes/{day}', name: 'notes', mimeType: 'text/plain' }])
  const readme = (await request(client, 3, 'resources/read', { uri: 'memo://readme' })).result.contents
  assert.deepEqual(readme, [{ uri: 'memo://readme', mimeType: 'text/plain', text: 'read me' }])
  const logo = (await request(client, 4, 'resources/read', { uri: 'memo://logo' })).result.contents[0]
  assert.deepEqual([...Buffer.from(logo.blob, 'base64')], [0x89, 0x50])
  const notes = (await request(client, 5, 'resources/read', { uri: 'memo://notes/monday' })).result.contents[0]
  assert.equal(notes.text, 'notes of monday at memo://notes/monday')
})

test('returned values are read by the rule every language shares', async () => {
  // Core's from_returned rules (the same in Python): bytes anywhere a blob can be, the
  // registered MIME type as the default, and a value that says nothing refused saying what to return.
  const server = new Server({ name: 'returns', version: '1' })
    .resource('memo://mixed', { mimeType: 'text/plain' }, () => [
      'one',
      new Uint8Array([0, 1]),
      { blob: new Uint8Array([2]).buffer, mime_type: 'a/b' },
      { text: 't', uri: 'memo://x' },
    ])
    .resource('memo://number', {}, () => 42)
    .prompt('described', {}, () => ({ description: 'd', messages: ['hi', { role: 'assistant', content: image('AAAA', 'image/png') }] }))
    .prompt('nothing', {}, () => undefined)
  const client = new Client(server)
  await client.initialize()
  const contents = (await request(client, 1, 'resources/read', { uri: 'memo://mixed' })).result.contents
  assert.deepEqual(contents, [
    { uri: 'memo://mixed', mimeType: 'text/plain', text: 'one' },
    { uri: 'memo://mixed', mimeType: 'text/plain', blob: Buffer.from([0, 1]).toString('base64') },
    { uri: 'memo://mixed', mimeType: 'a/b', blob: Buffer.from([2]).toString('base64') },
    { uri: 'memo://x', mimeType: 'text/plain', text: 't' },
  ])
  const number = (await request(client, 2, 'resources/read', { uri: 'memo://number' })).error
  assert.equal(number.code, -32603)
  assert.match(number.message, /a resource handler returned a number; return text, bytes/)
  const got = (await request(client, 3, 'prompts/get', { name: 'described' })).result
  assert.deepEqual(got, {
    description: 'd',
    messages: [
      { role: 'user', content: { type: 'text', text: 'hi' } },
      { role: 'assistant', content: { type: 'image', data: 'AAAA', mimeType: 'image/png' } },
    ],
  })
  const nothing = (await request(client, 4, 'prompts/get', { name: 'nothing' })).error
  assert.equal(nothing.code, -32603)
  assert.match(nothing.message, /a prompt message cannot be nothing \(null\)/)
})

test('missing and failing resources get -32002 and -32603', async () => {
  const client = new Client(catalogServer())
  await client.initialize()
  for (const [id, uri] of [[1, 'memo://nothing'], [2, 'memo://notes/never']]) {
    const { error } = await request(client, id, 'resources/read', { uri })
    assert.equal(error.code, -32002)
    assert.deepEqual(error.data, { uri })
  }
  const { error } = await request(client, 3, 'resources/read', { uri: 'memo://broken' })
  assert.equal(error.code, -32603)
  assert.match(error.message, /disk on fire/)
})

test('prompts render and check their arguments; completion', async () => {
  const client = new Client(catalogServer())
  await client.initialize()
  const prompts = (await request(client, 1, 'prompts/list')).result.prompts
  assert.deepEqual(prompts.find((p) => p.name === 'greet').arguments, [{ name: 'name', required: true }, { name: 'style', required: false }])
  const greeted = (await request(client, 2, 'prompts/get', { name: 'greet', arguments: { name: 'Ada' } })).result
  assert.deepEqual(greeted.messages, [{ role: 'user', content: { type: 'text', text: 'Hello Ada (plain)' } }])
  const shown = (await request(client, 3, 'prompts/get', { name: 'show', arguments: { url: 'x' } })).result.messages
  assert.equal(shown[0].content.type, 'image')
  assert.deepEqual(shown[1], { role: 'assistant', content: { type: 'text', text: 'Seen x' } })
  assert.equal((await request(client, 4, 'prompts/get', { name: 'greet', arguments: {} })).error.code, -32602)
  assert.equal((await request(client, 5, 'prompts/get', { name: 'nope' })).error.code, -32602)
  const completion = (
    await request(client, 6, 'completion/complete', { ref: { type: 'ref/prompt', name: 'greet' }, argument: { name: 'name', value: 'a' } })
  ).result.completion
  assert.deepEqual(completion, { values: ['ada', 'alan'], hasMore: false })
})

test('subscriptions, updates and list_changed', async () => {
  const server = catalogServer()
  const client = new Client(server)
  await client.initialize()
  assert.deepEqual((await request(client, 1, 'resources/subscribe', { uri: 'memo://readme' })).result, {})
  server.notifyResourceUpdated('memo://logo')
  server.notifyResourceUpdated('memo://readme')
  assert.deepEqual(await client.recv(), { jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri: 'memo://readme' } })
  // Updates reach the session in order: had the unsubscribe failed, readme's would come first.
  assert.deepEqual((await request(client, 2, 'resources/unsubscribe', { uri: 'memo://readme' })).result, {})
  assert.deepEqual((await request(client, 3, 'resources/subscribe', { uri: 'memo://logo' })).result, {})
  server.notifyResourceUpdated('memo://readme')
  server.notifyResourceUpdated('memo://logo')
  assert.deepEqual((await client.recv()).params, { uri: 'memo://logo' })
  server.resource('memo://new', () => 'new')
  assert.equal((await client.recv()).method, 'notifications/resources/list_changed')
  assert.equal(server.removePrompt('show'), true)
  assert.equal((await client.recv()).method, 'notifications/prompts/list_changed')
  assert.throws(() => server.resource('memo://readme', () => 'again'), (err) => err instanceof ToolwireError && err.code === 'TOOLWIRE_REGISTRATION' && /already registered/.test(err.message))
})

const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
}
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }

async function body(res) {
  const text = await res.text()
  if (res.headers.get('content-type') === 'text/event-stream') {
    const data = text.split('\n').filter((l) => l.startsWith('data: ') && l.length > 6)
    return JSON.parse(data.at(-1).slice(6))
  }
  return JSON.parse(text)
}

test('serveHttp: sessions, async handlers on the JS thread, resources, close', async () => {
  const server = catalogServer().tool('shout', { inputSchema: { type: 'object', properties: { text: { type: 'string' } } } }, async ({ text }, ctx) => {
    ctx.progress(1, 2)
    await delay(5)
    return text.toUpperCase()
  })
  const http = await server.serveHttp('127.0.0.1', 0)
  assert.match(http.url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/)
  const init = await fetch(http.url, { method: 'POST', headers: HEADERS, body: JSON.stringify(INIT) })
  assert.equal(init.status, 200)
  const session = init.headers.get('mcp-session-id')
  assert.match(session, /^[0-9a-f]{32}$/)
  const headers = { ...HEADERS, 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' }
  const call = { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'shout', arguments: { text: 'hi' } } }
  const shouted = await fetch(http.url, { method: 'POST', headers, body: JSON.stringify(call) })
  assert.equal((await body(shouted)).result.content[0].text, 'HI')
  const read = { jsonrpc: '2.0', id: 3, method: 'resources/read', params: { uri: 'memo://notes/friday' } }
  const notes = await fetch(http.url, { method: 'POST', headers, body: JSON.stringify(read) })
  assert.equal((await body(notes)).result.contents[0].text, 'notes of friday at memo://notes/friday')
  const evil = await fetch(http.url, { method: 'POST', headers: { ...HEADERS, origin: 'http://evil.example.com' }, body: JSON.stringify(INIT) })
  assert.equal(evil.status, 403)
  await http.close()
  await assert.rejects(fetch(http.url, { method: 'POST', headers: HEADERS, body: JSON.stringify(INIT) }))
})

test('serveHttp: token validator (sync or async), stateless, and a port in use', async () => {
  const server = new Server({ name: 'auth', version: '1' }).tool('ping2', () => 'pong')
  const http = await server.serveHttp('127.0.0.1', 0, {
    stateless: true,
    authorizationServers: ['https://auth.example'],
    tokenValidator: async (token) =>
      token === 'good' ? { subject: 'ada', scopes: ['mcp'] } : token === 'narrow' ? { insufficientScope: 'mcp' } : null,
  })
  const missing = await fetch(http.url, { method: 'POST', headers: HEADERS, body: JSON.stringify(INIT) })
  assert.equal(missing.status, 401)
  assert.match(missing.headers.get('www-authenticate'), /resource_metadata="http:\/\/127\.0\.0\.1:\d+\/\.well-known\/oauth-protected-resource\/mcp"/)
  const bad = await fetch(http.url, { method: 'POST', headers: { ...HEADERS, authorization: 'Bearer bad' }, body: JSON.stringify(INIT) })
  assert.equal(bad.status, 401)
  const narrow = await fetch(http.url, { method: 'POST', headers: { ...HEADERS, authorization: 'Bearer narrow' }, body: JSON.stringify(INIT) })
  assert.equal(narrow.status, 403)
  assert.match(narrow.headers.get('www-authenticate'), /error="insufficient_scope", scope="mcp"/)
  const call = { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'ping2', arguments: {} } }
  const ok = await fetch(http.url, { method: 'POST', headers: { ...HEADERS, authorization: 'Bearer good' }, body: JSON.stringify(call) })
  assert.equal(ok.status, 200)
  assert.equal(ok.headers.get('mcp-session-id'), null)
  assert.equal((await body(ok)).result.content[0].text, 'pong')
  const port = Number(new URL(http.url).port)
  await assert.rejects(
    server.serveHttp('127.0.0.1', port),
    (err) => err instanceof ToolwireError && err.code === 'TOOLWIRE_TRANSPORT' && err.message.includes(`127.0.0.1:${port}`),
  )
  await http.close()
})

test('serveHttp: a path without a leading / or a bad port is ERR_INVALID_ARG_VALUE', async () => {
  const server = new Server({ name: 'paths', version: '1' })
  await assert.rejects(
    server.serveHttp('127.0.0.1', 0, { path: 'mcp' }),
    (err) => err instanceof ToolwireError && err.code === 'ERR_INVALID_ARG_VALUE' && /must start with '\/'/.test(err.message),
  )
  await assert.rejects(
    server.serveHttp('127.0.0.1', 70000),
    (err) => err instanceof ToolwireError && err.code === 'ERR_INVALID_ARG_VALUE' && /invalid port 70000/.test(err.message),
  )
})

test('serveHttp: responseMode auto, json or sse; a bad or contradictory mode is ERR_INVALID_ARG_VALUE', async () => {
  const server = new Server({ name: 'modes', version: '1' }).tool('shout', { inputSchema: { type: 'object' } }, ({ text }) => text.toUpperCase())
  const call = { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'shout', arguments: { text: 'hi' } } }
  // Auto answers in JSON only when the answer is ready as the request is read; a JS tool runs
  // on the JS thread, so either is right there.
  for (const [options, contentTypes] of [
    [{}, ['application/json', 'text/event-stream']],
    [{ jsonResponse: true }, ['application/json']],
    [{ responseMode: 'json' }, ['application/json']],
    [{ responseMode: 'sse' }, ['text/event-stream']],
  ]) {
    const http = await server.serveHttp('127.0.0.1', 0, { stateless: true, ...options })
    try {
      const reply = await fetch(http.url, { method: 'POST', headers: HEADERS, body: JSON.stringify(call) })
      assert.equal(reply.status, 200)
      const contentType = reply.headers.get('content-type')
      assert.ok(contentTypes.includes(contentType), `${contentType} for ${JSON.stringify(options)}`)
      const body = await reply.text()
      const message = JSON.parse(contentType === 'application/json' ? body : body.split('\n').filter((l) => l.startsWith('data: ') && l.length > 6).at(-1).slice(6))
      assert.deepEqual(message.result.content, [{ type: 'text', text: 'HI' }])
    } finally {
      await http.close()
    }
  }
  await assert.rejects(
    server.serveHttp('127.0.0.1', 0, { responseMode: 'stream' }),
    (err) => err instanceof ToolwireError && err.code === 'ERR_INVALID_ARG_VALUE' && /response mode/.test(err.message),
  )
  await assert.rejects(
    server.serveHttp('127.0.0.1', 0, { responseMode: 'sse', jsonResponse: true }),
    (err) => err instanceof ToolwireError && err.code === 'ERR_INVALID_ARG_VALUE' && /JSON answers asked for beside the "sse"/.test(err.message),
  )
})

test('serveHttp: a trickled head is cut off at headerReadTimeoutMs; maxConnections caps connections with 503', async () => {
  const { connect } = await import('node:net')
  const server = new Server({ name: 'slow', version: '1' }).tool('shout', { inputSchema: { type: 'object' } }, ({ text }) => text.toUpperCase())
  // Everything the server sends until it closes the connection.
  const untilClosed = (socket) =>
    new Promise((resolve, reject) => {
      let reply = ''
      socket.setEncoding('utf8')
      socket.on('data', (chunk) => (reply += chunk))
      socket.on('close', () => resolve(reply))
      socket.on('error', reject)
    })
  const open = (url) =>
    new Promise((resolve) => {
      const socket = connect(Number(new URL(url).port), '127.0.0.1', () => resolve(socket))
    })
  const slow = await server.serveHttp('127.0.0.1', 0, { headerReadTimeoutMs: 200 })
  try {
    const trickling = await open(slow.url)
    const closed = untilClosed(trickling)
    trickling.write('POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ')
    assert.equal(await closed, '')
  } finally {
    await slow.close()
  }
  const capped = await server.serveHttp('127.0.0.1', 0, { maxConnections: 1 })
  try {
    // Served and kept alive: the one connection allowed is taken.
    const held = await fetch(capped.url, { method: 'POST', headers: HEADERS, body: JSON.stringify(INIT) })
    assert.equal(held.status, 200)
    await held.text()
    const extra = await open(capped.url)
    const refused = await untilClosed(extra)
    assert.match(refused, /^HTTP\/1\.1 503/)
    assert.match(refused, /too many open connections/)
  } finally {
    await capped.close()
  }
  await assert.rejects(
    server.serveHttp('127.0.0.1', 0, { maxConnections: 0 }),
    (err) => err instanceof ToolwireError && err.code === 'ERR_INVALID_ARG_VALUE' && /max_connections/.test(err.message),
  )
  await assert.rejects(
    server.serveHttp('127.0.0.1', 0, { maxSessions: -5 }),
    (err) => err instanceof ToolwireError && err.code === 'ERR_INVALID_ARG_VALUE' && /maxSessions must be a whole number/.test(err.message),
  )
})

test('serveHttp: maxSessionsPerClient bounds the sessions of one client (its idle one makes room)', async () => {
  const server = new Server({ name: 'sessions', version: '1' }).tool('shout', { inputSchema: { type: 'object' } }, ({ text }) => text.toUpperCase())
  const http = await server.serveHttp('127.0.0.1', 0, { maxSessionsPerClient: 1 })
  try {
    const open = async () => {
      const reply = await fetch(http.url, { method: 'POST', headers: HEADERS, body: JSON.stringify(INIT) })
      assert.equal(reply.status, 200)
      await reply.text()
      return reply.headers.get('mcp-session-id')
    }
    const pingStatus = async (session) => {
      const headers = { ...HEADERS, 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' }
      const reply = await fetch(http.url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' }) })
      await reply.text()
      return reply.status
    }
    const first = await open()
    assert.equal(await pingStatus(first), 200)
    // The same client (address) opens another: its idle first session makes room.
    const second = await open()
    assert.equal(await pingStatus(first), 404)
    assert.equal(await pingStatus(second), 200)
  } finally {
    await http.close()
  }
  await assert.rejects(
    server.serveHttp('127.0.0.1', 0, { maxSessionsPerClient: 0 }),
    (err) => err instanceof ToolwireError && err.code === 'ERR_INVALID_ARG_VALUE' && /max_sessions_per_client/.test(err.message),
  )
  // The slow-reader bound reaches the engine (which checks it); its behaviour is core's test.
  await assert.rejects(
    server.serveHttp('127.0.0.1', 0, { maxSseBufferedBytes: 0 }),
    (err) => err instanceof ToolwireError && err.code === 'ERR_INVALID_ARG_VALUE' && /max_sse_buffered_bytes/.test(err.message),
  )
})

test('server.close() ends every HTTP server it started', async () => {
  const server = new Server({ name: 'closing', version: '1' }).tool('ping2', () => 'pong')
  const first = await server.serveHttp('127.0.0.1', 0)
  const second = await server.serveHttp('127.0.0.1', 0, { path: '/other' })
  const init = await fetch(second.url, { method: 'POST', headers: HEADERS, body: JSON.stringify(INIT) })
  assert.equal(init.status, 200)
  await init.text()
  await server.close()
  await Promise.all([first.closed, second.closed])
  for (const http of [first, second]) {
    await assert.rejects(fetch(http.url, { method: 'POST', headers: HEADERS, body: JSON.stringify(INIT) }))
  }
  // Nothing left to end.
  await server.close()
})

test('resource and prompt definitions keep integers as integers (JSON text, not JS numbers)', async () => {
  const server = new Server({ name: 'ints', version: '1' })
    .resource('memo://n', { _meta: { n: 3 } }, () => 'n')
    .prompt('p', { _meta: { n: 3 } }, () => 'p')
  const client = new Client(server)
  await client.initialize()
  await request(client, 1, 'resources/list')
  await request(client, 2, 'prompts/list')
  const listings = client.texts.filter((text) => /"id":[12],/.test(text))
  assert.equal(listings.length, 2)
  for (const text of listings) {
    assert.match(text, /"_meta":\{"n":3\}/)
    assert.doesNotMatch(text, /3\.0/)
  }
})
