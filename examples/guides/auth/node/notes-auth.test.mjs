import assert from 'node:assert/strict'
import { test } from 'node:test'

import { authOptions, server } from './notes-auth.mjs'

const initialize = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
}

test('a bearer token guards the endpoint', async () => {
  const http = await server.serveHttp('127.0.0.1', 0, authOptions)
  try {
    const post = (token) => {
      const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }
      if (token) headers.authorization = `Bearer ${token}`
      return fetch(http.url, { method: 'POST', headers, body: JSON.stringify(initialize) })
    }
    // No token: 401, and the challenge says where the metadata is.
    const refused = await post()
    assert.equal(refused.status, 401)
    const metadataUrl = refused.headers.get('www-authenticate').match(/resource_metadata="([^"]+)"/)[1]
    // The protected-resource metadata (RFC 9728) names the authorization server.
    const metadata = await (await fetch(metadataUrl)).json()
    assert.deepEqual(metadata.authorization_servers, ['https://auth.example.com'])

    // A token without the scope: 403, naming it.
    const guest = await post('secret-guest')
    assert.equal(guest.status, 403)
    assert.match(guest.headers.get('www-authenticate'), /scope="notes"/)

    // A good token: served.
    const ada = await post('secret-ada')
    assert.equal(ada.status, 200)
    assert.equal((await ada.json()).result.serverInfo.name, 'notes')
  } finally {
    await http.close()
  }
})
