'use strict'
// Middleware: `server.middleware(fn)`'s `fn(request, next)` for the engine's around-middleware
// (src/middleware.rs). The rules (next() once; a return without it, or a throw, refuses; what
// runs after it only observes) are the engine's: this runs fn, converts, and reports.

const { ProtocolError, ToolError } = require('./errors')
const { hasThen } = require('./settle')

/** The failure log of a middleware (stderr, as a tool's by default). */
function middlewareFailed(name, what, err) {
  process.stderr.write(`toolwire: middleware ${JSON.stringify(name)} ${what}: ${detail(err)}\n`)
}

const detail = (err) => (err instanceof Error ? err.stack || err.message : String(err))

/** What next() resolves with: `{ kind, code?, elapsedMs }`, from the engine's `{ kind, code?, elapsed }`. */
function outcome(endedJson) {
  const ended = JSON.parse(endedJson)
  const heard = { kind: ended.kind, elapsedMs: ended.elapsed * 1000 }
  if (ended.code !== undefined) heard.code = ended.code
  return Object.freeze(heard)
}

/**
 * One `fn(request, next)`, named `name` in logs, as the engine starts it (`src/middleware.rs`): `(requestJson, call)`
 * runs fn and reports to `call`: `call.next(onEnded)` when fn calls next(), `call.finish(report)`
 * when it ends (at once when it did not return a Promise, so a synchronous verdict is heard at
 * once).
 */
function aroundStart(fn, name) {
  return (requestJson, call) => {
    const request = Object.freeze(JSON.parse(requestJson))
    let called = false // only for the log's wording
    // A second next(), or one after fn ended, rejects (the engine's error says which).
    const next = () => {
      called = true
      return new Promise((resolve) => call.next((endedJson) => resolve(outcome(endedJson))))
    }
    const ended = (err) => {
      if (called) middlewareFailed(name, 'threw after next()', err)
      if (err instanceof ProtocolError) return call.finish(JSON.stringify({ refuse: { code: err.rpcCode, message: err.message } }))
      if (err instanceof ToolError) return call.finish(JSON.stringify({ toolError: err.message }))
      if (!called) middlewareFailed(name, 'failed', err)
      call.finish(JSON.stringify({ failed: detail(err) }))
    }
    let value
    try {
      value = fn(request, next)
    } catch (err) {
      ended(err)
      return
    }
    if (!hasThen(value)) {
      call.finish(null)
      return
    }
    Promise.resolve(value).then(() => call.finish(null), ended)
  }
}

module.exports = { aroundStart }
