// server.middleware(async (request, next) => ...): an allow-list by principal (bearer tokens over
// HTTP), a per-principal rate limit and an audit log reading each outcome, in both protocol eras;
// refusing with ProtocolError (that JSON-RPC error) or ToolError (an isError result); a middleware
// that throws or never calls next() refuses its request (-32603) and the server keeps serving;
// several middlewares run in the order added; initialize and server/discover pass none; a
// request cancelled while a middleware decides still ends (its next() hears "cancelled").
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { join } from 'node:path'
import { test } from 'node:test'

import { ProtocolError, Server, ToolError } from '../lib/index.mjs'
import { McpError, connect } from '../lib/testing.mjs'
import { Client, jsonLines } from './client.mjs'

const MODERN = '2026-07-28'
// Every test waits for events; the timeout only bounds a hang.
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }

/** A log whose entries can be awaited: `until(predicate)` resolves with the first entry that matches. */
function eventLog() {
  const entries = []
  const waiters = []
  return {
    entries,
    push(entry) {
      entries.push(entry)
      for (const waiter of waiters.splice(0)) {
        if (waiter.predicate(entry)) waiter.resolve(entry)
        else waiters.push(waiter)
      }
    },
    until(predicate) {
      const found = entries.find(predicate)
      if (found !== undefined) return Promise.resolve(found)
      return new Promise((resolve) => waiters.push({ predicate, resolve }))
    },
  }
}

/** What process.stderr gets while `work` runs (middleware failures are written there). */
async function capturingStderr(work) {
  const written = []
  const write = process.stderr.write
  process.stderr.write = function capture(chunk, ...rest) {
    written.push(String(chunk))
    const done = rest.find((arg) => typeof arg === 'function')
    if (done) process.nextTick(done)
    return true
  }
  try {
    await work()
  } finally {
    process.stderr.write = write
  }
  return written.join('')
}

/** A gate a test opens: `wait()` resolves once `open()` was called. */
function gate() {
  let open
  const opened = new Promise((resolve) => (open = resolve))
  return { open: () => open(), wait: () => opened }
}

function guardedServer(audit, seen) {
  const server = new Server({ name: 'guarded', version: '1' })
  server.tool('echo', { inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } }, ({ text }) => text)
  server.tool('wipe', () => 'wiped')
  server.tool('fail', () => {
    throw new Error('broken')
  })
  server.tool('confirm', async (_args, ctx) => {
    const answer = await ctx.elicit({ message: 'Sure?', requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } } } })
    return answer.action
  })
  server.prompt('greet', () => 'hello')
  server.resource('memo://one', () => 'one')
  // The outer middleware: an audit log of every request that reached it, and how it ended.
  server.middleware(async function audited(request, next) {
    seen.push(request)
    const outcome = await next()
    audit.push({ method: request.method, name: request.name, sequence: request.sequence, ...outcome })
  })
  // The inner one: an allow-list of tools and methods.
  server.middleware(async function allowList(request, next) {
    if (request.name === 'wipe') throw new ToolError('wipe is not allowed here')
    if (request.method === 'prompts/list') throw new ProtocolError(-32001, 'Forbidden: no prompts for you')
    if (request.method === 'resources/list') throw new ToolError('no listing')
    await next()
  })
  return server
}

for (const protocolVersion of ['2025-11-25', MODERN]) {
  test(`${protocolVersion}: an allow-list refuses with ProtocolError or ToolError; an outer audit log hears every outcome`, { timeout: 30_000 }, async () => {
    const audit = eventLog()
    const seen = []
    const server = guardedServer(audit, seen)
    const client = await connect(server, { protocolVersion, elicitation: () => ({ action: 'accept', content: { ok: true } }) })
    try {
      const heard = (name) => audit.until((entry) => entry.name === name)

      const echoed = await client.callTool('echo', { text: 'hi' })
      assert.equal(echoed.content[0].text, 'hi')
      const echo = await heard('echo')
      assert.equal(echo.kind, 'result')
      assert.equal(echo.code, undefined)
      assert.ok(echo.elapsedMs >= 0 && echo.elapsedMs < 60_000, `elapsedMs ${echo.elapsedMs}`)
      const request = seen.find((r) => r.name === 'echo')
      assert.equal(request.method, 'tools/call')
      assert.deepEqual(request.arguments, { text: 'hi' })
      assert.equal(request.principal, undefined) // no tokens in-process
      assert.equal(request.protocolVersion, protocolVersion)
      assert.ok(['number', 'string'].includes(typeof request.requestId))
      assert.ok(Number.isInteger(request.sequence) && request.sequence > 0)
      assert.ok(Object.isFrozen(request))

      const refused = await client.callTool('wipe')
      assert.equal(refused.isError, true)
      assert.deepEqual(refused.content, [{ type: 'text', text: 'wipe is not allowed here' }])
      assert.equal((await heard('wipe')).kind, 'refused')

      const failed = await client.callTool('fail')
      assert.equal(failed.isError, true)
      assert.equal((await heard('fail')).kind, 'toolError')

      // Invalid arguments: the engine's isError result, after the middlewares let it through.
      assert.equal((await client.callTool('echo', { text: 3 })).isError, true)
      await audit.until((entry) => entry.name === 'echo' && entry.kind === 'toolError')

      const unknown = await client.callTool('nope').catch((err) => err)
      assert.ok(unknown instanceof McpError && unknown.code === -32602, String(unknown))
      const nope = await heard('nope')
      assert.deepEqual([nope.kind, nope.code, nope.sequence], ['error', -32602, seen.find((r) => r.name === 'nope').sequence])

      const forbidden = await client.listPrompts().catch((err) => err)
      assert.ok(forbidden instanceof McpError, String(forbidden))
      assert.equal(forbidden.code, -32001)
      assert.equal(forbidden.error.message, 'Forbidden: no prompts for you')
      const prompts = await audit.until((entry) => entry.method === 'prompts/list')
      assert.equal(prompts.kind, 'refused')

      // ToolError outside tools/call: a -32603 error with its text.
      const listing = await client.listResources().catch((err) => err)
      assert.ok(listing instanceof McpError && listing.code === -32603 && listing.error.message === 'no listing', String(listing))

      // A prompt and a resource read pass with their names.
      assert.equal((await client.getPrompt('greet', {})).messages[0].content.text, 'hello')
      assert.equal((await client.readResource('memo://one')).contents[0].text, 'one')
      assert.equal((await audit.until((entry) => entry.method === 'prompts/get')).name, 'greet')
      assert.equal((await audit.until((entry) => entry.method === 'resources/read')).name, 'memo://one')

      // 2026-07-28 asks the client in a round of its own: the audit hears both requests.
      assert.equal((await client.callTool('confirm')).content[0].text, 'accept')
      const confirm = await heard('confirm')
      if (protocolVersion === MODERN) {
        assert.equal(confirm.kind, 'inputRequired')
        await audit.until((entry) => entry.name === 'confirm' && entry.kind === 'result')
      } else {
        assert.equal(confirm.kind, 'result')
      }

      // Neither initialize nor server/discover passes middleware; every sequence is its own.
      assert.ok(!seen.some((r) => r.method === 'initialize' || r.method === 'server/discover'), seen.map((r) => r.method).join())
      assert.equal(new Set(seen.map((r) => r.sequence)).size, seen.length)
    } finally {
      await client.close()
      await server.close()
    }
  })
}

/** A server behind bearer tokens: ada and bob may call, eve may not; two calls per principal. */
async function tokenServer(audit) {
  const server = new Server({ name: 'tokens', version: '1' })
  server.tool('ping', () => 'pong')
  const calls = new Map()
  // Outermost: an audit log of everything that reached the rules, refusals included.
  server.middleware(async function audited(request, next) {
    const outcome = await next()
    audit.push({ principal: request.principal, version: request.protocolVersion, method: request.method, ...outcome })
  })
  server.middleware(async function allowList(request, next) {
    if (!['ada', 'bob'].includes(request.principal)) throw new ProtocolError(-32001, `Forbidden: ${request.principal}`)
    await next()
  })
  server.middleware(async function rateLimit(request, next) {
    if (request.method === 'tools/call') {
      const count = (calls.get(request.principal) ?? 0) + 1
      calls.set(request.principal, count)
      if (count > 2) throw new ProtocolError(-32029, `Too many requests from ${request.principal}`)
    }
    await next()
  })
  const tokens = { 'token-ada': 'ada', 'token-bob': 'bob', 'token-eve': 'eve' }
  const http = await server.serveHttp('127.0.0.1', 0, { tokenValidator: (token) => (tokens[token] ? { subject: tokens[token] } : null) })
  return { server, http }
}

/** The one JSON-RPC message of a JSON or SSE answer. */
async function message(response) {
  const text = await response.text()
  if (!(response.headers.get('content-type') ?? '').startsWith('text/event-stream')) return JSON.parse(text)
  return JSON.parse(text.split('\n').filter((line) => line.startsWith('data: ') && line.length > 6).at(-1).slice(6))
}

test('2025-11-25 over HTTP: an allow-list by principal and a rate limit per principal', { timeout: 30_000 }, async () => {
  const audit = eventLog()
  const { server, http } = await tokenServer(audit)
  try {
    /** A session of the token's principal: `call(id, name)` posts a tools/call. */
    const session = async (token) => {
      const auth = { ...HEADERS, authorization: `Bearer ${token}` }
      const init = await fetch(http.url, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } }),
      })
      assert.equal(init.status, 200, 'initialize passes no middleware, even for eve')
      assert.equal((await message(init)).result.serverInfo.name, 'tokens')
      const headers = { ...auth, 'mcp-session-id': init.headers.get('mcp-session-id'), 'mcp-protocol-version': '2025-11-25' }
      const initialized = await fetch(http.url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) })
      assert.equal(initialized.status, 202)
      return (id, name) =>
        fetch(http.url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: {} } }) }).then(message)
    }
    const ada = await session('token-ada')
    const bob = await session('token-bob')
    const eve = await session('token-eve')
    assert.equal((await ada(1, 'ping')).result.content[0].text, 'pong')
    assert.equal((await bob(1, 'ping')).result.content[0].text, 'pong')
    assert.equal((await ada(2, 'ping')).result.content[0].text, 'pong')
    assert.deepEqual((await ada(3, 'ping')).error, { code: -32029, message: 'Too many requests from ada' })
    // bob's count is his own.
    assert.equal((await bob(2, 'ping')).result.content[0].text, 'pong')
    assert.deepEqual((await eve(1, 'ping')).error, { code: -32001, message: 'Forbidden: eve' })
    // The audit heard each call with its principal and era, refusals included.
    const refusedEve = await audit.until((entry) => entry.principal === 'eve')
    assert.deepEqual([refusedEve.kind, refusedEve.version, refusedEve.method], ['refused', '2025-11-25', 'tools/call'])
    await audit.until((entry) => entry.principal === 'ada' && entry.kind === 'refused')
    await audit.until((entry) => entry.principal === 'bob' && audit.entries.filter((e) => e.principal === 'bob').length === 2)
    const kinds = (who) => audit.entries.filter((e) => e.principal === who).map((e) => e.kind).sort()
    assert.deepEqual(kinds('ada'), ['refused', 'result', 'result'])
    assert.deepEqual(kinds('bob'), ['result', 'result'])
  } finally {
    await http.close()
    await server.close()
  }
})

test('2026-07-28 over HTTP (stateless): the same allow-list and rate limit per principal', { timeout: 30_000 }, async () => {
  const audit = eventLog()
  const { server, http } = await tokenServer(audit)
  try {
    const call = (token, id) =>
      fetch(http.url, {
        method: 'POST',
        headers: { ...HEADERS, authorization: `Bearer ${token}`, 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call', 'mcp-name': 'ping' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id,
          method: 'tools/call',
          params: { name: 'ping', arguments: {}, _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': {} } },
        }),
      }).then(message)
    assert.equal((await call('token-bob', 1)).result.content[0].text, 'pong')
    assert.equal((await call('token-bob', 2)).result.content[0].text, 'pong')
    assert.deepEqual((await call('token-bob', 3)).error, { code: -32029, message: 'Too many requests from bob' })
    assert.deepEqual((await call('token-eve', 4)).error, { code: -32001, message: 'Forbidden: eve' })
    assert.equal((await call('token-ada', 5)).result.content[0].text, 'pong')
    const ada = await audit.until((entry) => entry.principal === 'ada')
    assert.deepEqual([ada.version, ada.method, ada.kind], [MODERN, 'tools/call', 'result'])
    await audit.until((entry) => entry.principal === 'bob' && entry.kind === 'refused')
  } finally {
    await http.close()
    await server.close()
  }
})

test('a middleware that throws refuses with -32603 and is logged; one that never calls next() refuses too; the server keeps serving', { timeout: 30_000 }, async () => {
  const server = new Server({ name: 'broken', version: '1' })
  server.tool('hello', () => 'hello')
  server.tool('quick', () => 'quick')
  server.middleware(async function faulty(request, next) {
    if (request.name === 'hello') throw new Error("the rule's database is down")
    await next()
  })
  server.middleware(function syncFaulty(request, next) {
    if (request.name === 'quick') throw new RangeError('thrown before any await')
    return next()
  })
  server.middleware(async function forgetful(request, next) {
    if (request.method === 'resources/list') return // never lets it through
    await next()
  })
  server.middleware(function forgetfulSync(request, next) {
    if (request.method === 'prompts/list') return 'no next' // a plain function that returns
    return next()
  })
  let client
  const logged = await capturingStderr(async () => {
    client = await connect(server)
    const failed = await client.callTool('hello').catch((err) => err)
    assert.ok(failed instanceof McpError, String(failed))
    assert.deepEqual([failed.code, failed.error.message], [-32603, 'Internal error: middleware faulty failed'])
    const quick = await client.callTool('quick').catch((err) => err)
    assert.deepEqual([quick.code, quick.error.message], [-32603, 'Internal error: middleware syncFaulty failed'])
  })
  assert.match(logged, /middleware "faulty" failed: Error: the rule's database is down/)
  assert.match(logged, /middleware "syncFaulty" failed: RangeError: thrown before any await/)
  try {
    const dropped = await client.listResources().catch((err) => err)
    assert.deepEqual([dropped.code, dropped.error.message], [-32603, 'Internal error: middleware forgetful returned without calling next()'])
    const droppedSync = await client.listPrompts().catch((err) => err)
    assert.deepEqual([droppedSync.code, droppedSync.error.message], [-32603, 'Internal error: middleware forgetfulSync returned without calling next()'])
    // The server keeps serving.
    assert.deepEqual((await client.listTools()).map((tool) => tool.name), ['hello', 'quick'])
  } finally {
    await client.close()
    await server.close()
  }
})

test('middlewares run in the order added, each awaiting before next(); a later refusal is heard as "refused" by the earlier ones', { timeout: 30_000 }, async () => {
  const server = new Server({ name: 'layers', version: '1' })
  server.tool('echo', ({ text }) => text)
  const order = eventLog()
  for (const layer of ['outer', 'middle', 'inner']) {
    server.middleware(async (request, next) => {
      order.push(`${layer} before ${request.name}`)
      await new Promise((resolve) => setImmediate(resolve)) // decides asynchronously
      if (layer === 'inner' && request.name === 'denied') throw new ProtocolError(-32001, 'Forbidden')
      const outcome = await next()
      order.push(`${layer} heard ${outcome.kind}`)
    })
  }
  const client = await connect(server)
  try {
    assert.equal((await client.callTool('echo', { text: 'x' })).content[0].text, 'x')
    await order.until((entry) => entry === 'inner heard result')
    await order.until((entry) => entry === 'outer heard result')
    await order.until((entry) => entry === 'middle heard result')
    assert.deepEqual(order.entries.slice(0, 3), ['outer before echo', 'middle before echo', 'inner before echo'])
    order.entries.length = 0
    const denied = await client.callTool('denied').catch((err) => err)
    assert.ok(denied instanceof McpError && denied.code === -32001, String(denied))
    await order.until((entry) => entry === 'outer heard refused')
    await order.until((entry) => entry === 'middle heard refused')
    assert.deepEqual(order.entries.slice(0, 3), ['outer before denied', 'middle before denied', 'inner before denied'])
    assert.ok(!order.entries.includes('inner heard refused'), 'the refusing middleware never called next()')
  } finally {
    await client.close()
    await server.close()
  }
})

test('a cancelled call is heard as "cancelled", also while a middleware still decides (its late next() does not hang)', { timeout: 30_000 }, async () => {
  const server = new Server({ name: 'cancels', version: '1' })
  const started = gate()
  server.tool('slow', async (_args, ctx) => {
    started.open()
    await ctx.cancelled()
  })
  server.tool('ping', () => 'pong')
  const audit = eventLog()
  const deciding = gate()
  const decide = gate()
  server.middleware(async (request, next) => {
    if (request.name === 'held') {
      deciding.open()
      await decide.wait()
    }
    const outcome = await next()
    audit.push({ name: request.name, ...outcome })
  })
  const client = new Client(server)
  try {
    await client.initialize()
    client.call(1, 'slow')
    await started.wait()
    client.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1, reason: 'user' } })
    assert.equal((await audit.until((entry) => entry.name === 'slow')).kind, 'cancelled')

    client.call(2, 'held')
    await deciding.wait()
    client.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 2, reason: 'user' } })
    // Cancelled before the verdict; the middleware's next() then resolves at once.
    client.call(3, 'ping')
    assert.equal((await client.recv()).result.content[0].text, 'pong')
    decide.open()
    assert.equal((await audit.until((entry) => entry.name === 'held')).kind, 'cancelled')
    // Neither cancelled call was answered.
    assert.deepEqual(await client.finish(), [])
  } finally {
    await server.close()
  }
})

test('next() is called once; server.middleware needs a function', { timeout: 30_000 }, async () => {
  assert.throws(() => new Server({ name: 't', version: '1' }).middleware('nope'), TypeError)
  const server = new Server({ name: 'twice', version: '1' })
  server.tool('ping', () => 'pong')
  const second = eventLog()
  server.middleware(async (request, next) => {
    const first = next()
    second.push(await next().catch((err) => err))
    await first
  })
  const client = await connect(server)
  try {
    assert.equal((await client.callTool('ping')).content[0].text, 'pong')
    const err = await second.until(() => true)
    assert.ok(err instanceof Error && /next\(\) more than once/.test(err.message), String(err))
  } finally {
    await client.close()
    await server.close()
  }
})

test('over stdio (the engine reads the pipe on the JS thread): a middleware that awaits, refuses and observes', { timeout: 30_000 }, async () => {
  const lib = join(import.meta.dirname, '..', 'lib', 'index.js')
  const script = `
    const { Server, ProtocolError } = require(${JSON.stringify(lib)})
    const server = new Server({ name: 'stdio-middleware', version: '1' })
    server.tool('ping', () => 'pong')
    server.middleware(async (request, next) => {
      await new Promise((resolve) => setImmediate(resolve))
      if (request.name === 'denied') throw new ProtocolError(-32001, 'Forbidden')
      const outcome = await next()
      process.stderr.write('heard ' + request.method + ' ' + request.name + ' ' + outcome.kind + '\\n')
    })
    server.serveStdio()
  `
  const child = spawn(process.execPath, ['-e', script], { stdio: ['pipe', 'pipe', 'pipe'] })
  let stderr = ''
  child.stderr.setEncoding('utf8').on('data', (chunk) => (stderr += chunk))
  const exited = once(child, 'exit')
  const next = jsonLines(child.stdout, { ms: 10000, onHang: () => child.kill() })
  const send = (message) => child.stdin.write(JSON.stringify(message) + '\n')
  send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } })
  assert.equal((await next()).result.serverInfo.name, 'stdio-middleware')
  send({ jsonrpc: '2.0', method: 'notifications/initialized' })
  send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'ping', arguments: {} } })
  assert.deepEqual((await next()).result.content, [{ type: 'text', text: 'pong' }])
  send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'denied', arguments: {} } })
  assert.deepEqual(await next(), { jsonrpc: '2.0', id: 2, error: { code: -32001, message: 'Forbidden' } })
  child.stdin.end()
  const [code] = await exited
  assert.equal(code, 0, stderr)
  assert.match(stderr, /^heard tools\/call ping result$/m)
  assert.doesNotMatch(stderr, /initialize/)
})
