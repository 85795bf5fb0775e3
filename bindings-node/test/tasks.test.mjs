// The tasks extension from JavaScript: a tool with `taskSupport` runs as a task for a client
// that declares the extension, `await ctx.elicit(...)` inside it waits for tasks/update, and a
// thrown ProtocolError ends a task `failed` (a JSON-RPC error outside one).
import assert from 'node:assert/strict'
import { test } from 'node:test'

import { ProtocolError, Server } from '../lib/index.mjs'
import { Client } from './client.mjs'

const TASKS = 'io.modelcontextprotocol/tasks'
const meta = (extension = true) => ({
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': extension ? { elicitation: {}, extensions: { [TASKS]: {} } } : { elicitation: {} },
})

function build() {
  const server = new Server({ name: 'tasks', version: '1' })
  server.tool('confirm', { taskSupport: 'optional' }, async (_args, ctx) => {
    const answer = await ctx.elicit({ message: 'Sure?', requestedSchema: { type: 'object', properties: {} } })
    return `answered ${answer.action}`
  })
  server.tool('broken', { taskSupport: 'required' }, () => {
    throw new ProtocolError(-32603, 'broken: internal failure')
  })
  return server
}

async function request(client, id, method, params, extension = true) {
  client.send({ jsonrpc: '2.0', id, method, params: { ...params, _meta: meta(extension) } })
  return client.recv()
}

/** Polls until the task reaches `status` or ends (each poll answered in turn), for up to 10 s. */
async function waitFor(client, taskId, status) {
  const deadline = Date.now() + 10_000
  for (let id = 100; Date.now() < deadline; id++) {
    const task = (await request(client, id, 'tasks/get', { taskId })).result
    if ([status, 'completed', 'failed', 'cancelled'].includes(task.status)) return task
    // Lets the handler's own continuations run on this thread between polls.
    await new Promise(setImmediate)
  }
  assert.fail('the task never got there')
}

test('a question inside a task waits for tasks/update', async () => {
  const client = new Client(build())
  const created = (await request(client, 1, 'tools/call', { name: 'confirm', arguments: {} })).result
  assert.equal(created.resultType, 'task')
  const parked = await waitFor(client, created.taskId, 'input_required')
  const [[key, question]] = Object.entries(parked.inputRequests)
  assert.equal(question.method, 'elicitation/create')
  const ack = await request(client, 2, 'tasks/update', { taskId: created.taskId, inputResponses: { [key]: { action: 'accept' } } })
  assert.equal(ack.result.resultType, 'complete')
  const done = await waitFor(client, created.taskId, 'completed')
  assert.equal(done.result.content[0].text, 'answered accept')
})

test('ProtocolError fails the task, and is a JSON-RPC error outside one', async () => {
  const client = new Client(build())
  const created = (await request(client, 1, 'tools/call', { name: 'broken', arguments: {} })).result
  const failed = await waitFor(client, created.taskId, 'failed')
  assert.deepEqual(failed.error, { code: -32603, message: 'broken: internal failure' })
  assert.equal(failed.result, undefined)
  const refused = await request(client, 2, 'tools/call', { name: 'broken', arguments: {} }, false)
  assert.equal(refused.error.code, -32021)
  const legacy = new Client(build())
  await legacy.initialize()
  legacy.send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'broken', arguments: {} } })
  assert.deepEqual((await legacy.recv()).error, { code: -32603, message: 'broken: internal failure' })
  assert.throws(() => new ProtocolError('x', 'y'), TypeError)
  assert.throws(() => new ProtocolError(2 ** 40, 'y'), TypeError)
})

test('taskSupport is checked at registration', () => {
  const server = new Server({ name: 'tasks', version: '1' })
  assert.throws(() => server.tool('odd', { taskSupport: 'sometimes' }, () => 'x'), /task support/)
})

test('the task options reach the engine', async () => {
  // taskAfterMs 0: a call becomes a task at once; the ttl and poll interval are what it reports.
  const server = new Server({ name: 'tasks', version: '1', taskAfterMs: 0, taskTtlMs: 90_000, taskPollIntervalMs: 250, maxTasksPerPrincipal: 1 })
  server.tool('confirm', { taskSupport: 'optional' }, async (_args, ctx) => {
    const answer = await ctx.elicit({ message: 'Sure?', requestedSchema: { type: 'object', properties: {} } })
    return `answered ${answer.action}`
  })
  const client = new Client(server)
  const created = (await request(client, 1, 'tools/call', { name: 'confirm', arguments: {} })).result
  assert.equal(created.resultType, 'task')
  assert.deepEqual([created.ttlMs, created.pollIntervalMs], [90_000, 250])
  // Past maxTasksPerPrincipal a call that would become a task is refused.
  const refused = await request(client, 2, 'tools/call', { name: 'confirm', arguments: {} })
  assert.equal(refused.error.code, -32603)
  // A task outlives its session, and its handler holds the event loop: cancelled, it ends.
  const cancelled = await request(client, 3, 'tasks/cancel', { taskId: created.taskId })
  assert.equal(cancelled.result.resultType, 'complete')
})

test('a task option out of range is refused, naming it', () => {
  assert.throws(() => new Server({ name: 'tasks', version: '1', taskTtlMs: 0 }), /task_ttl and task_poll_interval must be longer than zero/)
  assert.throws(() => new Server({ name: 'tasks', version: '1', maxTasks: 0 }), /max_tasks and max_tasks_per_principal must be at least 1/)
  assert.throws(() => new Server({ name: 'tasks', version: '1', taskAfterMs: -1 }), /taskAfterMs must be a whole number/)
})
