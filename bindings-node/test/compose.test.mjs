// `server.mount(prefix, upstream)`: another server's catalog under a prefix. A toolwire Server in
// this process, and one spawned over stdio (a Node server of the tests'): names and URIs prefixed, calls
// forwarded with their progress and questions, this server's middleware applied, the upstream's
// changes read again; an https server (a toolwire endpoint in node:https) mounted when its CA is
// trusted through SSL_CERT_FILE; what cannot be mounted is refused with a clear error.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import https from 'node:https'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

import { Server, Mount, ToolwireError } from '../lib/index.mjs'
import { connect } from '../lib/testing.mjs'

const STDIO_SERVER = fileURLToPath(new URL('./fixtures/stdio-server.cjs', import.meta.url))

// --8<-- [start:inner]
function weather() {
  return new Server({ name: 'weather', version: '1' })
    .tool('forecast', {
      description: "Tomorrow's weather in a city.",
      inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    }, ({ city }) => `sunny in ${city}`)
    .tool('slow_forecast', {
      inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    }, async ({ city }, ctx) => {
      ctx.progress(1, 2, 'looking')
      return `rain in ${city}`
    })
    .tool('ask_name', {}, async (_args, ctx) => {
      const answer = await ctx.elicit({
        message: 'Your name?',
        requestedSchema: { type: 'object', properties: { name: { type: 'string' } } },
      })
      return `hello, ${answer.content?.name}`
    })
    .resource('docs://readme', { name: 'readme' }, () => 'Weather for everyone.')
}

const gateway = new Server({ name: 'gateway', version: '1' })
await gateway.mount('weather', weather()) // weather_forecast, docs://weather/readme, ...
// --8<-- [end:inner]

const names = (tools) => tools.map((tool) => tool.name)
const text = (result) => result.content[0].text

test('a server in this process is mounted under a prefix', async () => {
  const inner = weather()
  const seen = []
  const outer = new Server({ name: 'gateway', version: '1' }).middleware(async (request, next) => {
    if (request.name) seen.push(request.name)
    return next(request)
  })
  const mount = await outer.mount('weather', inner)
  assert.ok(mount instanceof Mount)
  assert.equal(mount.prefix, 'weather')
  assert.deepEqual(mount.registered().sort(), [
    'docs://weather/readme',
    'weather_ask_name',
    'weather_forecast',
    'weather_slow_forecast',
  ])
  for (const protocolVersion of ['2025-11-25', '2026-07-28']) {
    const client = await connect(outer, {
      protocolVersion,
      elicitation: () => ({ action: 'accept', content: { name: 'Ada' } }),
    })
    try {
      assert.deepEqual(names(await client.listTools()), ['weather_ask_name', 'weather_forecast', 'weather_slow_forecast'])
      assert.equal(text(await client.callTool('weather_forecast', { city: 'Oslo' })), 'sunny in Oslo')
      const heard = []
      const slow = await client.callTool('weather_slow_forecast', { city: 'Bergen' }, {
        onprogress: ({ message }) => heard.push(message),
      })
      assert.equal(text(slow), 'rain in Bergen')
      assert.deepEqual(heard, ['looking'])
      assert.equal(text(await client.callTool('weather_ask_name', {})), 'hello, Ada', protocolVersion)
      const read = await client.readResource('docs://weather/readme')
      assert.equal(read.contents[0].text, 'Weather for everyone.')
    } finally {
      await client.close()
    }
  }
  assert.ok(seen.includes('weather_forecast') && seen.includes('docs://weather/readme'))

  inner.tool('radar', {}, () => 'clear')
  await mount.refresh()
  assert.ok(outer.toolNames.includes('weather_radar'))
  await mount.unmount()
  assert.deepEqual(outer.toolNames, [])
})

test('a server spawned over stdio is mounted, its tools forwarded', async () => {
  const outer = new Server({ name: 'gateway', version: '1' })
  // --8<-- [start:spawned]
  await outer.mount('fixture', { command: process.execPath, args: [STDIO_SERVER] }) // or { url, headers }
  // --8<-- [end:spawned]
  const client = await connect(outer)
  try {
    const tools = names(await client.listTools())
    assert.ok(tools.includes('fixture_print') && tools.includes('fixture_slow'), tools.join())
    assert.equal(text(await client.callTool('fixture_print', {})), 'printed')
    assert.equal(text(await client.callTool('fixture_slow', { ms: 1 })), 'slept 1')
  } finally {
    await client.close()
  }
})

test('what cannot be mounted is refused, naming why', async () => {
  const outer = new Server({ name: 'gateway', version: '1' })
  await assert.rejects(outer.mount('x', 'python server.py'), TypeError)
  await assert.rejects(outer.mount('a b', weather()), /a mount's prefix/)
  await assert.rejects(
    outer.mount('x', { command: 'toolwire-no-such-program' }),
    (err) => err instanceof ToolwireError && err.code === 'TOOLWIRE_TRANSPORT' && /cannot spawn/.test(err.message),
  )
  await assert.rejects(outer.mount('x', { command: 'a', url: 'http://127.0.0.1:1/mcp' }), /not both/)
})

/** A CA of the test's own and a certificate it signed for localhost and 127.0.0.1 (openssl). */
function certificates() {
  const dir = mkdtempSync(join(tmpdir(), 'toolwire-tls-'))
  const at = (name) => join(dir, name)
  writeFileSync(at('ca.cnf'), [
    '[req]', 'distinguished_name = dn', 'prompt = no', 'x509_extensions = ca',
    '[dn]', 'CN = toolwire test CA',
    '[ca]', 'basicConstraints = critical,CA:TRUE', 'keyUsage = critical,keyCertSign,cRLSign',
    'subjectKeyIdentifier = hash', '',
  ].join('\n'))
  writeFileSync(at('leaf.cnf'), [
    'basicConstraints = critical,CA:FALSE', 'keyUsage = critical,digitalSignature',
    'extendedKeyUsage = serverAuth', 'subjectAltName = DNS:localhost,IP:127.0.0.1', '',
  ].join('\n'))
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes']
  const run = (args) => execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] })
  run(['req', '-x509', '-config', at('ca.cnf'), ...ec, '-keyout', at('ca.key'), '-out', at('ca.pem'), '-days', '1'])
  run(['req', '-new', ...ec, '-keyout', at('server.key'), '-out', at('server.csr'), '-subj', '/CN=localhost'])
  run(['x509', '-req', '-in', at('server.csr'), '-CA', at('ca.pem'), '-CAkey', at('ca.key'), '-set_serial', '2',
    '-out', at('server.pem'), '-days', '1', '-extfile', at('leaf.cnf')])
  return { dir, ca: at('ca.pem'), cert: readFileSync(at('server.pem')), key: readFileSync(at('server.key')) }
}

test('an https server is mounted when its CA is trusted (SSL_CERT_FILE)', async () => {
  const tls = certificates()
  const upstream = weather()
  const secure = https.createServer({ cert: tls.cert, key: tls.key }, upstream.httpHandler())
  secure.listen(0, '127.0.0.1')
  await once(secure, 'listening')
  const url = `https://localhost:${secure.address().port}/mcp`
  const before = { file: process.env.SSL_CERT_FILE, dir: process.env.SSL_CERT_DIR }
  try {
    delete process.env.SSL_CERT_DIR
    // The system's roots did not sign it.
    process.env.SSL_CERT_FILE = join(tls.dir, 'leaf.cnf')
    await assert.rejects(
      new Server({ name: 'gateway', version: '1' }).mount('sec', { url }),
      (err) => err instanceof ToolwireError && err.code === 'TOOLWIRE_TRANSPORT' && /TLS handshake.*UnknownIssuer/.test(err.message),
    )
    process.env.SSL_CERT_FILE = tls.ca
    const outer = new Server({ name: 'gateway', version: '1' })
    await outer.mount('sec', { url })
    const client = await connect(outer)
    try {
      assert.equal(text(await client.callTool('sec_forecast', { city: 'Oslo' })), 'sunny in Oslo')
    } finally {
      await client.close()
    }
    await outer.close()
  } finally {
    for (const [name, value] of [['SSL_CERT_FILE', before.file], ['SSL_CERT_DIR', before.dir]]) {
      if (value === undefined) delete process.env[name]
      else process.env[name] = value
    }
    secure.closeAllConnections()
    secure.close()
    await upstream.close()
    rmSync(tls.dir, { recursive: true, force: true })
  }
})
