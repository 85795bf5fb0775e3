import assert from 'node:assert/strict'
import { test } from 'node:test'

import { connect } from 'toolwire/testing'

import { server } from './notes.mjs'

test('resources, prompts and completion', async () => {
  const client = await connect(server)
  try {
    const templates = await client.listResourceTemplates()
    assert.deepEqual(
      templates.map((t) => t.uriTemplate),
      ['notes://day/{date}'],
    )

    const read = await client.readResource('notes://day/2026-11-23')
    assert.equal(read.contents[0].text, 'Quiet.')

    await assert.rejects(client.readResource('notes://day/1999-01-01'), { code: -32002 })

    const dates = await client.complete({ type: 'ref/resource', uri: 'notes://day/{date}' }, 'date', '2026-11-2')
    assert.deepEqual(dates.values, ['2026-11-22', '2026-11-23'])

    const prompt = await client.getPrompt('summarize', { date: '2026-11-22' })
    assert.match(prompt.messages[0].content.text, /^Summarize the notes of 2026-11-22 \(short\)/)

    const tones = await client.complete({ type: 'ref/prompt', name: 'summarize' }, 'tone', '')
    assert.deepEqual(tones.values, ['short', 'detailed']) // an enum argument is completed for you
  } finally {
    await client.close()
  }
})
