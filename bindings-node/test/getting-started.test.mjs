// The Node getting-started example (examples/hello/node, included by
// docs/getting-started/node.md): its test passes under node --test as a user runs it, and
// main.mjs serves the tool over stdio. The files are copied into this package's folder, where
// `toolwire` resolves to the package itself and `zod` to its dev dependency.
import assert from 'node:assert/strict'
import { execFileSync, spawn } from 'node:child_process'
import { once } from 'node:events'
import { copyFileSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'

import { jsonLines } from './client.mjs'

const here = import.meta.dirname
const example = join(here, '..', '..', 'examples', 'hello', 'node')
const work = join(here, '.getting-started')
mkdirSync(work, { recursive: true })
for (const name of ['server.mjs', 'main.mjs', 'hello.test.mjs']) copyFileSync(join(example, name), join(work, name))

test('the getting-started test passes under node --test', () => {
  // A run of its own: without this, node:test in the child reports to this test run instead.
  const env = { ...process.env }
  delete env.NODE_TEST_CONTEXT
  const report = execFileSync(process.execPath, ['--test', '--test-reporter=tap', join(work, 'hello.test.mjs')], { encoding: 'utf8', env })
  assert.match(report, /^# pass 1$/m)
  assert.match(report, /^# fail 0$/m)
})

test('the getting-started server serves its tool over stdio', async () => {
  const child = spawn(process.execPath, [join(work, 'main.mjs')], { stdio: ['pipe', 'pipe', 'inherit'] })
  const next = jsonLines(child.stdout, { onHang: () => child.kill() })
  const send = (message) => child.stdin.write(JSON.stringify(message) + '\n')
  send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'hello', version: '1' } } })
  assert.equal((await next()).result.serverInfo.name, 'hello')
  send({ jsonrpc: '2.0', method: 'notifications/initialized' })
  send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'greet', arguments: { name: 'Ada' } } })
  assert.deepEqual((await next()).result.content, [{ type: 'text', text: 'Hello, Ada!' }])
  child.stdin.end()
  const [code] = await once(child, 'exit')
  assert.equal(code, 0)
})
