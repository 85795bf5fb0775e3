// Resources, prompts and completers get a context as tools do (their last argument): progress
// to the request's token, logging, the client's info, cancellation through `signal`, and the
// lifespan's value, with the request's own 2026-07-28 round.
import assert from 'node:assert/strict'
import { test } from 'node:test'

import { InputRequired, Server } from '../lib/index.mjs'
import { connect } from '../lib/testing.mjs'
import { Client } from './client.mjs'

function contextServer(hooks = {}) {
  const server = new Server({ name: 'ctx', version: '1', lifespan: async () => ({ region: 'eu' }) })
  server.resource('memo://{name}', { name: 'memo', mimeType: 'text/plain' }, async (uri, { name }, ctx) => {
    ctx.progress(1, 2, 'reading')
    ctx.log('info', { reading: uri })
    return `${name} for ${ctx.clientInfo?.name} in ${ctx.lifespanContext.region} (${ctx.toolName})`
  })
  server.resource('memo://slow', { name: 'slow' }, async (_uri, _vars, ctx) => {
    hooks.started?.()
    await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }))
    hooks.aborted?.(ctx.signal.reason?.name)
    return 'too late'
  })
  server.prompt('greet', { arguments: [{ name: 'who', required: true }] }, (args, ctx) => {
    ctx.progress(1, 1)
    return `hello ${args.who} from ${ctx.clientInfo?.name}, wants progress: ${ctx.wantsProgress}`
  })
  server.prompt('ask', (_args, ctx) => {
    if (ctx.inputResponses.ok) return `answered: ${ctx.inputResponses.ok.action}`
    return new InputRequired().elicit('ok', { message: 'OK?' })
  })
  server.completion({ prompt: 'greet' }, (argument, value, others, ctx) => [`${ctx.toolName}:${argument}:${value}:${Object.keys(others).length}`])
  return server
}

test('a resource gets progress, logging, client info and the lifespan through its context', async () => {
  const server = contextServer()
  await server.start()
  const client = new Client(server)
  await client.initialize('2025-11-25')
  client.send({ jsonrpc: '2.0', id: 1, method: 'logging/setLevel', params: { level: 'info' } })
  await client.recv()
  client.send({ jsonrpc: '2.0', id: 2, method: 'resources/read', params: { uri: 'memo://notes', _meta: { progressToken: 'r' } } })
  assert.deepEqual((await client.recv()).params, { progressToken: 'r', progress: 1, total: 2, message: 'reading' })
  assert.deepEqual((await client.recv()).params, { level: 'info', data: { reading: 'memo://notes' } })
  const answer = await client.recv()
  assert.equal(answer.result.contents[0].text, 'notes for node-test in eu (memo://notes)')
  await server.close()
})

test('a cancelled read aborts its signal and is not answered', { timeout: 20_000 }, async () => {
  let started
  let aborted
  const running = new Promise((resolve) => (started = resolve))
  const reason = new Promise((resolve) => (aborted = resolve))
  const server = contextServer({ started, aborted })
  const client = new Client(server)
  await client.initialize('2025-11-25')
  client.send({ jsonrpc: '2.0', id: 1, method: 'resources/read', params: { uri: 'memo://slow' } })
  await running
  client.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } })
  assert.equal(await reason, 'AbortError')
  // The ping's answer is the next frame: the read's never comes.
  client.send({ jsonrpc: '2.0', id: 2, method: 'ping' })
  assert.deepEqual(await client.recv(), { jsonrpc: '2.0', id: 2, result: {} })
  await server.close()
  assert.ok(!client.texts.some((text) => text.includes('too late')))
})

for (const protocolVersion of ['2025-11-25', '2026-07-28']) {
  test(`${protocolVersion}: prompts and completers get the context; a prompt's round is its request's`, async () => {
    const server = contextServer()
    const client = await connect(server, { protocolVersion, elicitation: () => ({ action: 'accept', content: {} }) })
    const greeted = await client.getPrompt('greet', { who: 'Ada' })
    assert.equal(greeted.messages[0].content.text, 'hello Ada from toolwire-test-client, wants progress: false')
    assert.deepEqual((await client.complete({ type: 'ref/prompt', name: 'greet' }, 'who', 'A', { x: 'y' })).values, ['who:who:A:1'])
    if (protocolVersion === '2026-07-28') {
      assert.equal((await client.getPrompt('ask')).messages[0].content.text, 'answered: accept')
    }
    await client.close()
    await server.close()
  })
}
