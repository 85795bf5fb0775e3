import assert from 'node:assert/strict'
import { test } from 'node:test'

import { connect } from 'toolwire/testing'

import { server } from './server.mjs'

test('greet', async () => {
  const client = await connect(server)
  try {
    const result = await client.callTool('greet', { name: 'Ada' })
    assert.equal(result.content[0].text, 'Hello, Ada!')
  } finally {
    await client.close()
  }
})
