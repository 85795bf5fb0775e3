// The server's lifespan: set up once before serving, its value reached from tools
// (ctx.lifespanContext), resources and prompts (round.lifespanContext); calls that arrive while
// it starts wait for it; close() ends it after the calls in flight; a failed start is an error.
import assert from 'node:assert/strict'
import { test } from 'node:test'

import { Server } from '../lib/index.mjs'
import { connect, replayVector, TestClient } from '../lib/testing.mjs'
import { Client, runNodeScript } from './client.mjs'

function pooledServer(events, gate = Promise.resolve()) {
  return new Server({
    name: 'pooled',
    version: '1',
    async *lifespan(server) {
      await gate
      events.push(`open for ${server.constructor.name}`)
      const pool = { queries: 0, query: (sql) => `${sql} #${++pool.queries}` }
      try {
        yield pool
      } finally {
        events.push(`closed after ${pool.queries} queries`)
      }
    },
  })
    .tool('query', ({ sql }, ctx) => ctx.lifespanContext.query(sql))
    .resource('db://stats', { name: 'stats' }, (_uri, _vars, round) => `queries so far: ${round.lifespanContext.queries}`)
    .prompt('ask', (_args, round) => `pool has ${round.lifespanContext.queries} queries`)
}

test('the lifespan value reaches tools, resources and prompts; the last test client\'s close() cleans up once', async () => {
  const events = []
  const server = pooledServer(events)
  const first = await connect(server)
  const second = await connect(server)
  assert.equal((await first.callTool('query', { sql: 'select 1' })).content[0].text, 'select 1 #1')
  assert.equal((await second.callTool('query', { sql: 'select 2' })).content[0].text, 'select 2 #2')
  assert.equal((await first.readResource('db://stats')).contents[0].text, 'queries so far: 2')
  assert.equal((await second.getPrompt('ask')).messages[0].content.text, 'pool has 2 queries')
  await first.close()
  assert.deepEqual(events, ['open for Server'], 'the other test client still holds it')
  await second.close()
  assert.deepEqual(events, ['open for Server', 'closed after 2 queries'])
  await server.close()
  assert.equal(events.length, 2)
  // A later serve starts it again.
  const again = await connect(server)
  assert.equal((await again.callTool('query', { sql: 'select 3' })).content[0].text, 'select 3 #1')
  await again.close()
  assert.equal(events.length, 4)
})

test('calls that arrive while the lifespan starts wait for it', async () => {
  const events = []
  let open
  const server = pooledServer(events, new Promise((resolve) => (open = resolve)))
  // A raw session: its first call starts the lifespan; both calls wait for it.
  const client = new Client(server)
  await client.initialize()
  client.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'query', arguments: { sql: 'early' } } })
  client.send({ jsonrpc: '2.0', id: 2, method: 'resources/read', params: { uri: 'db://stats' } })
  assert.deepEqual(events, [])
  open()
  const answers = [await client.recv(), await client.recv()].sort((a, b) => a.id - b.id)
  assert.equal(answers[0].result.content[0].text, 'early #1')
  // Both waited for the pool; which of the two runs first once it is up is core's to pick.
  assert.match(answers[1].result.contents[0].text, /^queries so far: [01]$/)
  await server.close()
  assert.deepEqual(events, ['open for Server', 'closed after 1 queries'])
})

test('close() lets calls in flight finish before the clean-up runs', async () => {
  const events = []
  let release
  const server = pooledServer(events)
  const http = await server.serveHttp('127.0.0.1', 0)
  let started
  const running = new Promise((resolve) => (started = resolve))
  server.tool('slow', async (_args, ctx) => {
    events.push('slow started')
    started()
    await new Promise((resolve) => (release = resolve))
    return ctx.lifespanContext.query('late')
  })
  const client = await connect(server)
  const call = client.callTool('slow')
  await running
  // close() ends the HTTP server and the test client's session (draining it), then the lifespan.
  const closing = server.close()
  release()
  await closing
  await http.closed
  assert.equal((await call).content[0].text, 'late #1')
  assert.deepEqual(events, ['open for Server', 'slow started', 'closed after 1 queries'])
  await client.close()
})

test('a lifespan that fails to start: connect and serveHttp reject, calls answer an error', async () => {
  const failing = () =>
    new Server({
      name: 'broken',
      version: '1',
      lifespan: async () => {
        throw new Error('database unreachable')
      },
      onToolError: () => {},
    }).tool('query', () => 'never')
  await assert.rejects(connect(failing()), /database unreachable/)
  await assert.rejects(failing().serveHttp('127.0.0.1', 0), /database unreachable/)
  const client = new Client(failing())
  await client.initialize()
  client.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'query', arguments: {} } })
  const answer = await client.recv()
  assert.equal(answer.result.isError, true)
  assert.equal(answer.result.content[0].text, "the server's lifespan failed to start: database unreachable")
  assert.throws(() => new Server({ name: 'x', version: '1', lifespan: {} }), /lifespan must be a function/)
})

test('a plain async lifespan gives its value; no lifespan gives undefined', async () => {
  const server = new Server({ name: 'plain', version: '1', lifespan: async () => ({ region: 'eu' }) })
  server.tool('region', (_args, ctx) => ctx.lifespanContext.region)
  const client = await connect(server)
  assert.equal((await client.callTool('region')).content[0].text, 'eu')
  await client.close()
  await server.close()
  const bare = new Server({ name: 'bare', version: '1' }).tool('value', (_args, ctx) => String(ctx.lifespanContext))
  const other = await connect(bare)
  assert.equal((await other.callTool('value')).content[0].text, 'undefined')
  await other.close()
})

test('serveStdio: the lifespan runs around serving; a failed start ends serving with its error', async () => {
  const script = (lifespan) => `
    const { Server } = require(${JSON.stringify(new URL('../lib/index.js', import.meta.url).pathname)})
    const server = new Server({ name: 's', version: '1', lifespan: ${lifespan} })
    server.tool('value', (_args, ctx) => ctx.lifespanContext)
    server.serveStdio().then(() => process.stderr.write('served\\n'), (err) => { process.stderr.write('failed: ' + err.message + '\\n'); process.exitCode = 3 })
  `
  const run = (lifespan, input) =>
    runNodeScript(script(lifespan), { input: input.map((m) => JSON.stringify(m) + '\n').join('') })
  const init = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } }
  const call = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'value', arguments: {} } }
  const good = await run("async function* () { try { yield 'pooled' } finally { process.stderr.write('cleaned\\n') } }", [init, call])
  assert.equal(good.code, 0, good.stderr)
  const answers = good.stdout.trim().split('\n').map((line) => JSON.parse(line))
  assert.equal(answers.find((a) => a.id === 1).result.content[0].text, 'pooled')
  // End of input ends the lifespan (its finally) before serveStdio resolves.
  assert.match(good.stderr, /^cleaned\nserved$/m)
  const bad = await run("async () => { throw new Error('no database') }", [init])
  assert.equal(bad.code, 3, bad.stderr)
  assert.match(bad.stderr, /failed: no database/)
})

test("a connect() session's first call starts the lifespan, which runs until close() however many sessions come and go", async () => {
  const events = []
  const server = pooledServer(events)
  const first = new Client(server)
  const second = new Client(server)
  await first.initialize()
  await second.initialize()
  assert.deepEqual(events, [], 'a session holds nothing: no call yet, no start')
  assert.equal((await first.callResult(1, 'query', { sql: 'one' })).content[0].text, 'one #1')
  await second.finish()
  await first.finish()
  // The sessions came and went; the app's set-up stays for the next one.
  assert.deepEqual(events, ['open for Server'])
  const third = new Client(server)
  await third.initialize()
  assert.equal((await third.callResult(1, 'query', { sql: 'two' })).content[0].text, 'two #2')
  await server.close()
  assert.deepEqual(events, ['open for Server', 'closed after 2 queries'])
})

test('a call on a session holding nothing starts the lifespan and waits for it; close() ends it', async () => {
  const events = []
  let open
  const server = pooledServer(events, new Promise((resolve) => (open = resolve)))
  // A test client made by hand holds nothing (connect() would hold the lifespan first).
  const client = new TestClient(server)
  await client.start()
  const call = client.callTool('query', { sql: 'first' })
  const second = client.readResource('db://stats')
  // The start the first call began waits for `open`; both calls wait for it (none fails).
  assert.deepEqual(events, [])
  open()
  assert.equal((await call).content[0].text, 'first #1')
  assert.match((await second).contents[0].text, /^queries so far: [01]$/)
  assert.deepEqual(events, ['open for Server'])
  await server.close()
  assert.deepEqual(events, ['open for Server', 'closed after 1 queries'])
})

test('the last serve ending stops the lifespan once a call in flight elsewhere has finished', async () => {
  const events = []
  const server = pooledServer(events)
  let started
  let release
  const running = new Promise((resolve) => (started = resolve))
  server.tool('slow', async (_args, ctx) => {
    events.push('slow started')
    started()
    await new Promise((resolve) => (release = resolve))
    const answer = ctx.lifespanContext.query('late')
    events.push('slow finished')
    return answer
  })
  // The one serve: a test client of connect(). The slow call runs on one made by hand, which
  // holds nothing.
  const serve = await connect(server)
  await serve.callTool('query', { sql: 'warm' })
  const bystander = new TestClient(server)
  await bystander.start()
  const call = bystander.callTool('slow')
  await running
  const ending = serve.close()
  release()
  await ending
  // The serve's end waited for the clean-up, and the clean-up for the call.
  assert.deepEqual(events, ['open for Server', 'slow started', 'slow finished', 'closed after 2 queries'])
  assert.equal((await call).content[0].text, 'late #2')
  await bystander.close()
  await server.close()
})

test('a failed start is the waiters\' error, what the lifespan threw; the next hold tries again', async () => {
  const thrown = new Error('database unreachable')
  let attempts = 0
  const server = new Server({
    name: 'flaky',
    version: '1',
    lifespan: async () => {
      attempts += 1
      if (attempts === 1) throw thrown
      return { attempt: attempts }
    },
  }).tool('attempt', (_args, ctx) => String(ctx.lifespanContext.attempt))
  const [first, second] = await Promise.allSettled([server.start(), server.start()])
  assert.equal(first.reason, thrown)
  assert.equal(second.reason, thrown)
  assert.equal(attempts, 1, 'one start for both')
  await server.start()
  const client = await connect(server)
  assert.equal((await client.callTool('attempt')).content[0].text, '2')
  await client.close()
  await server.close()
  assert.equal(attempts, 2)
})

test('a test client whose connect fails lets go of its hold: the lifespan is cleaned up', async () => {
  const events = []
  const server = pooledServer(events)
  // The hold is taken, then the client's options are refused: connect rejects after the
  // lifespan started.
  await assert.rejects(connect(server, { clientInfo: 'not an object' }), /clientInfo/)
  assert.deepEqual(events, ['open for Server', 'closed after 0 queries'])
  await server.close()
  assert.equal(events.length, 2)
})

test('a vector replay holds nothing: a case without calls starts no lifespan', async () => {
  const events = []
  const server = pooledServer(events)
  await replayVector(server, {
    name: 'lifespan/ping-only',
    initialize: '2025-11-25',
    steps: [
      { send: { jsonrpc: '2.0', id: 1, method: 'ping' } },
      { expect: { jsonrpc: '2.0', id: 1, result: {} } },
    ],
  })
  assert.deepEqual(events, [])
  await server.close()
  assert.deepEqual(events, [])
})

test('a connect() session with nothing else to keep Node running still answers a call that waits for the lifespan', async () => {
  // The session's only link to the loop is its calls: the start is asked for from the engine's
  // thread, and its answer comes back the same way. The process must not exit before it.
  const script = `
    const { Server } = require(${JSON.stringify(new URL('../lib/index.js', import.meta.url).pathname)})
    const server = new Server({ name: 's', version: '1', lifespan: async () => 'pooled' })
    server.tool('value', (_args, ctx) => ctx.lifespanContext)
    const session = server.connect((message) => process.stdout.write(message + '\\n'))
    session.handleFrame(JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } }))
    session.handleFrame(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }))
    session.handleFrame(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'value', arguments: {} } }))
  `
  const { code, stdout, stderr } = await runNodeScript(script)
  assert.equal(code, 0, stderr)
  const answers = stdout.trim().split('\n').map((line) => JSON.parse(line))
  assert.equal(answers.find((a) => a.id === 1)?.result.content[0].text, 'pooled', stdout)
})
