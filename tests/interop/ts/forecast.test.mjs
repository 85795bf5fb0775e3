// The forecast server of issue #28 with toolwire (forecast/toolwire-app.mjs) and with the
// official TypeScript SDK (forecast/sdk-app.mjs), written alike: their tools/list against the
// golden file (forecast/tools-list.json, whose $comment says what differs and why), and
// toolwire's tested with toolwire/testing's typed client only.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'

import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'

import { McpError, connect } from '../../../bindings-node/lib/testing.mjs'
import { server as sdkServer } from './forecast/sdk-app.mjs'
import { server } from './forecast/toolwire-app.mjs'

const golden = JSON.parse(readFileSync(new URL('./forecast/tools-list.json', import.meta.url), 'utf8'))

async function sdkTools() {
  const [serverEnd, clientEnd] = InMemoryTransport.createLinkedPair()
  await sdkServer.connect(serverEnd)
  const client = new Client({ name: 'forecast-test', version: '1.0.0' })
  await client.connect(clientEnd)
  try {
    // As on the wire (the client's objects carry keys set to undefined).
    return JSON.parse(JSON.stringify((await client.listTools()).tools))
  } finally {
    await client.close()
  }
}

/** A tool as the SDK lists it, less what the golden file's $comment explains. */
function explained(tool) {
  const { execution: _execution, ...rest } = tool
  const strip = (schema, output) => {
    const { $schema: _schema, additionalProperties, ...kept } = schema
    return output || additionalProperties === undefined ? kept : { ...kept, additionalProperties }
  }
  return { ...rest, inputSchema: strip(rest.inputSchema, false), outputSchema: strip(rest.outputSchema, true) }
}

test('tools/list: as recorded for both, and equal but for what the golden file explains', async () => {
  const sdk = await sdkTools()
  const client = await connect(server)
  const ours = await client.listTools()
  await client.close()
  await server.close()
  assert.deepEqual(sdk, golden.sdk)
  assert.deepEqual(ours, golden.toolwire)
  assert.deepEqual(ours.map(explained), sdk.map(explained))
  assert.deepEqual(ours, sdk.map(explained))
})

// docs/migration/typescript-sdk.md includes this test, between the markers.
// --8<-- [start:test]
test('the forecast server, tested with the typed client', async () => {
  const client = await connect(server)
  const progress = []
  const result = await client.callTool('forecast', { city: 'Oslo', days: 2 }, { onprogress: (p) => progress.push(p) })
  assert.deepEqual(result.structuredContent, { city: 'Oslo', station: 'Blindern', highs: [20, 21] })
  assert.deepEqual(progress, [
    { progress: 1, total: 2, message: 'day 1' },
    { progress: 2, total: 2, message: 'day 2' },
  ])
  // The limits hold; the refusal names the argument.
  const refused = await client.callTool('forecast', { city: 'Oslo', days: 9 })
  assert.equal(refused.isError, true)
  assert.match(refused.content[0].text, /\/days/)
  // The error path: the model reads the message.
  const unknown = await client.callTool('forecast', { city: 'Atlantis' })
  assert.deepEqual([unknown.isError, unknown.content[0].text], [true, 'No station for Atlantis'])
  // The lifespan's value, from a resource.
  const [template] = await client.listResourceTemplates()
  assert.equal(template.uriTemplate, 'weather://stations/{country}')
  const read = await client.readResource('weather://stations/fr')
  assert.deepEqual(read.contents, [{ uri: 'weather://stations/fr', mimeType: 'text/plain', text: 'paris: Montsouris' }])
  // The prompt's arguments come from its zod shape, as in the SDK.
  const [prompt] = await client.listPrompts()
  assert.deepEqual(prompt.arguments, [
    { name: 'city', required: true },
    { name: 'days', required: false },
  ])
  assert.equal((await client.getPrompt('plan_trip', { city: 'Oslo' })).messages[0].content.text, 'Plan 3 days in Oslo around the forecast.')
  const missing = await client.getPrompt('plan_trip', {}).catch((err) => err)
  assert.ok(missing instanceof McpError && missing.code === -32602, String(missing))
  await client.close()
  let stations
  server.tool('peek', (_args, ctx) => {
    stations = ctx.lifespanContext
    return 'ok'
  })
  const again = await connect(server)
  await again.callTool('peek')
  assert.equal(stations.closed, false)
  // The last test client's close() ends the lifespan (a test client holds it as a serve does):
  // its finally ran.
  await again.close()
  assert.equal(stations.closed, true)
  await server.close()
})
// --8<-- [end:test]
