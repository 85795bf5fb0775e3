import assert from 'node:assert/strict'
import { test } from 'node:test'
import { setTimeout } from 'node:timers/promises'

import { connect } from 'toolwire/testing'

import { startRedis } from './redis-server.mjs'
import { replica } from './replica.mjs'

const keys = ['a requestState secret of at least 32 bytes, the same on every replica']
const modern = { protocolVersion: '2026-07-28', capabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} }, elicitation: {} } }

/** `tasks/get` until the task's status is one of `until`, waiting the `pollIntervalMs` the server asks for between two polls (for at most 10 s: a test must not hang). */
async function poll(client, taskId, ...until) {
  const deadline = Date.now() + 10_000
  for (;;) {
    const task = await client.request('tasks/get', { taskId })
    if (until.includes(task.status)) return task
    assert.ok(Date.now() < deadline, `the task is still ${task.status}`)
    await setTimeout(task.pollIntervalMs)
  }
}

test('a task made on one replica is followed and answered on the other', async () => {
  const redis = await startRedis()
  const [servers, clients] = [[], []]
  try {
    servers.push(replica(redis.url, keys), replica(redis.url, keys)) // as two processes would be
    clients.push(await connect(servers[0], modern), await connect(servers[1], modern))
    const [onA, onB] = clients
    const { taskId } = await onA.request('tools/call', { name: 'archive', arguments: { folder: '2025' } })

    const asking = await poll(onB, taskId, 'input_required') // B reads the task A runs
    const [key] = Object.keys(asking.inputRequests)
    const answer = { action: 'accept', content: { confirm: true } }
    await onB.request('tasks/update', { taskId, inputResponses: { [key]: answer } }) // B passes it to A

    const done = await poll(onA, taskId, 'completed', 'failed', 'cancelled')
    assert.equal(done.result.content[0].text, 'Archived 2025.')
  } finally {
    await Promise.all(clients.map((client) => client.close()))
    await Promise.all(servers.map((server) => server.close()))
    redis.stop()
  }
})
