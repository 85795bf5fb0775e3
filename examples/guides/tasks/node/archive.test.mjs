import assert from 'node:assert/strict'
import { test } from 'node:test'
import { setTimeout } from 'node:timers/promises'

import { connect } from 'toolwire/testing'

import { server } from './archive.mjs'

const tasks = { extensions: { 'io.modelcontextprotocol/tasks': {} }, elicitation: {} }
const yes = { action: 'accept', content: { confirm: true } }

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

test('archive runs as a task for a client that follows tasks', async () => {
  const client = await connect(server, { protocolVersion: '2026-07-28', capabilities: tasks })
  try {
    const created = await client.request('tools/call', { name: 'archive', arguments: { folder: '2025' } })
    assert.equal(created.resultType, 'task') // the call is answered with the task
    const { taskId } = created

    const asking = await poll(client, taskId, 'input_required')
    const [[key, question]] = Object.entries(asking.inputRequests) // the question, under a key
    assert.equal(question.method, 'elicitation/create')
    assert.equal(question.params.message, 'Archive 2025?')
    await client.request('tasks/update', { taskId, inputResponses: { [key]: yes } })

    const done = await poll(client, taskId, 'completed', 'failed', 'cancelled')
    assert.equal(done.status, 'completed')
    assert.equal(done.result.content[0].text, 'Archived 2025.')
  } finally {
    await client.close()
  }
})

test('a client without the extension gets the answer in the call', async () => {
  const client = await connect(server, { protocolVersion: '2025-11-25', elicitation: () => yes })
  try {
    const result = await client.callTool('archive', { folder: '2025' })
    assert.equal(result.content[0].text, 'Archived 2025.')
  } finally {
    await client.close()
  }
})
