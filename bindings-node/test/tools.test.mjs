// Handlers, schemas (JSON Schema, zod 3, zod 4), results, errors, the context, cancellation.
import assert from 'node:assert/strict'
import { setTimeout as delay } from 'node:timers/promises'
import { describe, test } from 'node:test'

import { z as z4 } from 'zod'
import { z as z3 } from 'zod3'

import { Server, ToolwireError, image, text } from '../lib/index.mjs'
import { Client } from './client.mjs'

function newServer(options = {}) {
  return new Server({ name: 'test', version: '1', onToolError() {}, ...options })
}

async function connected(server, capabilities = {}) {
  const client = new Client(server)
  await client.initialize('2025-11-25', capabilities)
  return client
}

async function listed(client, name) {
  client.send({ jsonrpc: '2.0', id: 'list', method: 'tools/list' })
  const { result } = await client.recv()
  return result.tools.find((tool) => tool.name === name)
}

const firstText = (result) => result.content[0]?.text

for (const [label, z] of [['zod 4', z4], ['zod 3', z3]]) {
  describe(`${label} schemas`, () => {
    test('an object schema gives JSON Schema, parsed arguments and defaults', async () => {
      const server = newServer()
      server.tool('greet', {
        description: 'Greets.',
        inputSchema: z.object({
          name: z.string().min(1).describe('who'),
          times: z.number().int().min(1).default(1),
          tone: z.enum(['plain', 'loud']).optional(),
        }),
      }, ({ name, times, tone }) => {
        const line = tone === 'loud' ? `HELLO ${name.toUpperCase()}` : `hello ${name}`
        return Array(times).fill(line).join(' ')
      })
      const client = await connected(server)
      const tool = await listed(client, 'greet')
      assert.equal(tool.inputSchema.type, 'object')
      assert.deepEqual(tool.inputSchema.properties.name, { type: 'string', minLength: 1, description: 'who' })
      assert.equal(tool.inputSchema.properties.times.type, 'integer')
      assert.deepEqual(tool.inputSchema.properties.tone.enum, ['plain', 'loud'])
      assert.deepEqual(tool.inputSchema.required, ['name'])
      assert.equal(firstText(await client.callResult(1, 'greet', { name: 'ada' })), 'hello ada')
      assert.equal(firstText(await client.callResult(2, 'greet', { name: 'ada', times: 2, tone: 'loud' })), 'HELLO ADA HELLO ADA')
      const bad = await client.callResult(3, 'greet', { name: '' })
      assert.equal(bad.isError, true)
      assert.match(firstText(bad), /Invalid arguments for tool "greet"/)
      assert.match(firstText(bad), /\/name/)
    })

    test('a raw shape works like an object schema', async () => {
      const server = newServer()
      server.tool('add', { inputSchema: { a: z.number(), b: z.number().optional(), c: z.number().default(10) } }, ({ a, b, c }) => ({ sum: a + (b ?? 0) + c }))
      const client = await connected(server)
      const tool = await listed(client, 'add')
      assert.deepEqual(tool.inputSchema.required, ['a'])
      assert.equal(tool.inputSchema.properties.c.default, 10)
      assert.equal(tool.inputSchema.properties.a.type, 'number')
      const result = await client.callResult(1, 'add', { a: 2, b: 3 })
      assert.deepEqual(result.structuredContent, { sum: 15 })
      assert.equal(firstText(result), '{"sum":15}')
      const bad = await client.callResult(2, 'add', { a: 'x' })
      assert.equal(bad.isError, true)
    })

    test('refinements JSON Schema cannot express are still checked, with their path', async () => {
      const server = newServer()
      server.tool('range', {
        inputSchema: { lo: z.number(), hi: z.number().refine((n) => n < 1000, 'hi must be below 1000') },
      }, ({ lo, hi }) => `${lo}..${hi}`)
      const client = await connected(server)
      assert.equal(firstText(await client.callResult(1, 'range', { lo: 1, hi: 2 })), '1..2')
      const bad = await client.callResult(2, 'range', { lo: 1, hi: 5000 })
      assert.equal(bad.isError, true)
      assert.match(firstText(bad), /\/hi: hi must be below 1000/)
    })

    test('an output schema is listed and enforced', async () => {
      const server = newServer()
      server.tool('stats', {
        inputSchema: z.object({ wrong: z.boolean() }),
        outputSchema: z.object({ count: z.number() }),
      }, ({ wrong }) => (wrong ? { count: 'many' } : { count: 3 }))
      const client = await connected(server)
      const tool = await listed(client, 'stats')
      assert.deepEqual(tool.outputSchema.required, ['count'])
      assert.deepEqual((await client.callResult(1, 'stats', { wrong: false })).structuredContent, { count: 3 })
      const bad = await client.callResult(2, 'stats', { wrong: true })
      assert.equal(bad.isError, true)
      assert.match(firstText(bad), /outputSchema/)
    })
  })
}

test('integral bounds stay integers on the wire (not 9007199254740991.0)', async () => {
  const server = newServer()
  server.tool('count', { inputSchema: z4.object({ n: z4.number().int() }) }, ({ n }) => n)
  const client = await connected(server)
  const tool = await listed(client, 'count')
  assert.equal(tool.inputSchema.properties.n.maximum, Number.MAX_SAFE_INTEGER)
  const text = client.texts.find((message) => message.includes('"id":"list"'))
  assert.match(text, /"maximum":9007199254740991[,}]/)
  assert.doesNotMatch(text, /9007199254740991\.0/)
})

test('async zod refinements are awaited', async () => {
  const server = newServer()
  server.tool('slowcheck', {
    inputSchema: z4.object({ n: z4.number().refine(async (n) => { await delay(1); return n > 0 }, 'n must be positive') }),
  }, ({ n }) => `n=${n}`)
  const client = await connected(server)
  assert.equal(firstText(await client.callResult(1, 'slowcheck', { n: 2 })), 'n=2')
  assert.match(firstText(await client.callResult(2, 'slowcheck', { n: -1 })), /n must be positive/)
})

test('JSON Schema tools get the validated arguments as they came', async () => {
  const server = newServer()
  server.tool('tags', {
    inputSchema: { type: 'object', properties: { tags: { type: 'array', items: { type: 'string' } } }, required: ['tags'] },
  }, ({ tags }) => tags.join('+'))
  const client = await connected(server)
  assert.equal(firstText(await client.callResult(1, 'tags', { tags: ['a', 'b'] })), 'a+b')
  const bad = await client.callResult(2, 'tags', { tags: [1] })
  assert.equal(bad.isError, true)
  assert.match(firstText(bad), /\/tags\/0/)
})

test('return values: text, structured, content blocks, nothing, numbers', async () => {
  const server = newServer()
  server.tool('str', () => 'plain')
  server.tool('obj', () => ({ a: 1 }))
  server.tool('blocks', () => ({ content: [text('t'), image(Buffer.from([1, 2, 3]), 'image/png')] }))
  server.tool('nothing', () => undefined)
  server.tool('null', () => null)
  server.tool('number', () => 42)
  server.tool('promise', async () => 'later')
  server.tool('array', () => [1, 'two'])
  server.tool('bool', () => false)
  server.tool('bigint', () => 12345678901234567890n)
  server.tool('nestedBigint', () => ({ n: 1n }))
  const client = await connected(server)
  assert.deepEqual(await client.callResult(1, 'str'), { content: [{ type: 'text', text: 'plain' }] })
  assert.deepEqual(await client.callResult(2, 'obj'), { content: [{ type: 'text', text: '{"a":1}' }], structuredContent: { a: 1 } })
  assert.deepEqual(await client.callResult(3, 'blocks'), {
    content: [{ type: 'text', text: 't' }, { type: 'image', data: 'AQID', mimeType: 'image/png' }],
  })
  assert.deepEqual(await client.callResult(4, 'nothing'), { content: [] })
  assert.deepEqual(await client.callResult(5, 'null'), { content: [] })
  assert.equal(firstText(await client.callResult(6, 'number')), '42')
  assert.equal(firstText(await client.callResult(7, 'promise')), 'later')
  assert.deepEqual(await client.callResult(8, 'array'), { content: [{ type: 'text', text: '[1,"two"]' }] })
  assert.deepEqual(await client.callResult(9, 'bool'), { content: [{ type: 'text', text: 'false' }] })
  assert.deepEqual(await client.callResult(10, 'bigint'), { content: [{ type: 'text', text: '12345678901234567890' }] })
  const nested = await client.callResult(11, 'nestedBigint')
  assert.equal(nested.isError, true)
  assert.match(firstText(nested), /BigInt/)
})

test('an object with a content array of blocks is the whole result; one whose content is data is structured content', async () => {
  const server = newServer()
  const returns = {
    whole: { content: [text('hi')], structuredContent: { n: 1 }, _meta: { m: true } },
    failed: { content: [text('bad input')], isError: true },
    empty: { content: [] },
    stringContent: { content: 'not an array' },
    numberContent: { content: [1, 2] },
    besideAnotherKey: { content: [text('t')], total: 3 },
    untypedBlocks: { content: [{ text: 'no type' }] },
  }
  for (const [name, value] of Object.entries(returns)) server.tool(name, async () => value)
  const client = await connected(server)
  let id = 0
  const call = (name) => client.callResult(++id, name)
  assert.deepEqual(await call('whole'), { content: [{ type: 'text', text: 'hi' }], structuredContent: { n: 1 }, _meta: { m: true } })
  assert.deepEqual(await call('failed'), { content: [{ type: 'text', text: 'bad input' }], isError: true })
  assert.deepEqual(await call('empty'), { content: [] })
  for (const name of ['stringContent', 'numberContent', 'besideAnotherKey', 'untypedBlocks']) {
    const result = await call(name)
    assert.deepEqual(result.structuredContent, returns[name], name)
    assert.deepEqual(JSON.parse(firstText(result)), returns[name], name)
    assert.equal(result.isError, undefined, name)
  }
})

test('a throw or a rejection is an isError result with the message; the stack goes to onToolError', async () => {
  const seen = []
  const server = newServer({ onToolError: (err, tool) => seen.push([tool, err.stack]) })
  server.tool('throws', () => { throw new Error('sync boom') })
  server.tool('rejects', async () => { await delay(1); throw new RangeError('async boom') })
  server.tool('throwsString', () => { throw 'just a string' })
  const client = await connected(server)
  const sync = await client.callResult(1, 'throws')
  assert.deepEqual(sync, { content: [{ type: 'text', text: 'sync boom' }], isError: true })
  const rejected = await client.callResult(2, 'rejects')
  assert.deepEqual(rejected, { content: [{ type: 'text', text: 'async boom' }], isError: true })
  assert.equal(firstText(await client.callResult(3, 'throwsString')), 'just a string')
  assert.equal(seen.length, 3)
  assert.equal(seen[0][0], 'throws')
  assert.match(seen[0][1], /tools\.test\.mjs/, 'the stack reaches the log hook')
  assert.ok(!JSON.stringify(sync).includes('tools.test.mjs'), 'the stack never reaches the client')
})

test('an invalid or unserialisable result is an error result, and the server keeps serving', async () => {
  const server = newServer()
  // A whole result (a content array of typed blocks) whose text block has no text.
  server.tool('bad', () => ({ content: [{ type: 'text' }] }))
  server.tool('cycle', () => {
    const value = { a: 1 }
    value.self = value
    return value
  })
  server.tool('ok', () => 'fine')
  const client = await connected(server)
  const bad = await client.callResult(1, 'bad')
  assert.equal(bad.isError, true)
  assert.match(firstText(bad), /invalid tool result/)
  const cycle = await client.callResult(3, 'cycle')
  assert.equal(cycle.isError, true)
  assert.match(firstText(cycle), /circular/)
  assert.equal(firstText(await client.callResult(2, 'ok')), 'fine')
})

/** A Promise and the function that resolves it. */
function signalled() {
  let resolve
  const promise = new Promise((r) => { resolve = r })
  return { promise, resolve }
}

test('the signal aborts with an AbortError when the client cancels; isCancelled and cancelled() follow', async () => {
  const server = newServer()
  const started = signalled()
  const observed = signalled()
  server.tool('wait', async (_args, ctx) => {
    const before = ctx.isCancelled
    started.resolve()
    try {
      await delay(10_000, undefined, { signal: ctx.signal })
      return 'not cancelled'
    } catch (err) {
      observed.resolve({ before, name: ctx.signal.reason.name, isCancelled: ctx.isCancelled })
      throw err
    }
  })
  server.tool('waitCancelled', async (_args, ctx) => {
    started.resolve()
    await ctx.cancelled()
    observed.resolve({ isCancelled: ctx.isCancelled })
    return 'not sent'
  })
  const client = await connected(server)
  client.call(1, 'wait')
  await started.promise
  client.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1, reason: 'user' } })
  assert.deepEqual(await observed.promise, { before: false, name: 'AbortError', isCancelled: true })
  // A cancelled call is not answered: the next frame is the ping's answer.
  client.send({ jsonrpc: '2.0', id: 'ping', method: 'ping' })
  assert.deepEqual(await client.recv(), { jsonrpc: '2.0', id: 'ping', result: {} })

  const again = [signalled(), signalled()]
  Object.assign(started, again[0])
  Object.assign(observed, again[1])
  client.call(2, 'waitCancelled')
  await started.promise
  client.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 2 } })
  assert.deepEqual(await observed.promise, { isCancelled: true })
  client.send({ jsonrpc: '2.0', id: 'ping2', method: 'ping' })
  assert.deepEqual(await client.recv(), { jsonrpc: '2.0', id: 'ping2', result: {} })
})

test('ctx.cancelled() resolves once a call is over, and isCancelled then reads true', async () => {
  const server = newServer()
  let kept
  server.tool('quick', (_args, ctx) => {
    kept = ctx
    return String(ctx.isCancelled)
  })
  const client = await connected(server)
  assert.equal(firstText(await client.callResult(1, 'quick')), 'false')
  await kept.cancelled()
  assert.equal(kept.isCancelled, true)
  assert.equal(typeof kept.cancelled, 'function')
})

test('the signal aborts with a TimeoutError past the deadline; the client gets an error result', async () => {
  const server = newServer()
  const aborted = signalled()
  server.tool('slow', { timeoutMs: 50 }, async (_args, ctx) => {
    ctx.signal.addEventListener('abort', () => aborted.resolve(ctx.signal.reason.name))
    await delay(5_000, undefined, { signal: ctx.signal }).catch(() => {})
    return 'too late'
  })
  const client = await connected(server)
  const result = await client.callResult(1, 'slow')
  assert.equal(result.isError, true)
  assert.match(firstText(result), /timed out after 50 ms/)
  assert.equal(await aborted.promise, 'TimeoutError')
})

test('progress goes out only with a token; logs follow the level the client set', async () => {
  const server = newServer()
  server.tool('work', (_args, ctx) => {
    const sent = [ctx.wantsProgress, ctx.progress(1, 2, 'half'), ctx.progress(2, 2)]
    ctx.log('debug', 'hidden')
    ctx.log('warning', { detail: 'shown' }, 'worker')
    return JSON.stringify(sent)
  })
  const client = await connected(server)
  client.send({ jsonrpc: '2.0', id: 'lvl', method: 'logging/setLevel', params: { level: 'info' } })
  assert.deepEqual((await client.recv()).result, {})
  client.call(1, 'work', {}, { progressToken: 'p1' })
  const frames = [await client.recv(), await client.recv(), await client.recv(), await client.recv()]
  assert.deepEqual(frames[0], { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 'p1', progress: 1, total: 2, message: 'half' } })
  assert.deepEqual(frames[1].params, { progressToken: 'p1', progress: 2, total: 2 })
  assert.deepEqual(frames[2], { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'warning', logger: 'worker', data: { detail: 'shown' } } })
  assert.equal(firstText(frames[3].result), '[true,true,true]')
  client.call(2, 'work')
  const quiet = await client.recv()
  assert.equal(quiet.method, 'notifications/message')
  assert.equal(firstText((await client.recv()).result), '[false,false,false]')
})

test('the context knows the request, the tool and the client', async () => {
  const server = newServer()
  server.tool('whoami', (_args, ctx) => ({
    requestId: ctx.requestId, tool: ctx.toolName, version: ctx.protocolVersion, client: ctx.clientInfo.name,
    caps: ctx.clientCapabilities,
  }))
  const client = await connected(server, { roots: {} })
  const { structuredContent } = await client.callResult('req-7', 'whoami')
  assert.deepEqual(structuredContent, { requestId: 'req-7', tool: 'whoami', version: '2025-11-25', client: 'node-test', caps: { roots: {} } })
})

test('an unknown log level throws in the handler (an error result)', async () => {
  const server = newServer()
  server.tool('loud', (_args, ctx) => ctx.log('loud', 'x'))
  const client = await connected(server)
  const result = await client.callResult(1, 'loud')
  assert.equal(result.isError, true)
  assert.match(firstText(result), /unknown log level "loud"/)
})

test('elicitation round trip; a missing capability is a ToolwireError with a code', async () => {
  const server = newServer()
  server.tool('ask', async (_args, ctx) => {
    const answer = await ctx.elicit({ message: 'Name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } } } })
    return `hello ${answer.content.name}`
  })
  server.tool('sample', async (_args, ctx) => {
    try {
      await ctx.sample({ messages: [], maxTokens: 5 })
      return 'sampled'
    } catch (err) {
      return `${err instanceof ToolwireError} ${err.code}`
    }
  })
  const client = await connected(server, { elicitation: {} })
  client.call(1, 'ask')
  const request = await client.recv()
  assert.equal(request.method, 'elicitation/create')
  assert.equal(request.params.message, 'Name?')
  client.send({ jsonrpc: '2.0', id: request.id, result: { action: 'accept', content: { name: 'ada' } } })
  assert.equal(firstText((await client.recv()).result), 'hello ada')
  assert.equal(firstText(await client.callResult(2, 'sample')), 'true TOOLWIRE_CAPABILITY')
})

test('listRoots resolves to the list of roots', async () => {
  const server = newServer()
  server.tool('roots', async (_args, ctx) => {
    const roots = await ctx.listRoots({ timeoutMs: 5_000 })
    return { isArray: Array.isArray(roots), roots }
  })
  const client = await connected(server, { roots: {} })
  client.call(1, 'roots')
  const request = await client.recv()
  assert.equal(request.method, 'roots/list')
  const roots = [{ uri: 'file:///work', name: 'work' }, { uri: 'file:///tmp', _meta: { k: 1 } }]
  client.send({ jsonrpc: '2.0', id: request.id, result: { roots } })
  assert.deepEqual((await client.recv()).result.structuredContent, { isArray: true, roots })
})

for (const [kind, capability, method, ask] of [
  ['sample', 'sampling', 'sampling/createMessage', (ctx, options) => ctx.sample({ messages: [], maxTokens: 5 }, options)],
  ['elicit', 'elicitation', 'elicitation/create', (ctx, options) => ctx.elicit({ message: 'Name?', requestedSchema: { type: 'object' } }, options)],
  ['listRoots', 'roots', 'roots/list', (ctx, options) => ctx.listRoots(options)],
]) {
  test(`${kind} with { timeoutMs }: a client that never answers gives TOOLWIRE_TIMEOUT, and the request is cancelled`, async () => {
    const server = newServer()
    server.tool('ask', async (_args, ctx) => {
      try {
        await ask(ctx, { timeoutMs: 50 })
        return 'answered'
      } catch (err) {
        return `${err instanceof ToolwireError} ${err.code} ${err.message}`
      }
    })
    const client = await connected(server, { [capability]: {} })
    client.call(1, 'ask')
    const request = await client.recv()
    assert.equal(request.method, method)
    // Never answered: the engine gives up, tells the client, and the tool gets the error.
    const cancelled = await client.recv()
    assert.equal(cancelled.method, 'notifications/cancelled')
    assert.equal(cancelled.params.requestId, request.id)
    const answer = await client.recv()
    assert.equal(answer.id, 1)
    const [, waited] = firstText(answer.result).match(/^true TOOLWIRE_TIMEOUT no response from the client after (\d+) ms$/)
    assert.ok(Number(waited) >= 50 && Number(waited) < 5_000, `waited ${waited} ms: the given timeout, not the default`)
  })
}

test('a client error answer becomes TOOLWIRE_CLIENT_ERROR with rpcCode and data', async () => {
  const server = newServer()
  server.tool('roots', async (_args, ctx) => {
    try {
      await ctx.listRoots()
      return 'listed'
    } catch (err) {
      return `${err.code} ${err.rpcCode} ${err.message} ${JSON.stringify(err.data)}`
    }
  })
  const client = await connected(server, { roots: {} })
  client.call(1, 'roots')
  const request = await client.recv()
  assert.equal(request.method, 'roots/list')
  client.send({ jsonrpc: '2.0', id: request.id, error: { code: -32001, message: 'no roots here', data: { why: 'test' } } })
  assert.equal(firstText((await client.recv()).result), 'TOOLWIRE_CLIENT_ERROR -32001 no roots here {"why":"test"}')
})

test('ctx.request sends the method it is given, even one named like a client-request kind', async () => {
  const server = newServer()
  server.tool('ask', async (_args, ctx) => JSON.stringify(await ctx.request('sample', { q: 1 })))
  const client = await connected(server)
  client.call(1, 'ask')
  const request = await client.recv()
  assert.equal(request.method, 'sample')
  assert.equal(request.params.q, 1)
  client.send({ jsonrpc: '2.0', id: request.id, result: { a: 2 } })
  assert.equal(firstText((await client.recv()).result), '{"a":2}')
})

test('registration errors are ToolwireErrors with code TOOLWIRE_REGISTRATION', () => {
  const server = newServer()
  server.tool('dup', () => 'x')
  for (const [name, config] of [['dup', {}], ['bad name', {}], ['s', { inputSchema: { type: 'object', properties: { a: { type: 'nonsense' } } } }]]) {
    assert.throws(() => server.tool(name, config, () => 'x'), (err) => err instanceof ToolwireError && err.code === 'TOOLWIRE_REGISTRATION')
  }
  assert.throws(() => server.tool('t', { inputSchema: 'nope' }, () => 'x'), TypeError)
  assert.throws(() => server.tool('t', { colour: 'red' }, () => 'x'), /unknown tool option "colour"/)
  assert.throws(() => server.tool('t', {}, 'not a function'), TypeError)
  assert.throws(() => new Server({ name: 'x' }), TypeError)
})

test('a refused server option is a ToolwireError with code ERR_INVALID_ARG_VALUE', () => {
  for (const options of [{ maxConcurrentCalls: 0 }, { maxConcurrentCallsPerSession: 0 }, { maxConcurrentCallsPerPrincipal: 0 }, { pageSize: 0 }]) {
    assert.throws(
      () => newServer(options),
      (err) => err instanceof ToolwireError && err.code === 'ERR_INVALID_ARG_VALUE' && /at least 1/.test(err.message),
    )
  }
})

test('a negative, fractional or too large count is refused, not wrapped around', () => {
  for (const options of [{ maxConcurrentCalls: -1 }, { maxFrameBytes: 1.5 }, { pageSize: 2 ** 32 }]) {
    assert.throws(
      () => newServer(options),
      (err) => err instanceof ToolwireError && err.code === 'ERR_INVALID_ARG_VALUE' && /whole number from 0/.test(err.message),
    )
  }
})

test('tools added or removed while connected: list_changed, then the new list', async () => {
  const server = newServer()
  server.tool('a', () => 'a')
  const client = await connected(server)
  server.tool('b', () => 'b')
  assert.equal(server.removeTool('a'), true)
  assert.equal(server.removeTool('a'), false)
  assert.deepEqual(server.toolNames, ['b'])
  const note = await client.recv()
  assert.equal(note.method, 'notifications/tools/list_changed')
  assert.equal(firstText(await client.callResult(1, 'b')), 'b')
  // A later change is a fence: had the first two been announced twice, the second
  // announcement would come before this one's.
  server.tool('c', () => 'c')
  assert.equal((await client.recv()).method, 'notifications/tools/list_changed')
  client.send({ jsonrpc: '2.0', id: 'list', method: 'tools/list' })
  assert.deepEqual((await client.recv()).result.tools.map((tool) => tool.name), ['b', 'c'])
})

test('calls queued behind a concurrency limit run once a slot frees (polled on the JS thread)', async () => {
  const server = newServer()
  let running = 0
  let most = 0
  server.tool('one', { maxConcurrency: 1 }, async ({ i }) => {
    running++
    most = Math.max(most, running)
    await delay(5)
    running--
    return `done ${i}`
  })
  server.tool('mixed', { maxConcurrency: 1 }, ({ wait }) => (wait ? delay(20).then(() => 'waited') : 'at once'))
  const client = await connected(server)
  for (let i = 0; i < 5; i++) client.call(i, 'one', { i })
  const answers = []
  for (let i = 0; i < 5; i++) answers.push(await client.recv())
  assert.deepEqual(answers.map((a) => firstText(a.result)).sort(), [0, 1, 2, 3, 4].map((i) => `done ${i}`))
  assert.equal(most, 1)
  // A plain (non-Promise) return from a call that waited for its slot.
  client.call('m1', 'mixed', { wait: true })
  client.call('m2', 'mixed', { wait: false })
  const mixed = [await client.recv(), await client.recv()]
  assert.deepEqual(mixed.map((a) => [a.id, firstText(a.result)]), [['m1', 'waited'], ['m2', 'at once']])
})

test('1,000 concurrent calls, sync and async, all answered', async () => {
  const server = newServer()
  server.tool('echo', { inputSchema: { text: z4.string() } }, ({ text }) => text)
  server.tool('later', { inputSchema: { text: z4.string() } }, async ({ text }) => { await delay(1); return text })
  const client = await connected(server)
  const n = 1000
  for (let i = 0; i < n; i++) client.call(i, i % 2 ? 'later' : 'echo', { text: `m${i}` })
  const seen = new Set()
  for (let i = 0; i < n; i++) {
    const answer = await client.recv()
    assert.equal(firstText(answer.result), `m${answer.id}`)
    seen.add(answer.id)
  }
  assert.equal(seen.size, n)
})

test('sessions are isolated', async () => {
  const server = newServer()
  server.tool('who', (_args, ctx) => ctx.clientInfo.name)
  const a = new Client(server)
  const b = new Client(server)
  await a.initialize()
  b.send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'other', version: '1' } } })
  assert.equal((await b.recv()).result.protocolVersion, '2025-06-18')
  b.send({ jsonrpc: '2.0', method: 'notifications/initialized' })
  assert.equal(firstText(await a.callResult(1, 'who')), 'node-test')
  assert.equal(firstText(await b.callResult(1, 'who')), 'other')
  assert.deepEqual(a.frames, [], 'b\'s traffic never reaches a')
})
