// server.httpHandler(): toolwire's Streamable HTTP endpoint inside a node:http server of the
// test's own, which serves /health itself and routes /mcp (and a few more paths) to handlers:
// a legacy session with progress over SSE, the Web Request → Response form, a body a parser
// already read, the Host guard (loopback only unless allowedHosts), a body over the limit
// (413), a 2026-07-28 client hanging up mid-stream (the tool's signal aborts), and the
// lifespan held from the first request until handler.close().
import assert from 'node:assert/strict'
import { once } from 'node:events'
import http from 'node:http'
import { test } from 'node:test'

import { Server, ToolwireError } from '../lib/index.mjs'

const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }
const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'mount-test', version: '1' } },
}
const MODERN_META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
}

/** A promise and its resolver, to wait for an event. */
function signal() {
  let resolve
  const promise = new Promise((r) => (resolve = r))
  return { promise, resolve }
}

function weatherServer(events, options = {}) {
  const server = new Server({
    name: 'weather',
    version: '1',
    ...options,
    async *lifespan() {
      events.push('lifespan started')
      try {
        yield { station: 'Blindern' }
      } finally {
        events.push('lifespan ended')
      }
    },
  })
  server.tool('forecast', { inputSchema: { type: 'object', properties: { city: { type: 'string' } } } }, async ({ city }, ctx) => {
    ctx.progress(1, 2, 'fetching')
    await new Promise((resolve) => setImmediate(resolve))
    return `${city}: sunny (station ${ctx.lifespanContext.station})`
  })
  return server
}

/** The app: its own /health route, the rest to handlers by path prefix. */
async function app(routes) {
  const server = http.createServer((req, res) => {
    if (req.url === '/health') {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ status: 'ok' }))
      return
    }
    const route = Object.keys(routes).find((prefix) => req.url.startsWith(prefix))
    if (route === undefined) {
      res.writeHead(404).end()
      return
    }
    routes[route](req, res)
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const base = `http://127.0.0.1:${server.address().port}`
  return {
    base,
    async close() {
      server.closeAllConnections()
      server.close()
      await once(server, 'close')
    },
  }
}

/** The JSON-RPC messages of a JSON or SSE answer. */
async function messages(response) {
  const text = await response.text()
  if (!(response.headers.get('content-type') ?? '').startsWith('text/event-stream')) return [JSON.parse(text)]
  return text
    .split('\n')
    .filter((line) => line.startsWith('data: ') && line.length > 6)
    .map((line) => JSON.parse(line.slice(6)))
}

/** A raw node:http request (any Host header, bodies in chunks); resolves to the response. */
function request(base, path, { method = 'POST', headers = {}, chunks = [] } = {}) {
  const req = http.request(`${base}${path}`, { method, headers })
  const answered = once(req, 'response').then(([res]) => res)
  for (const chunk of chunks) req.write(chunk)
  req.end()
  return { req, answered }
}

async function readAll(res) {
  let text = ''
  for await (const chunk of res) text += chunk
  return text
}

test('a legacy session through the app: progress over SSE, the app route beside it, the lifespan held until close()', async () => {
  const events = []
  const server = weatherServer(events)
  const handler = server.httpHandler()
  const served = await app({ '/mcp': handler })
  try {
    const health = await fetch(`${served.base}/health`)
    assert.deepEqual(await health.json(), { status: 'ok' })
    assert.deepEqual(events, [], 'the lifespan waits for the first MCP request')

    const init = await fetch(`${served.base}/mcp`, { method: 'POST', headers: HEADERS, body: JSON.stringify(INIT) })
    assert.equal(init.status, 200)
    // A whole answer goes out whole: its length said, not in chunks.
    assert.equal(init.headers.get('transfer-encoding'), null)
    const initText = await init.clone().text()
    assert.equal(init.headers.get('content-length'), String(Buffer.byteLength(initText)))
    assert.equal((await messages(init))[0].result.serverInfo.name, 'weather')
    assert.deepEqual(events, ['lifespan started'])
    const session = init.headers.get('mcp-session-id')
    assert.match(session, /^[0-9a-f]{32}$/)
    const headers = { ...HEADERS, 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' }
    const initialized = await fetch(`${served.base}/mcp`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    })
    assert.equal(initialized.status, 202)

    const call = {
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'forecast', arguments: { city: 'Oslo' }, _meta: { progressToken: 'p1' } },
    }
    const answer = await fetch(`${served.base}/mcp`, { method: 'POST', headers, body: JSON.stringify(call) })
    assert.equal(answer.status, 200)
    assert.equal(answer.headers.get('content-type'), 'text/event-stream')
    const [progress, result] = await messages(answer)
    assert.deepEqual(progress.params, { progressToken: 'p1', progress: 1, total: 2, message: 'fetching' })
    assert.equal(result.result.content[0].text, 'Oslo: sunny (station Blindern)')

    await handler.close()
    assert.deepEqual(events, ['lifespan started', 'lifespan ended'])
    // Its sessions ended with it.
    const after = await fetch(`${served.base}/mcp`, { method: 'POST', headers, body: JSON.stringify(call) })
    assert.equal(after.status, 404)
    await handler.close()
  } finally {
    await served.close()
    await server.close()
  }
  assert.deepEqual(events, ['lifespan started', 'lifespan ended', 'lifespan started', 'lifespan ended'])
})

test('a request while handler.close() runs waits for it, then starts afresh', async () => {
  const events = []
  const server = weatherServer(events)
  const handler = server.httpHandler()
  const initialize = () => handler.fetch(new Request('http://localhost/mcp', { method: 'POST', headers: HEADERS, body: JSON.stringify(INIT) }))
  try {
    const first = await initialize()
    assert.equal(first.status, 200)
    await first.arrayBuffer()
    const closing = handler.close()
    const second = await initialize()
    await closing
    assert.equal(second.status, 200)
    await second.arrayBuffer()
    assert.deepEqual(events, ['lifespan started', 'lifespan ended', 'lifespan started'])
  } finally {
    await handler.close()
    await server.close()
  }
  assert.deepEqual(events, ['lifespan started', 'lifespan ended', 'lifespan started', 'lifespan ended'])
})

test('handler.fetch: a Web Request answered with a Response whose body streams', async () => {
  const events = []
  const server = weatherServer(events)
  const handler = server.httpHandler({ stateless: true })
  try {
    const call = {
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: { name: 'forecast', arguments: { city: 'Bergen' }, _meta: { progressToken: 3 } },
    }
    const response = await handler.fetch(
      new Request('http://localhost/mcp', {
        method: 'POST',
        headers: { ...HEADERS, 'mcp-protocol-version': '2025-11-25' },
        body: JSON.stringify(call),
      }),
    )
    assert.ok(response instanceof Response)
    assert.equal(response.status, 200)
    assert.ok(response.body instanceof ReadableStream)
    const answers = await messages(response)
    assert.equal(answers.at(-1).result.content[0].text, 'Bergen: sunny (station Blindern)')
    assert.equal(answers.at(-1).id, 7)

    // The guard sees the URL's host when the Request has no Host field.
    const evil = await handler.fetch(new Request('http://evil.example/mcp', { method: 'POST', headers: HEADERS, body: JSON.stringify(INIT) }))
    assert.equal(evil.status, 403)
    await evil.arrayBuffer()
  } finally {
    await handler.close()
    await server.close()
  }
})

test('a body a parser already read (req.body, as express.json() leaves it) is the request body', async () => {
  const server = weatherServer([])
  const handler = server.httpHandler()
  const served = await app({
    '/parsed': async (req, res) => {
      let text = ''
      for await (const chunk of req) text += chunk
      req.body = JSON.parse(text)
      await handler(req, res)
    },
  })
  try {
    const init = await fetch(`${served.base}/parsed`, { method: 'POST', headers: HEADERS, body: JSON.stringify(INIT) })
    assert.equal(init.status, 200)
    assert.equal((await messages(init))[0].result.serverInfo.name, 'weather')
  } finally {
    await served.close()
    await server.close()
  }
})

test('a tool that returns its result is answered as JSON in one piece, complete when the engine first sees the call; one that awaits streams', async () => {
  const server = new Server({ name: 'inline', version: '1' })
  server.tool('now', { inputSchema: { type: 'object' } }, () => 'at once')
  server.tool('later', { inputSchema: { type: 'object' } }, async () => {
    await new Promise((resolve) => setImmediate(resolve))
    return 'later'
  })
  const handler = server.httpHandler()
  const served = await app({ '/mcp': handler })
  try {
    const init = await fetch(`${served.base}/mcp`, { method: 'POST', headers: HEADERS, body: JSON.stringify(INIT) })
    const session = { ...HEADERS, 'mcp-session-id': init.headers.get('mcp-session-id'), 'mcp-protocol-version': '2025-11-25' }
    await init.text()
    const call = (id, name) =>
      fetch(`${served.base}/mcp`, { method: 'POST', headers: session, body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: {} } }) })
    const now = await call(2, 'now')
    assert.equal(now.headers.get('content-type'), 'application/json')
    const nowText = await now.text()
    assert.equal(now.headers.get('content-length'), String(Buffer.byteLength(nowText)))
    assert.equal(JSON.parse(nowText).result.content[0].text, 'at once')
    const later = await call(3, 'later')
    assert.equal(later.headers.get('content-type'), 'text/event-stream')
    assert.equal((await messages(later)).at(-1).result.content[0].text, 'later')
  } finally {
    await served.close()
    await server.close()
  }
})

test('a body whose length is said and one sent in chunks are answered alike', async () => {
  const server = weatherServer([])
  const served = await app({ '/mcp': server.httpHandler() })
  try {
    const body = JSON.stringify(INIT)
    const sized = await request(served.base, '/mcp', { headers: { ...HEADERS, 'content-length': Buffer.byteLength(body) }, chunks: [body] }).answered
    const pieces = [body.slice(0, 9), body.slice(9, 30), body.slice(30)]
    const chunked = await request(served.base, '/mcp', { headers: { ...HEADERS, 'transfer-encoding': 'chunked' }, chunks: pieces }).answered
    for (const res of [sized, chunked]) {
      assert.equal(res.statusCode, 200)
      let text = ''
      for await (const chunk of res) text += chunk
      assert.equal(res.headers['content-length'], String(Buffer.byteLength(text)))
      assert.equal(JSON.parse(text).result.serverInfo.name, 'weather')
    }
    assert.notEqual(sized.headers['mcp-session-id'], chunked.headers['mcp-session-id'])
  } finally {
    await served.close()
    await server.close()
  }
})

test('the Host guard: loopback names only, unless allowedHosts names the app', async () => {
  const server = weatherServer([])
  const guarded = server.httpHandler()
  const open = server.httpHandler({ allowedHosts: ['evil.example'] })
  const served = await app({ '/mcp': guarded, '/open': open })
  try {
    const headers = { ...HEADERS, host: 'evil.example' }
    const refused = await request(served.base, '/mcp', { headers, chunks: [JSON.stringify(INIT)] }).answered
    assert.equal(refused.statusCode, 403)
    await readAll(refused)
    const accepted = await request(served.base, '/open', { headers, chunks: [JSON.stringify(INIT)] }).answered
    assert.equal(accepted.statusCode, 200)
    const text = await readAll(accepted)
    assert.match(text, /"name":"weather"/)
  } finally {
    await served.close()
    await server.close()
  }
})

test('a body that stops short of its length is answered 408, in either form', async () => {
  const server = weatherServer([])
  const handler = server.httpHandler({ bodyReadTimeoutMs: 1 })
  const served = await app({ '/mcp': handler })
  try {
    // Read whole first, it stalls past the timeout; fed to the engine, its own timeout answers.
    const req = http.request(`${served.base}/mcp`, { method: 'POST', headers: { ...HEADERS, 'content-length': 100 } })
    const answered = once(req, 'response').then(([res]) => res)
    req.on('error', () => {}) // destroyed below, unfinished
    req.write('{"jsonrpc"')
    const res = await answered
    assert.equal(res.statusCode, 408)
    await readAll(res)
    req.destroy()
    let more
    const body = new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"jsonrpc"'))
        more = controller
      },
    })
    const stalled = await handler.fetch(
      new Request('http://127.0.0.1/mcp', { method: 'POST', headers: { ...HEADERS, 'content-length': '100' }, body, duplex: 'half' }),
    )
    assert.equal(stalled.status, 408)
    await stalled.arrayBuffer()
    more.close()
  } finally {
    await served.close()
    await server.close()
  }
})

test('a body over the limit is refused with 413, in either form', async () => {
  const server = new Server({ name: 'small', version: '1', maxFrameBytes: 4096 })
  const handler = server.httpHandler()
  const served = await app({ '/mcp': handler })
  try {
    const chunk = 'x'.repeat(1500)
    const { answered } = request(served.base, '/mcp', { headers: HEADERS, chunks: [chunk, chunk, chunk, chunk] })
    const res = await answered
    assert.equal(res.statusCode, 413)
    await readAll(res)
    const big = await handler.fetch(new Request('http://127.0.0.1/mcp', { method: 'POST', headers: HEADERS, body: 'y'.repeat(10000) }))
    assert.equal(big.status, 413)
    await big.arrayBuffer()
  } finally {
    await served.close()
    await server.close()
  }
})

function waiterServer() {
  const waiting = signal()
  const aborted = signal()
  const server = new Server({ name: 'waiter', version: '1' }).tool(
    'wait',
    { inputSchema: { type: 'object', properties: { report: { type: 'boolean' } } } },
    async ({ report }, ctx) => {
      if (report) ctx.progress(1, undefined, 'started') // the answer becomes a stream
      ctx.signal.addEventListener('abort', () => aborted.resolve(ctx.signal.reason))
      waiting.resolve()
      await new Promise(() => {})
    },
  )
  return { server, waiting: waiting.promise, aborted: aborted.promise }
}

function modernCall(report) {
  const call = {
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name: 'wait', arguments: { report }, _meta: { ...MODERN_META, progressToken: 'p' } },
  }
  const headers = { ...HEADERS, 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'wait' }
  return { headers, body: JSON.stringify(call) }
}

test('a 2026-07-28 client hanging up mid-stream cancels the call: the tool sees its signal abort', async () => {
  const { server, waiting, aborted } = waiterServer()
  const served = await app({ '/mcp': server.httpHandler() })
  try {
    const { headers, body } = modernCall(true)
    const { req, answered } = request(served.base, '/mcp', { headers, chunks: [body] })
    const res = await answered
    assert.equal(res.statusCode, 200)
    assert.equal(res.headers['content-type'], 'text/event-stream')
    await waiting
    const [first] = await once(res, 'data')
    assert.match(String(first), /notifications\/progress/)
    req.destroy() // the client hangs up
    assert.equal((await aborted).name, 'AbortError')
  } finally {
    await served.close()
    await server.close()
  }
})

test('a 2026-07-28 client hanging up before the answer began cancels the call too', async () => {
  const { server, waiting, aborted } = waiterServer()
  const served = await app({ '/mcp': server.httpHandler() })
  try {
    const { headers, body } = modernCall(false)
    const { req, answered } = request(served.base, '/mcp', { headers, chunks: [body] })
    answered.catch(() => {}) // no answer comes: the client gave up
    req.on('error', () => {})
    await waiting
    req.destroy()
    assert.equal((await aborted).name, 'AbortError')
  } finally {
    await served.close()
    await server.close()
  }
})

test('a 2025-11-25 client hanging up mid-stream is not cancelled: it resumes the stream with Last-Event-ID', async () => {
  const waiting = signal()
  const release = signal()
  const server = new Server({ name: 'resumable', version: '1' }).tool('slow', async (_args, ctx) => {
    ctx.progress(1, 2, 'half')
    waiting.resolve()
    await release.promise
    return ctx.isCancelled ? 'cancelled' : 'finished'
  })
  const hungUp = signal()
  const handler = server.httpHandler()
  const served = await app({
    '/mcp': (req, res) => {
      if (req.headers['x-watched'] !== undefined) res.on('close', () => hungUp.resolve())
      return handler(req, res)
    },
  })
  try {
    const init = await fetch(`${served.base}/mcp`, { method: 'POST', headers: HEADERS, body: JSON.stringify(INIT) })
    const session = init.headers.get('mcp-session-id')
    await init.arrayBuffer()
    const headers = { ...HEADERS, 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' }
    const initialized = await fetch(`${served.base}/mcp`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    })
    assert.equal(initialized.status, 202)
    const call = { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'slow', arguments: {}, _meta: { progressToken: 'p' } } }
    const { req, answered } = request(served.base, '/mcp', { headers: { ...headers, 'x-watched': '1' }, chunks: [JSON.stringify(call)] })
    const res = await answered
    assert.equal(res.headers['content-type'], 'text/event-stream')
    await waiting.promise
    let text = ''
    while (!/\n\n/.test(text)) text += (await once(res, 'data'))[0]
    const eventId = /^id: ?(.+)$/m.exec(text)?.[1]
    assert.ok(eventId, `an event id in ${JSON.stringify(text)}`)
    req.on('error', () => {})
    req.destroy() // the client hangs up
    await hungUp.promise
    release.resolve()
    const resumed = await fetch(`${served.base}/mcp`, {
      headers: { accept: 'text/event-stream', 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25', 'last-event-id': eventId },
    })
    assert.equal(resumed.status, 200)
    const reader = resumed.body.getReader()
    let replay = ''
    while (!replay.includes('"id":5')) {
      const { done, value } = await reader.read()
      assert.ok(!done, `the answer in ${JSON.stringify(replay)}`)
      replay += Buffer.from(value).toString()
    }
    await reader.cancel()
    assert.match(replay, /"text":"finished"/)
  } finally {
    await served.close()
    await server.close()
  }
})

test('handler.fetch: the Request\'s signal aborting is the client hanging up', async () => {
  const { server, waiting, aborted } = waiterServer()
  const handler = server.httpHandler()
  try {
    const { headers, body } = modernCall(true)
    const controller = new AbortController()
    const response = await handler.fetch(new Request('http://localhost/mcp', { method: 'POST', headers, body, signal: controller.signal }))
    assert.equal(response.status, 200)
    const reader = response.body.getReader()
    const first = await reader.read()
    assert.match(Buffer.from(first.value).toString(), /notifications\/progress/)
    await waiting
    controller.abort()
    assert.equal((await aborted).name, 'AbortError')
    // The body ends rather than hanging.
    assert.equal((await reader.read()).done, true)
  } finally {
    await handler.close()
    await server.close()
  }
})

test('a token validator guards the mounted endpoint as it does serveHttp', async () => {
  const server = weatherServer([])
  const handler = server.httpHandler({
    authorizationServers: ['https://auth.example'],
    tokenValidator: async (token) => (token === 'good' ? { subject: 'ada' } : null),
  })
  const post = (headers) =>
    handler.fetch(new Request('http://localhost/mcp', { method: 'POST', headers: { ...HEADERS, ...headers }, body: JSON.stringify(INIT) }))
  try {
    const missing = await post({})
    assert.equal(missing.status, 401)
    assert.match(missing.headers.get('www-authenticate'), /resource_metadata=/)
    await missing.arrayBuffer()
    const good = await post({ authorization: 'Bearer good' })
    assert.equal(good.status, 200)
    assert.equal((await messages(good))[0].result.serverInfo.name, 'weather')
  } finally {
    await handler.close()
    await server.close()
  }
})

test('httpHandler options: the listener\'s are refused, and a bad one is ERR_INVALID_ARG_VALUE', () => {
  const server = new Server({ name: 'options', version: '1' })
  assert.throws(() => server.httpHandler({ port: 8000 }), /no port option/)
  assert.throws(() => server.httpHandler({ maxConnections: 5 }), /no maxConnections option/)
  // Dropped without a word before: the app routes its own /metrics (server.metricsText()).
  assert.throws(() => server.httpHandler({ metricsPath: '/metrics' }), /no metricsPath option/)
  assert.throws(
    () => server.httpHandler({ responseMode: 'xml' }),
    (err) => err instanceof ToolwireError && err.code === 'ERR_INVALID_ARG_VALUE',
  )
  assert.throws(
    () => server.httpHandler({ maxSessions: -1 }),
    (err) => err instanceof ToolwireError && err.code === 'ERR_INVALID_ARG_VALUE',
  )
})
