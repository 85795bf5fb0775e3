// The engine's own logs in JavaScript: onEngineLog(handler, { level }) receives them in order
// with their level and target, below-level ones never arrive, null stops, a throwing handler
// does not end the process, and DEBUG=toolwire writes them to stderr.
import assert from 'node:assert/strict'
import { test } from 'node:test'

import { ENGINE_LOG_LEVELS, Server, onEngineLog } from '../lib/index.mjs'
import { Client, runNodeScript } from './client.mjs'

const ROUTER = 'toolwire::dispatch::router'
const clientError = (text) => ({ jsonrpc: '2.0', id: null, error: { code: -32000, message: text } })
const BOGUS = { jsonrpc: '2.0', method: 'notifications/bogus' }

/** A handler keeping records, and a wait for the first one matching. */
function collector() {
  const records = []
  const waiters = []
  const handler = (record) => {
    records.push(record)
    for (const waiter of [...waiters]) {
      if (waiter.matches(record)) {
        waiters.splice(waiters.indexOf(waiter), 1)
        waiter.resolve(record)
      }
    }
  }
  const waitFor = (matches) => {
    const found = records.find(matches)
    if (found) return Promise.resolve(found)
    // The log delivery never keeps the process alive (a weak threadsafe function): while this
    // test waits for it and nothing else is pending, this does.
    const keepAlive = setInterval(() => {}, 60_000)
    return new Promise((resolve) => waiters.push({ matches, resolve })).finally(() => clearInterval(keepAlive))
  }
  return { records, handler, waitFor }
}

const broke = (text) => (record) => record.target === ROUTER && record.message.includes(text)

test('engine records arrive with level, target and message; the level filters; null stops', async () => {
  const client = new Client(new Server({ name: 'logs', version: '1' }))
  await client.initialize()

  const first = collector()
  onEngineLog(first.handler, { level: 'warn' })
  client.send(BOGUS) // a debug record: below 'warn'
  client.send(clientError('first'))
  const warning = await first.waitFor(broke('first'))
  assert.deepEqual(warning, { level: 'warn', target: ROUTER, message: 'the client reported an error code=-32000 message=first' })
  assert.deepEqual(first.records.filter((r) => r.level === 'debug' || r.level === 'trace'), [])

  onEngineLog(null)
  client.send(clientError('while off'))
  const second = collector()
  onEngineLog(second.handler, { level: 'debug' })
  client.send(BOGUS)
  client.send(clientError('second'))
  await second.waitFor(broke('second'))
  // In order: the debug record of the bogus notification first; nothing from while it was off.
  const mine = second.records.filter((r) => r.target === ROUTER)
  assert.equal(mine.at(-1).level, 'warn')
  assert.ok(mine.slice(0, -1).some((r) => r.level === 'debug'), JSON.stringify(mine))
  assert.ok(!second.records.some(broke('while off')))
  assert.ok(!first.records.some(broke('second')), 'the replaced handler gets nothing more')
  onEngineLog(null)
})

test('a throwing handler is reported once on stderr and logging goes on', async () => {
  const client = new Client(new Server({ name: 'throws', version: '1' }))
  await client.initialize()
  const written = []
  const write = process.stderr.write
  process.stderr.write = function capture(chunk, ...rest) {
    written.push(String(chunk))
    return write.call(this, chunk, ...rest)
  }
  const seen = collector()
  try {
    onEngineLog((record) => {
      seen.handler(record)
      throw new Error('handler broke')
    })
    client.send(clientError('one'))
    client.send(clientError('two'))
    await seen.waitFor(broke('two'))
  } finally {
    process.stderr.write = write
    onEngineLog(null)
  }
  assert.equal(written.filter((text) => text.includes('the engine log handler threw: Error: handler broke')).length, 1)
})

test('bad arguments are TypeErrors naming the levels', () => {
  assert.deepEqual(ENGINE_LOG_LEVELS, ['error', 'warn', 'info', 'debug', 'trace'])
  assert.throws(() => onEngineLog(() => {}, { level: 'warning' }), /unknown engine log level "warning" \(one of error, warn, info, debug, trace\)/)
  assert.throws(() => onEngineLog('stderr'), /needs a function/)
})

test('DEBUG=toolwire writes the engine logs to stderr; stdout stays the protocol', async () => {
  const lib = new URL('../lib/index.js', import.meta.url).pathname
  const client = new URL('./client.mjs', import.meta.url).href
  const script = `
    const { Server } = require(${JSON.stringify(lib)})
    // Exit once the engine's warning is on stderr (the log thread never keeps the process alive).
    const write = process.stderr.write
    process.stderr.write = function (chunk, ...rest) {
      const done = String(chunk).includes('message=via DEBUG')
      const result = write.call(this, chunk, ...rest)
      if (done) process.exit(0)
      return result
    }
    import(${JSON.stringify(client)}).then(async ({ Client }) => {
      const c = new Client(new Server({ name: 'dbg', version: '1' }))
      await c.initialize()
      c.send(${JSON.stringify(clientError('via DEBUG'))})
      setInterval(() => {}, 1000) // alive until the log line arrives
    })
  `
  const { code, stdout, stderr } = await runNodeScript(script, { env: { ...process.env, DEBUG: 'express:*,toolwire' } })
  assert.equal(code, 0, stderr)
  assert.match(stderr, /^toolwire WARN toolwire::dispatch::router: the client reported an error code=-32000 message=via DEBUG$/m)
  assert.equal(stdout, '')
})
