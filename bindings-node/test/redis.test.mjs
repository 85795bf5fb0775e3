// Two servers sharing one real Redis (`redis-server` on loopback, started here) act as two
// replicas: a task created over HTTP on one is read and answered through the other, and
// completes; a Redis that cannot be reached fails the constructor, naming the URL.
// Needs `redis-server` on PATH (`scripts/test-all` installs Debian's package when missing).
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import net from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { after, before, test } from 'node:test'

import { Server, ToolwireError } from '../lib/index.mjs'

const TASKS = 'io.modelcontextprotocol/tasks'
const SECRET = 'a shared requestState secret of at least 32 bytes'

function freePort() {
  return new Promise((resolve, reject) => {
    const probe = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address()
      probe.close(() => resolve(port))
    })
    probe.on('error', reject)
  })
}

/** Whether a Redis answers PING on `port`. */
function pings(port) {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1')
    socket.setTimeout(500)
    socket.once('connect', () => socket.write('PING\r\n'))
    socket.once('data', (data) => {
      socket.destroy()
      resolve(data.toString().startsWith('+PONG'))
    })
    socket.once('timeout', () => {
      socket.destroy()
      resolve(false)
    })
    socket.once('error', () => resolve(false))
  })
}

let redis
let redisUrl
let dir

before(async () => {
  const port = await freePort()
  dir = mkdtempSync(path.join(tmpdir(), 'toolwire-redis-'))
  redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    cwd: dir,
    stdio: ['ignore', 'ignore', 'inherit'],
  })
  const exited = new Promise((resolve) => redis.once('exit', resolve))
  // Ready when it answers: polled with a deadline.
  const deadline = Date.now() + 10_000
  while (!(await pings(port))) {
    assert.ok(redis.exitCode === null && redis.signalCode === null, 'redis-server exited')
    assert.ok(Date.now() < deadline, 'redis-server never answered')
    await Promise.race([exited, new Promise(setImmediate)])
  }
  redisUrl = `redis://127.0.0.1:${port}/0`
})

after(async () => {
  if (redis && redis.exitCode === null && redis.signalCode === null) {
    const exited = new Promise((resolve) => redis.once('exit', resolve))
    redis.kill('SIGKILL')
    await exited
  }
  if (dir) rmSync(dir, { recursive: true, force: true })
})

function replica(url) {
  const server = new Server({ name: 'replica', version: '1', redis: url, requestStateKeys: [SECRET] })
  server.tool('confirm_delete', { taskSupport: 'optional' }, async (_args, ctx) => {
    const answer = await ctx.elicit({ message: 'Delete?', requestedSchema: { type: 'object', properties: {} } })
    return `answered ${answer.action}`
  })
  return server
}

/** One 2026-07-28 request over HTTP; its JSON-RPC answer. */
async function post(url, id, method, params, name) {
  const meta = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientCapabilities': { elicitation: {}, extensions: { [TASKS]: {} } },
  }
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': method,
      'mcp-name': name,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, _meta: meta } }),
  })
  const text = await res.text()
  assert.equal(res.status, 200, `${method}: ${text}`)
  if (res.headers.get('content-type')?.startsWith('text/event-stream')) {
    const data = text.split('\n').filter((l) => l.startsWith('data: ') && l.length > 6)
    return JSON.parse(data.at(-1).slice(6))
  }
  return JSON.parse(text)
}

/** Polls tasks/get through `url` until the task reaches `status` or ends, for up to 10 s. */
async function waitFor(url, taskId, status) {
  const deadline = Date.now() + 10_000
  for (let id = 100; Date.now() < deadline; id++) {
    const task = (await post(url, id, 'tasks/get', { taskId }, taskId)).result
    if ([status, 'completed', 'failed', 'cancelled'].includes(task.status)) return task
  }
  assert.fail(`the task never got to ${status}`)
}

test('a task created on one replica is read and answered through the other', async () => {
  const one = replica(redisUrl)
  const two = replica(redisUrl)
  const httpOne = await one.serveHttp('127.0.0.1', 0)
  const httpTwo = await two.serveHttp('127.0.0.1', 0)
  try {
    const created = (await post(httpOne.url, 1, 'tools/call', { name: 'confirm_delete', arguments: {} }, 'confirm_delete')).result
    assert.equal(created.resultType, 'task', JSON.stringify(created))
    const { taskId } = created
    const parked = await waitFor(httpTwo.url, taskId, 'input_required')
    assert.equal(parked.status, 'input_required', JSON.stringify(parked))
    const [[key, question]] = Object.entries(parked.inputRequests)
    assert.equal(question.method, 'elicitation/create')
    const ack = await post(httpTwo.url, 2, 'tasks/update', { taskId, inputResponses: { [key]: { action: 'accept' } } }, taskId)
    assert.equal(ack.result.resultType, 'complete', JSON.stringify(ack))
    const done = await waitFor(httpTwo.url, taskId, 'completed')
    assert.equal(done.status, 'completed', JSON.stringify(done))
    assert.equal(done.result.content[0].text, 'answered accept')
    // The first replica reads the same outcome.
    assert.equal((await waitFor(httpOne.url, taskId, 'completed')).status, 'completed')
  } finally {
    await one.close()
    await two.close()
  }
})

test('a Redis that cannot be reached fails the constructor, naming it', () => {
  assert.throws(
    () => new Server({ name: 'replica', version: '1', redis: 'redis://127.0.0.1:1/0' }),
    (err) => err instanceof ToolwireError && err.code === 'TOOLWIRE_TRANSPORT' && err.message.includes('redis://127.0.0.1:1/0'),
  )
  assert.throws(
    () => new Server({ name: 'replica', version: '1', redis: 'not-a-url' }),
    (err) => err instanceof ToolwireError && err.message.includes('not-a-url'),
  )
})
