// 2026-07-28 from JavaScript: a tool returns InputRequired or asks with `await ctx.elicit(...)`
// (replayed each round, rejecting with TOOLWIRE_INPUT_REQUIRED meanwhile), prompts read their
// round, and the request's own state and trace context reach the tool.
import assert from 'node:assert/strict'
import { test } from 'node:test'

import { InputRequired, Server } from '../lib/index.mjs'
import { Client } from './client.mjs'

const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': { elicitation: {}, sampling: {} },
}

function build(seen = []) {
  const server = new Server({ name: 'modern', version: '1', onToolError: (err) => seen.push(err) })
  server.tool('stateful', (_args, ctx) => {
    if (ctx.requestState === 'step-1' && 'ok' in ctx.inputResponses) return 'done'
    return new InputRequired().elicit('ok', { message: 'OK?' }).withState('step-1')
  })
  server.tool('greet', async (_args, ctx) => {
    const answer = await ctx.elicit({ message: 'Name?' })
    return `hello ${answer.content.name}`
  })
  server.tool('swallow', async (_args, ctx) => {
    try {
      await ctx.elicit({ message: 'Name?' })
    } catch (err) {
      assert.equal(err.code, 'TOOLWIRE_INPUT_REQUIRED')
    }
    return 'swallowed'
  })
  server.tool('pair', async (_args, ctx) => {
    const [name, sampled] = await ctx.askAll([
      ['elicitation/create', { message: 'Name?' }],
      ['sampling/createMessage', { messages: [], maxTokens: 5 }],
    ])
    return `${name.content.name} / ${sampled.content.text}`
  })
  server.tool('odd', async (_args, ctx) => {
    try {
      await ctx.askAll([['tools/list', {}]])
      return 'asked'
    } catch (err) {
      return `${err.code}: ${err.message}`
    }
  })
  server.tool('trace', (_args, ctx) => ctx.traceContext.traceparent ?? 'none')
  server.prompt('ask', (_args, round) => {
    const answer = round.inputResponses.ctx
    if (answer) return `context: ${answer.content.v}`
    return new InputRequired().elicit('ctx', { message: 'Context?' })
  })
  return server
}

async function call(client, id, name, extra = {}) {
  client.send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: {}, _meta: META, ...extra } })
  return client.recv()
}

test('a tool returns InputRequired and reads its verified state', async () => {
  const client = new Client(build())
  const first = await call(client, 1, 'stateful')
  assert.equal(first.result.resultType, 'input_required')
  assert.equal(first.result.inputRequests.ok.method, 'elicitation/create')
  const state = first.result.requestState
  assert.notEqual(state, 'step-1', 'sealed')
  const done = await call(client, 2, 'stateful', { inputResponses: { ok: { action: 'accept' } }, requestState: state })
  assert.equal(done.result.content[0].text, 'done')
  const tampered = await call(client, 3, 'stateful', { inputResponses: { ok: { action: 'accept' } }, requestState: `${state}x` })
  assert.deepEqual(tampered.error, { code: -32602, message: 'Invalid or expired requestState' })
})

test('ctx.elicit is replayed each round; the signal is no failure and cannot be swallowed', async () => {
  const seen = []
  const client = new Client(build(seen))
  const first = await call(client, 1, 'greet')
  assert.equal(first.result.resultType, 'input_required')
  const [key] = Object.keys(first.result.inputRequests)
  const second = await call(client, 2, 'greet', { inputResponses: { [key]: { action: 'accept', content: { name: 'Ann' } } } })
  assert.equal(second.result.content[0].text, 'hello Ann')
  const swallowed = await call(client, 3, 'swallow')
  assert.equal(swallowed.result.resultType, 'input_required', 'the engine asks even if the tool caught the rejection')
  assert.deepEqual(seen, [], 'onToolError hears nothing of it')
})

const SAMPLED = { role: 'assistant', content: { type: 'text', text: 'hi' }, model: 'm' }

test('ctx.askAll asks every question in one round', async () => {
  const client = new Client(build())
  const first = await call(client, 1, 'pair')
  const asked = first.result.inputRequests
  assert.deepEqual(Object.values(asked).map((q) => q.method).sort(), ['elicitation/create', 'sampling/createMessage'])
  const answers = Object.fromEntries(Object.entries(asked).map(([key, q]) =>
    [key, q.method === 'elicitation/create' ? { action: 'accept', content: { name: 'Ann' } } : SAMPLED]))
  const done = await call(client, 2, 'pair', { inputResponses: answers })
  assert.equal(done.result.content[0].text, 'Ann / hi')
  const odd = await call(client, 3, 'odd')
  assert.match(odd.result.content[0].text, /^ERR_INVALID_ARG_VALUE: .*"tools\/list" is not a question/)
})

test('ctx.askAll sends one question after the other in a session', async () => {
  const client = new Client(build())
  await client.initialize('2025-11-25', { elicitation: {}, sampling: {} })
  client.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'pair', arguments: {} } })
  const first = await client.recv()
  assert.equal(first.method, 'elicitation/create')
  client.send({ jsonrpc: '2.0', id: first.id, result: { action: 'accept', content: { name: 'Bo' } } })
  const second = await client.recv()
  assert.equal(second.method, 'sampling/createMessage')
  client.send({ jsonrpc: '2.0', id: second.id, result: SAMPLED })
  assert.equal((await client.recv()).result.content[0].text, 'Bo / hi')
})

test('a prompt reads its round', async () => {
  const client = new Client(build())
  const get = { jsonrpc: '2.0', id: 1, method: 'prompts/get', params: { name: 'ask', _meta: META } }
  client.send(get)
  assert.equal((await client.recv()).result.inputRequests.ctx.method, 'elicitation/create')
  get.params.inputResponses = { ctx: { action: 'accept', content: { v: 'here' } } }
  client.send(get)
  assert.equal((await client.recv()).result.messages[0].content.text, 'context: here')
})

test('the trace context reaches the tool', async () => {
  const client = new Client(build())
  const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'
  const answer = await call(client, 1, 'trace', { _meta: { ...META, traceparent } })
  assert.equal(answer.result.content[0].text, traceparent)
})

test('2026-07-28 options are checked and applied', async () => {
  assert.throws(() => new Server({ name: 's', version: '1', cacheScope: 'shared' }), { code: 'ERR_INVALID_ARG_VALUE' })
  assert.throws(() => new Server({ name: 's', version: '1', requestStateKeys: ['short'] }), { code: 'ERR_INVALID_ARG_VALUE' })
  const server = new Server({ name: 's', version: '1', cacheTtlMs: 5000, cacheScope: 'public', requestStateKeys: ['k'.repeat(32)], modernOnly: true })
  const client = new Client(server)
  client.send({ jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: META } })
  const { result } = await client.recv()
  assert.deepEqual([result.ttlMs, result.cacheScope], [5000, 'public'])
  client.send({ jsonrpc: '2.0', id: 2, method: 'initialize', params: { protocolVersion: '2025-11-25' } })
  assert.equal((await client.recv()).error.code, -32022)
})
