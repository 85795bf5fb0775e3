import assert from 'node:assert/strict'
import { test } from 'node:test'

import { connect } from 'toolwire/testing'

import { server } from './travel.mjs'

for (const protocolVersion of ['2025-11-25', '2026-07-28']) {
  test(`book asks the user first (${protocolVersion})`, async () => {
    const asked = []
    const progress = []
    // The client's elicitation handler: the user says yes.
    const elicitation = (params) => {
      asked.push(params.message)
      return { action: 'accept', content: { confirm: true } }
    }
    const client = await connect(server, { protocolVersion, elicitation })
    let result, logs
    try {
      result = await client.callTool('book', { city: 'Oslo', nights: 2 }, { onprogress: ({ message }) => progress.push(message) })
      logs = client.notifications.filter((n) => n.method === 'notifications/message').map((n) => n.params.data)
    } finally {
      await client.close()
    }
    assert.equal(result.content[0].text, 'Booked 2 nights in Oslo.')
    assert.deepEqual(asked, ['Book 2 nights in Oslo for 480 EUR?'])
    // In 2026-07-28 a question ends the request and the client sends it again with the answer:
    // the handler runs twice, so what it does before asking, it does twice.
    const rounds = protocolVersion === '2025-11-25' ? 1 : 2
    assert.deepEqual(progress, Array(rounds).fill(['searching', 'comparing', 'holding a room']).flat())
    // Logs go at the server's default level (info) in 2025-11-25; 2026-07-28 sends them only to a
    // request that names its level (`_meta` "io.modelcontextprotocol/logLevel"), as this one does not.
    assert.deepEqual(logs, protocolVersion === '2025-11-25' ? [{ searching: 'Oslo' }] : [])
  })
}
