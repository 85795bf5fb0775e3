// The Node page's examples (docs/languages/node.md): they type-check (tsc, strict), the server serves as written, and
// the test examples (prompts, middleware) pass under node --test.
import assert from 'node:assert/strict'
import { execFileSync, spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { test } from 'node:test'

import { jsonLines } from './client.mjs'

const here = import.meta.dirname
// The Node page of the documentation (it was the README's Node section).
const section = readFileSync(join(here, '..', '..', 'docs', 'languages', 'node.md'), 'utf8')
const blocks = [...section.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1])
const [example, testExample, middlewareExample] = blocks
const work = join(here, '.readme')

/** Writes `source` as `<name>.mts` in the work folder and compiles it with tsc, strict, to `<name>.mjs`. */
function compile(name, source) {
  mkdirSync(work, { recursive: true })
  writeFileSync(join(work, `${name}.mts`), source)
  const config = join(work, `tsconfig.${name}.json`)
  writeFileSync(config, JSON.stringify({
    compilerOptions: { strict: true, module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', types: ['node'], rootDir: '.', outDir: '.' },
    files: [`${name}.mts`],
  }))
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')
  execFileSync(process.execPath, [tsc, '-p', config], { stdio: 'inherit' })
}

test('the page has the server, test and middleware examples (scripts/check-docs counts them too)', () => {
  assert.equal(blocks.length, 3)
})

test('the README example compiles under strict TypeScript and serves over stdio', async () => {
  compile('readme', example)

  const child = spawn(process.execPath, [join(work, 'readme.mjs')], { stdio: ['pipe', 'pipe', 'inherit'] })
  // The next line, when it arrives (the limit only bounds a hang).
  const next = jsonLines(child.stdout, { onHang: () => child.kill() })
  const send = (message) => child.stdin.write(JSON.stringify(message) + '\n')
  send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'readme', version: '1' } } })
  assert.equal((await next()).result.serverInfo.name, 'weather')
  send({ jsonrpc: '2.0', method: 'notifications/initialized' })
  send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'forecast', arguments: { city: 'Paris', days: 2 }, _meta: { progressToken: 'p' } } })
  const progress = await next()
  assert.deepEqual(progress.params, { progressToken: 'p', progress: 0, total: 2, message: 'fetching' })
  assert.equal((await next()).params.progress, 1)
  assert.deepEqual((await next()).params, { level: 'info', data: { served: 'Paris' } })
  const forecast = await next()
  assert.deepEqual(forecast.result.structuredContent, { city: 'Paris', temperatures: [20, 21] })
  send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'shout', arguments: { text: 'hi' } } })
  assert.equal((await next()).result.content[0].text, 'HI')
  child.stdin.end()
  const [code] = await once(child, 'exit')
  assert.equal(code, 0)
})

test('the README test example compiles under strict TypeScript and passes under node --test', () => {
  compile('review.test', testExample)
  // Throws (with the test's report) unless every test in it passed.
  // A run of its own: without this, node:test in the child reports to this test run instead.
  const env = { ...process.env }
  delete env.NODE_TEST_CONTEXT
  const report = execFileSync(process.execPath, ['--test', '--test-reporter=tap', join(work, 'review.test.mjs')], { encoding: 'utf8', env })
  assert.match(report, /^# pass 1$/m)
  assert.match(report, /^# fail 0$/m)
})

test('the README middleware example compiles under strict TypeScript and passes under node --test', () => {
  compile('guard.test', middlewareExample)
  const env = { ...process.env }
  delete env.NODE_TEST_CONTEXT
  const report = execFileSync(process.execPath, ['--test', '--test-reporter=tap', join(work, 'guard.test.mjs')], { encoding: 'utf8', env })
  assert.match(report, /^# pass 1$/m)
  assert.match(report, /^# fail 0$/m)
})
