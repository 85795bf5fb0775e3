import assert from 'node:assert/strict'
import { test } from 'node:test'

import { connect } from 'toolwire/testing'

import { startRedis } from './redis-server.mjs'
import { replica } from './replica.mjs'

const keys = ['a requestState secret of at least 32 bytes, the same on every replica']
const modern = { protocolVersion: '2026-07-28', capabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} }, elicitation: {} } }

async function poll(client, taskId, ...until) {
  for (;;) {
    const task = await client.request('tasks/get', { taskId })
    if (until.includes(task.status)) return task
  }
}

test('a task made on one replica is followed and answered on the other', async () => {
  const redis = await startRedis()
  const [a, b] = [replica(redis.url, keys), replica(redis.url, keys)] // as two processes would be
  const [onA, onB] = [await connect(a, modern), await connect(b, modern)]
  try {
    const { taskId } = await onA.request('tools/call', { name: 'archive', arguments: { folder: '2025' } })

    const asking = await poll(onB, taskId, 'input_required') // B reads the task A runs
    const [key] = Object.keys(asking.inputRequests)
    const answer = { action: 'accept', content: { confirm: true } }
    await onB.request('tasks/update', { taskId, inputResponses: { [key]: answer } }) // B passes it to A

    const done = await poll(onA, taskId, 'completed', 'failed', 'cancelled')
    assert.equal(done.result.content[0].text, 'Archived 2025.')
  } finally {
    await Promise.all([onA.close(), onB.close()])
    await Promise.all([a.close(), b.close()])
    redis.stop()
  }
})
