// The demo server of the shared contract, with JavaScript handlers: echo, add, sleep, fail.
//
// Run it with `examples/run-demo node [--extra-tools N] [--http PORT]` (`--conformance`: the
// conformance suite's server; `--redis URL` and `--request-state-key SECRET`, repeatable, make it
// one replica of several behind a load balancer). The schemas are spelled out as JSON
// Schema so that every language's demo lists exactly the same tools (see docs/languages/node.md
// for zod).
import { createRequire } from 'node:module'
import { pathToFileURL } from 'node:url'

import { Server, ToolwireError } from 'toolwire'

const INSTRUCTIONS = 'Demo server: echo text, add two numbers, sleep with progress, or fail on purpose.'

// Loaded at the first sleep, not at start: importing `node:timers/promises` costs a server that
// never sleeps about 1.7 ms of its start (bench/cold-start-pairs, 60 rounds).
const require = createRequire(import.meta.url)
let timers
const delay = (ms, options) => (timers ??= require('node:timers/promises')).setTimeout(ms, undefined, options)

const object = (properties, required) => ({ type: 'object', properties, required, additionalProperties: false })

export function buildServer({ extraTools = 0, asyncEcho = false, faultTools = false, benchTools = false, ...options } = {}) {
  const server = new Server({
    name: 'toolwire-demo',
    version: '0.1.0',
    title: 'toolwire demo (Node)',
    instructions: INSTRUCTIONS,
    ...options,
  })

  server.tool('echo', {
    description: 'Returns the text it is given.',
    inputSchema: object({ text: { type: 'string' } }, ['text']),
  }, asyncEcho ? async ({ text }) => text : ({ text }) => text)

  server.tool('add', {
    description: 'Adds two numbers.',
    inputSchema: object({ a: { type: 'number' }, b: { type: 'number' } }, ['a', 'b']),
    outputSchema: { type: 'object', properties: { sum: { type: 'number' } }, required: ['sum'] },
  }, ({ a, b }) => ({ sum: a + b }))

  server.tool('sleep', {
    description: 'Waits ms milliseconds, reporting progress every 100 ms when asked.',
    inputSchema: object({ ms: { type: 'integer', minimum: 0, maximum: 60000 } }, ['ms']),
  }, async ({ ms }, ctx) => {
    const start = performance.now()
    const end = start + ms
    // Progress counts 100 ms steps (not wall time), so every language reports the same values.
    for (let step = 1; ; step++) {
      const tick = start + step * 100
      if (tick >= end) {
        await delay(Math.max(0, end - performance.now()), { signal: ctx.signal })
        break
      }
      await delay(Math.max(0, tick - performance.now()), { signal: ctx.signal })
      ctx.progress(Math.min(step * 100, ms), ms)
    }
    return `slept ${ms} ms`
  })

  server.tool('fail', {
    description: 'Fails with the given message.',
    inputSchema: object({ message: { type: 'string' } }, ['message']),
  }, ({ message }) => {
    throw new Error(message)
  })

  for (let i = 0; i < extraTools; i++) {
    server.tool(`tool_${String(i).padStart(3, '0')}`, {
      description: `Extra tool number ${i} (benchmarks tools/list).`,
      inputSchema: {
        type: 'object',
        properties: { q: { type: 'string' }, n: { type: 'integer', minimum: 0 } },
        required: ['q'],
      },
    }, ({ q }) => q)
  }
  if (faultTools) addFaultTools(server)
  if (benchTools) addBenchTools(server)
  return server
}

// The tools of bench/payloads, as in every language's demo (`--bench-tools`); the large schema
// is read from the one file every server reads.
const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789'
const ITEM_BYTES = 64
const MAX_BYTES = 64 * 1024 * 1024

// Characters (code points) without spreading the text into an array of them, which for 1 MiB
// costs more than the call it measures: a surrogate pair is one character.
function codePoints(text) {
  let count = text.length
  for (let i = 0; i < text.length - 1; i++) {
    const unit = text.charCodeAt(i)
    if (unit >= 0xd800 && unit < 0xdc00) {
      const next = text.charCodeAt(i + 1)
      if (next >= 0xdc00 && next < 0xe000) {
        count--
        i++
      }
    }
  }
  return count
}

function addBenchTools(server) {
  // node:fs by require, here: an ESM import of it anywhere in the demo made Node build its whole
  // export list at start, which loads its stream and promise modules (a few ms of every start,
  // bench tools or not).
  const { readFileSync } = require('node:fs')
  const bytes = object({ bytes: { type: 'integer', minimum: 0, maximum: MAX_BYTES } }, ['bytes'])
  server.tool('take_text', {
    description: 'Answers the length in characters of the text it is given.',
    inputSchema: object({ text: { type: 'string' } }, ['text']),
  }, ({ text }) => String(codePoints(text)))
  server.tool('give_text', { description: 'Answers a text of that many ASCII bytes.', inputSchema: bytes },
    ({ bytes }) => ALPHABET.repeat(Math.floor(bytes / ALPHABET.length) + 1).slice(0, bytes))
  const item = {
    type: 'object',
    properties: { id: { type: 'integer' }, name: { type: 'string' }, tags: { type: 'array', items: { type: 'string' } } },
    required: ['id', 'name', 'tags'],
  }
  server.tool('give_structured', {
    description: 'Answers structured content of about that many bytes.',
    inputSchema: bytes,
    outputSchema: { type: 'object', properties: { items: { type: 'array', items: item } }, required: ['items'] },
  }, ({ bytes }) => {
    const items = []
    for (let n = 0; n < Math.floor(bytes / ITEM_BYTES); n++) {
      items.push({ id: n, name: `item-${String(n).padStart(6, '0')}`, tags: ['alpha', 'beta', 'gamma'] })
    }
    return { items }
  })
  server.tool('validate_big', {
    description: 'Checks an order against a large schema; answers its line count.',
    inputSchema: JSON.parse(readFileSync(new URL('../../bench/schemas/big.json', import.meta.url), 'utf8')),
  }, ({ order }) => `lines=${order.lines.length}`)
  server.tool('validate_small', {
    description: 'A trivial schema; answers ok.',
    inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  }, () => 'ok')
}

// The tools that misbehave on purpose, as in every language's demo (`--fault-tools`).
function addFaultTools(server) {
  server.tool('crash', { description: 'Throws a plain runtime error (a fault injected on purpose).' }, () => {
    const missing = undefined
    return missing.field
  })
  server.tool('hang', { description: 'Never returns; its timeout ends the call.', timeoutMs: 200 }, () => new Promise(() => {}))
  server.tool('malformed', {
    description: 'Returns a result its output schema refuses.',
    outputSchema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] },
  }, () => ({ n: 'not a number' }))
}

const USAGE = 'usage: demo.mjs [--extra-tools N [--fault-tools] [--bench-tools] | --conformance] [--async-echo] [--redis URL] [--request-state-key SECRET]... [--http PORT [--stateless] [--json | --sse]]'

function main(argv) {
  let extraTools = 0
  let faultTools = false
  let benchTools = false
  let asyncEcho = false
  let httpPort = null
  let conformance = false
  let stateless = false
  let jsonResponse = false
  let responseMode
  // `--redis`: tasks and changes shared with the other replicas; `--request-state-key`
  // (repeatable): the MRTR `requestState` secrets, the first sealing, the same on every replica.
  let redis
  const requestStateKeys = []
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--extra-tools') {
      extraTools = Number.parseInt(argv[++i] ?? '0', 10)
    } else if (argv[i] === '--async-echo') {
      // echo as an async function, as the TypeScript SDK's examples (and our anchor) write it
      asyncEcho = true
    } else if (argv[i] === '--http') {
      httpPort = Number.parseInt(argv[++i] ?? '0', 10)
    } else if (argv[i] === '--fault-tools') {
      faultTools = true
    } else if (argv[i] === '--bench-tools') {
      benchTools = true
    } else if (argv[i] === '--conformance') {
      conformance = true
    } else if (argv[i] === '--stateless') {
      stateless = true
    } else if (argv[i] === '--json') {
      jsonResponse = true
    } else if (argv[i] === '--sse') {
      responseMode = 'sse'
    } else if (argv[i] === '--redis' || argv[i] === '--request-state-key') {
      const value = argv[++i]
      if (value === undefined) {
        process.stderr.write(`toolwire-demo: ${argv[i - 1]} needs ${argv[i - 1] === '--redis' ? 'a URL' : 'a secret'}\n${USAGE}\n`)
        return 2
      }
      if (argv[i - 1] === '--redis') redis = value
      else requestStateKeys.push(value)
    } else {
      process.stderr.write(`toolwire-demo: unknown argument ${JSON.stringify(argv[i])}\n${USAGE}\n`)
      return 2
    }
  }
  const failed = (err) => {
    // toolwire's own errors (an unreachable Redis, a port in use) are said once, without a stack.
    process.stderr.write(`toolwire-demo: ${err instanceof ToolwireError ? err.message : err.stack}\n`)
    process.exitCode = 1
  }
  const shared = { redis, requestStateKeys: requestStateKeys.length > 0 ? requestStateKeys : undefined }
  // Built inside the promise: a refused option (an unreachable Redis) is reported by `failed`.
  const build = conformance
    ? import('./conformance.mjs').then((m) => m.buildConformanceServer(shared))
    : Promise.resolve().then(() => buildServer({ extraTools, asyncEcho, faultTools, benchTools, onToolError: quietFail, ...shared }))
  build
    .then(async (server) => {
      if (httpPort === null) return server.serveStdio()
      const http = await server.serveHttp('127.0.0.1', httpPort, { stateless, jsonResponse, responseMode })
      // The one line a launcher waits for: where to connect.
      process.stderr.write(`toolwire-demo: listening on ${http.url}\n`)
      // server.close() ends every transport the server serves (here, this HTTP server).
      for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => server.close())
      return http.closed
    })
    .catch(failed)
  return 0
}

// The tools that fail on purpose would bury stderr under their expected errors.
const FAILING_ON_PURPOSE = new Set(['fail', 'crash', 'hang', 'malformed'])

function quietFail(err, tool) {
  if (!FAILING_ON_PURPOSE.has(tool)) process.stderr.write(`toolwire-demo: tool ${tool} failed: ${err.stack}\n`)
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const code = main(process.argv.slice(2))
  if (code !== 0) process.exitCode = code
}
