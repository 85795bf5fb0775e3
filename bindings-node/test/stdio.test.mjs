// serveStdio on a real process: framing, stdout hygiene, end of input, close().
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, openSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'

const fixture = join(import.meta.dirname, 'fixtures', 'stdio-server.cjs')

/** Spawns the fixture; `portable` forces the portable paths (JavaScript streams, as on an OS
 * where the native pump cannot open stdin) with the engine's debug log on. */
function start({ portable = false, logAfter = false, holdStdout = false } = {}) {
  const env = { ...process.env }
  delete env.TOOLWIRE_PORTABLE_IO
  if (logAfter) env.STDIO_FIXTURE_LOG_AFTER = '1'
  if (holdStdout) env.STDIO_FIXTURE_HOLD_STDOUT = '1'
  if (portable) Object.assign(env, { TOOLWIRE_PORTABLE_IO: '1', TOOLWIRE_LOG: 'toolwire=debug' })
  const child = spawn(process.execPath, [fixture], { stdio: ['pipe', 'pipe', 'pipe'], env })
  let stdout = ''
  let stderr = ''
  const lines = []
  const waiters = []
  child.stdout.setEncoding('utf8').on('data', (chunk) => {
    stdout += chunk
    let i
    while ((i = stdout.indexOf('\n')) >= 0) {
      const line = stdout.slice(0, i)
      stdout = stdout.slice(i + 1)
      const waiter = waiters.shift()
      if (waiter) waiter(line)
      else lines.push(line)
    }
  })
  child.stderr.setEncoding('utf8').on('data', (chunk) => { stderr += chunk })
  const exited = once(child, 'exit')
  /** Resolves once stderr matches `pattern` (an event, not a sleep). */
  const stderrMatches = (pattern) => new Promise((resolve, reject) => {
    const look = () => {
      if (!pattern.test(stderr)) return false
      child.stderr.off('data', look)
      resolve()
      return true
    }
    if (!look()) {
      child.stderr.on('data', look)
      exited.then(() => look() || reject(new Error(`exited before stderr matched ${pattern}: ${stderr}`)))
    }
  })
  return {
    child,
    send: (message) => child.stdin.write(typeof message === 'string' ? message : JSON.stringify(message) + '\n'),
    next: () => (lines.length ? Promise.resolve(lines.shift()) : new Promise((resolve) => waiters.push(resolve))),
    json: async function () { return JSON.parse(await this.next()) },
    stderr: () => stderr,
    stderrMatches,
    rest: () => lines.concat(stdout ? [stdout] : []),
    exited,
  }
}

const init = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } }
const initialized = { jsonrpc: '2.0', method: 'notifications/initialized' }
const call = (id, name, args = {}) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } })

async function handshake(server) {
  server.send(init)
  const answer = await server.json()
  server.send(initialized)
  return answer
}

test('end of input: calls in flight are answered, then the process exits 0 on its own', async () => {
  const server = start()
  assert.equal((await handshake(server)).result.protocolVersion, '2025-11-25')
  server.send(call(1, 'slow', { ms: 150 }))
  server.child.stdin.end()
  const answer = await server.json()
  assert.equal(answer.id, 1)
  assert.equal(answer.result.content[0].text, 'slept 150')
  const [code] = await server.exited
  assert.equal(code, 0)
  assert.match(server.stderr(), /serveStdio resolved/)
  assert.deepEqual(server.rest(), [])
})

test('console.log in a tool goes to stderr; stdout carries only protocol', async () => {
  const server = start()
  await handshake(server)
  server.send(call(1, 'print'))
  const answer = await server.json()
  assert.equal(answer.result.content[0].text, 'printed')
  server.child.stdin.end()
  await server.exited
  assert.match(server.stderr(), /noise from a tool/)
  assert.deepEqual(server.rest(), [])
})

test('serving pipes loads no stream module until stdout is used; console.log still goes to stderr', async () => {
  const server = start()
  await handshake(server)
  server.send(call(1, 'streams-loaded'))
  const loaded = (await server.json()).result.content[0].text
  if (loaded !== 'false') server.child.kill()
  assert.equal(loaded, 'false')
  server.send(call(2, 'print'))
  assert.equal((await server.json()).result.content[0].text, 'printed')
  server.child.stdin.end()
  await server.exited
  assert.match(server.stderr(), /noise from a tool/)
  assert.deepEqual(server.rest(), [])
})

for (const portable of [false, true]) {
  test(`a stdout held from before serving writes to stderr while serving${portable ? ' (portable paths)' : ''}`, async () => {
    const server = start({ portable, holdStdout: true, logAfter: true })
    await handshake(server)
    server.send(call(1, 'print-held'))
    const answer = await server.json()
    if (answer.result?.content?.[0]?.text !== 'printed') server.child.kill()
    assert.equal(answer.result.content[0].text, 'printed')
    server.child.stdin.end()
    const [code] = await server.exited
    assert.equal(code, 0)
    assert.match(server.stderr(), /noise through a held stdout/)
    assert.deepEqual(server.rest(), ['logged after serving'])
  })
}

for (const portable of [false, true]) {
  for (const printed of [false, true]) {
    test(`stdout is the application's again once serving has ended${printed ? ', after a tool logged' : ''}${portable ? ' (portable paths)' : ''}`, async () => {
      const server = start({ portable, logAfter: true })
      await handshake(server)
      if (printed) {
        server.send(call(1, 'print'))
        assert.equal((await server.json()).result.content[0].text, 'printed')
      }
      server.child.stdin.end()
      const [code] = await server.exited
      assert.equal(code, 0)
      assert.deepEqual(server.rest(), ['logged after serving'])
      assert.equal(/noise from a tool/.test(server.stderr()), printed)
      assert.doesNotMatch(server.stderr(), /logged after serving/)
    })
  }
}

for (const portable of [false, true]) {
  test(`bad lines get JSON-RPC errors and serving goes on; CRLF and split writes are fine${portable ? ' (portable paths)' : ''}`, async () => {
    await badLines(portable)
  })
}

async function badLines(portable) {
  const server = start({ portable })
  server.send('{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25",')
  server.send('"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}\r\n')
  assert.equal((await server.json()).id, 0)
  server.send(initialized)
  server.send('this is not json\n')
  assert.equal((await server.json()).error.code, -32700)
  server.send('\n\n{"jsonrpc":"2.0","id":5}\n')
  assert.equal((await server.json()).error.code, -32600)
  server.send(call(2, 'print'))
  assert.equal((await server.json()).id, 2)
  server.child.stdin.end()
  const [code] = await server.exited
  assert.equal(code, 0)
  // The portable path is JavaScript's streams (core's portable bell is the host-thread
  // loop's, tested in Rust and Kotlin).
  if (portable) assert.match(server.stderr(), /stdio through JavaScript's streams/)
  else assert.doesNotMatch(server.stderr(), /stdio through JavaScript's streams/)
}

for (const portable of [false, true]) {
  test(`a second serveStdio in the process fails with TOOLWIRE_BUSY, and serving goes on${portable ? ' (portable paths)' : ''}`, async () => {
    const server = start({ portable })
    await handshake(server)
    server.send(call(1, 'again'))
    const lines = (await server.json()).result.content[0].text.split('\n')
    assert.equal(lines.length, 2)
    for (const line of lines) assert.match(line, /^ToolwireError TOOLWIRE_BUSY busy: stdin is already being served/)
    server.send(call(2, 'print'))
    assert.equal((await server.json()).result.content[0].text, 'printed')
    server.child.stdin.end()
    const [code] = await server.exited
    assert.equal(code, 0)
    assert.match(server.stderr(), /serveStdio resolved/)
    if (portable) assert.match(server.stderr(), /stdio through JavaScript's streams/)
  })
}

for (const portable of [false, true]) {
  test(`server.close() ends serving while stdin is still open${portable ? ' (portable paths)' : ''}`, async () => {
    await closeWhileOpen(portable)
  })
}

async function closeWhileOpen(portable) {
  const server = start({ portable })
  await handshake(server)
  server.send(call(1, 'stop'))
  assert.equal((await server.json()).result.content[0].text, 'stopping')
  const [code] = await server.exited
  assert.equal(code, 0)
  assert.match(server.stderr(), /serveStdio resolved/)
  server.child.stdin.destroy()
}

/** Runs the fixture with stdin from `source` ('file' or 'fifo') holding `input`; returns its stdout lines. */
async function runWithStdin(source, input) {
  const dir = mkdtempSync(join(tmpdir(), 'toolwire-stdio-'))
  const file = join(dir, 'input.jsonl')
  writeFileSync(file, input)
  const child = source === 'file'
    ? spawn(process.execPath, [fixture], { stdio: [openSync(file, 'r'), 'pipe', 'pipe'] })
    : spawn('sh', ['-c', 'cat "$1" | "$2" "$3"', 'sh', file, process.execPath, fixture], { stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (chunk) => { stdout += chunk })
  child.stderr.setEncoding('utf8').on('data', (chunk) => { stderr += chunk })
  const [code] = await once(child, 'exit')
  return { code, lines: stdout.split('\n').filter(Boolean).map((line) => JSON.parse(line)), stderr }
}

const script = [init, initialized, call(1, 'slow', { ms: 30 }), call(2, 'print')].map((m) => JSON.stringify(m)).join('\n')
  // A frame over the 4 MiB default limit is refused, and serving goes on.
  + '\n{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"print","arguments":{"pad":"' + 'x'.repeat(5 << 20) + '"}}}\n'
  + JSON.stringify(call(4, 'print')) // the last line has no newline

for (const source of ['file', 'fifo']) {
  test(`stdin from a ${source}: every request answered, oversize refused, then exit 0`, async () => {
    const { code, lines, stderr } = await runWithStdin(source, script)
    assert.equal(code, 0, stderr)
    const byId = new Map(lines.map((line) => [line.id, line]))
    assert.equal(byId.get(0).result.protocolVersion, '2025-11-25')
    assert.equal(byId.get(1).result.content[0].text, 'slept 30')
    assert.equal(byId.get(2).result.content[0].text, 'printed')
    assert.equal(byId.get(4).result.content[0].text, 'printed')
    const refused = lines.find((line) => line.error)
    assert.equal(refused.error.code, -32600)
    assert.match(refused.error.message, /exceeds the limit/)
    assert.equal(lines.length, 5)
    assert.match(stderr, /noise from a tool/)
  })
}

test('SIGTERM while a call runs: it is answered, then the process exits 0', async () => {
  const server = start()
  await handshake(server)
  server.send(call(1, 'slow', { ms: 300 }))
  await server.stderrMatches(/slow started/)
  server.child.kill('SIGTERM')
  const answer = await server.json()
  assert.equal(answer.result.content[0].text, 'slept 300')
  const [code, signal] = await server.exited
  assert.equal(signal, null)
  assert.equal(code, 0)
  assert.match(server.stderr(), /serveStdio resolved/)
  server.child.stdin.destroy()
})
