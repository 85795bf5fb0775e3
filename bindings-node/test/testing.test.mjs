// toolwire/testing: the in-memory test client, in both protocol eras: tools with progress,
// the server's questions answered by callbacks, resources, prompts, errors and closing.
import assert from 'node:assert/strict'
import { test } from 'node:test'

import { z } from 'zod'

import { Server, ToolwireError } from '../lib/index.mjs'
import { McpError, TestClient, connect } from '../lib/testing.mjs'
import * as cjs from '../lib/testing.js'

function forecastServer() {
  const server = new Server({ name: 'forecast', version: '2.0.0' })
  server.tool(
    'forecast',
    {
      description: 'Daily forecast',
      inputSchema: { city: z.string(), days: z.number().int().min(1).max(7).default(3) },
      outputSchema: { city: z.string(), days: z.array(z.string()) },
    },
    async ({ city, days }, ctx) => {
      for (let day = 1; day <= days; day++) await ctx.progress(day, days, `day ${day}`)
      return { city, days: Array.from({ length: days }, (_, i) => `day ${i + 1}: sun`) }
    },
  )
  server.tool('whoami', async (_args, ctx) => {
    const answer = await ctx.elicit({ message: 'Name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } } } })
    const sampled = await ctx.sample({ messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }], maxTokens: 5 })
    const roots = await ctx.listRoots()
    return `${answer.content.name} / ${sampled.content.text} / ${roots.map((r) => r.uri).join(',')}`
  })
  server.tool('ask', async (_args, ctx) => {
    try {
      await ctx.elicit({ message: 'Name?', requestedSchema: { type: 'object' } })
      return 'answered'
    } catch (err) {
      return `refused: ${err.rpcCode} ${err.message}` + (err.data === undefined || err.data === null ? '' : ` ${JSON.stringify(err.data)}`)
    }
  })
  server.resource('memo://readme', { name: 'readme', mimeType: 'text/plain' }, () => 'read me')
  server.prompt('hello', { argsSchema: { name: z.string() } }, ({ name }) => `Hello ${name}`)
  return server
}

const answers = {
  elicitation: async (params) => ({ action: 'accept', content: { name: params.message === 'Name?' ? 'Ada' : '?' } }),
  sampling: () => ({ role: 'assistant', content: { type: 'text', text: 'sampled' }, model: 'test' }),
  roots: [{ uri: 'file:///work', name: 'work' }],
}

for (const protocolVersion of ['2025-11-25', '2026-07-28']) {
  test(`${protocolVersion}: tools, progress, the server's questions, resources and prompts`, async () => {
    const client = await connect(forecastServer(), { protocolVersion, ...answers })
    assert.equal(client.modern, protocolVersion === '2026-07-28')
    assert.deepEqual([client.server.name, client.server.version], ['forecast', '2.0.0'])
    const tools = await client.listTools()
    assert.deepEqual(tools.map((t) => t.name), ['ask', 'forecast', 'whoami'])
    assert.deepEqual(tools.find((t) => t.name === 'forecast').inputSchema.required, ['city'])

    const progress = []
    const result = await client.callTool('forecast', { city: 'Oslo', days: 2 }, { onprogress: (p) => progress.push(p) })
    assert.deepEqual(result.structuredContent, { city: 'Oslo', days: ['day 1: sun', 'day 2: sun'] })
    // Notifications reach the client before the call's answer, in order.
    assert.deepEqual(progress, [
      { progress: 1, total: 2, message: 'day 1' },
      { progress: 2, total: 2, message: 'day 2' },
    ])
    const invalid = await client.callTool({ name: 'forecast', arguments: { city: 'Oslo', days: 9 } })
    assert.equal(invalid.isError, true)
    assert.match(invalid.content[0].text, /\/days/)

    const who = await client.callTool('whoami')
    assert.equal(who.content[0].text, 'Ada / sampled / file:///work')
    assert.deepEqual((await client.readResource('memo://readme')).contents, [{ uri: 'memo://readme', mimeType: 'text/plain', text: 'read me' }])
    assert.equal((await client.getPrompt('hello', { name: 'Ada' })).messages[0].content.text, 'Hello Ada')
    const unknown = await client.request('tools/call', { name: 'nope', arguments: {} }).catch((e) => e)
    assert.ok(unknown instanceof McpError)
    assert.equal(unknown.code, -32602)
    await client.close()
  })
}

test('a question with no callback is refused as the method not being there; a failing callback is an error the server hears', async () => {
  const bare = await connect(forecastServer(), { capabilities: { elicitation: {} } })
  assert.match((await bare.callTool('ask')).content[0].text, /^refused: -32601 /)
  await bare.close()
  const failing = await connect(forecastServer(), {
    elicitation: () => {
      throw new Error('callback broke')
    },
  })
  assert.match((await failing.callTool('ask')).content[0].text, /^refused: -32603 .*callback broke/)
  await failing.close()
  // An McpError the callback throws reaches the server whole: its code, message and data.
  const declining = await connect(forecastServer(), {
    elicitation: () => {
      throw new McpError({ code: -32042, message: 'not now', data: { retryAfter: 5 } })
    },
  })
  assert.equal((await declining.callTool('ask')).content[0].text, 'refused: -32042 not now {"retryAfter":5}')
  await declining.close()
})

test('close waits for calls in flight; afterwards requests are refused', async () => {
  const server = new Server({ name: 'slow', version: '1' })
  let release
  const started = new Promise((resolve) => {
    server.tool('wait', async () => {
      resolve()
      await new Promise((r) => {
        release = r
      })
      return 'finished'
    })
  })
  const client = await connect(server)
  const call = client.callTool('wait')
  await started
  const closing = client.close()
  release()
  assert.equal((await call).content[0].text, 'finished')
  await closing
  const refused = await client.listTools().catch((e) => e)
  assert.ok(refused instanceof McpError)
  assert.match(refused.message, /closed/)
  assert.equal(client.notifications.length, 0)
})

test('Symbol.asyncDispose closes the client (what `await using` calls); CommonJS and ESM are one module', async () => {
  assert.equal(cjs.connect, connect)
  assert.equal(cjs.TestClient, TestClient)
  // Node 20 cannot parse `await using`; newer runtimes call this at the end of the block.
  const client = await connect(forecastServer())
  assert.equal((await client.listTools()).length, 3)
  await client[Symbol.asyncDispose]()
  assert.ok((await client.request('ping').catch((e) => e)) instanceof McpError)
})

test('no answer within timeoutMs rejects with TOOLWIRE_TIMEOUT, and the server hears the request cancelled', async () => {
  const server = new Server({ name: 'hanging', version: '1' })
  let ended
  const cancelled = new Promise((resolve) => (ended = resolve))
  server.tool('hang', async (_args, ctx) => {
    const signal = ctx.signal
    await ctx.cancelled()
    ended(signal.reason?.name)
    return 'not sent'
  })
  const client = await connect(server)
  const late = await client.request('tools/call', { name: 'hang', arguments: {} }, { timeoutMs: 50 }).catch((e) => e)
  assert.ok(late instanceof ToolwireError && !(late instanceof McpError), String(late))
  assert.equal(late.code, 'TOOLWIRE_TIMEOUT')
  assert.equal(late.message, 'toolwire testing: tools/call got no answer within 50 ms')
  assert.equal(await cancelled, 'AbortError')
  // The session goes on.
  assert.equal((await client.listTools()).length, 1)
  await client.close()
})
