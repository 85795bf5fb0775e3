'use strict'
// Middleware: `server.middleware(fn)`'s `fn(request, next)` as the engine's before/after pair
// (src/middleware.rs is the engine's side).

const native = require('./native')
const { ProtocolError, ToolError } = require('./errors')
const { hasThen } = require('./settle')

const CONTINUE = '{"continue":true}'

/** The failure log of a middleware (stderr, as a tool's by default). */
function middlewareFailed(name, what, err) {
  const detail = err instanceof Error ? err.stack || err.message : String(err)
  process.stderr.write(`toolwire: middleware ${JSON.stringify(name)} ${what}: ${detail}\n`)
}

/**
 * One `fn(request, next)` as the engine's before/after pair, in the engine's calling convention
 * (`src/middleware.rs`): `(token, requestJson)` is `before`, which returns the verdict's JSON
 * now, or nothing now and `settleJson(token, json)` later; `(null, outcomeJson)` is
 * `after`, which hands the outcome to the `next()` of that request. Never throws.
 */
function aroundWrapper(fn) {
  const name = fn.name || 'anonymous'
  // Requests that reached this middleware and whose outcome has not come yet, by sequence.
  const open = new Map()
  const refusal = (err) => {
    if (err instanceof ProtocolError) return JSON.stringify({ refuse: { code: err.rpcCode, message: err.message } })
    if (err instanceof ToolError) return JSON.stringify({ toolError: err.message })
    middlewareFailed(name, 'failed', err)
    return JSON.stringify({ refuse: { code: -32603, message: `Internal error: middleware ${name} failed` } })
  }
  const forgot = JSON.stringify({ refuse: { code: -32603, message: `Internal error: middleware ${name} returned without calling next()` } })
  const before = (token, requestJson) => {
    const request = Object.freeze(JSON.parse(requestJson))
    const state = { outcome: null, resolve: null }
    open.set(request.sequence, state)
    let deciding = true // false once the verdict is out
    let now = true // during fn's synchronous part: the verdict is returned, not settled
    let entered = false
    const next = () => {
      if (entered) return Promise.reject(new Error(`toolwire: middleware ${name} called next() more than once`))
      entered = true
      if (deciding && !now) {
        deciding = false
        native.settleJson(token, CONTINUE)
      }
      if (state.outcome !== null) return Promise.resolve(state.outcome)
      return new Promise((resolve) => {
        state.resolve = resolve
      })
    }
    let value
    try {
      value = fn(request, next)
    } catch (err) {
      now = false
      deciding = false
      return refusal(err)
    }
    now = false
    const settled = hasThen(value)
      ? Promise.resolve(value).then(
          () => null,
          (err) => err,
        )
      : null
    if (entered) {
      deciding = false
      settled?.then((err) => {
        if (err !== null) middlewareFailed(name, 'threw after next()', err)
      })
      return CONTINUE
    }
    if (settled === null) {
      deciding = false
      return forgot
    }
    settled.then((err) => {
      if (err !== null && !deciding) middlewareFailed(name, 'threw after next()', err)
      if (!deciding) return
      deciding = false
      native.settleJson(token, err === null ? forgot : refusal(err))
    })
    return undefined
  }
  const after = (outcomeJson) => {
    const heard = JSON.parse(outcomeJson)
    const state = open.get(heard.sequence)
    if (state === undefined) return
    open.delete(heard.sequence)
    const outcome = { kind: heard.kind, elapsedMs: heard.elapsedMs }
    if (heard.code !== undefined) outcome.code = heard.code
    state.outcome = Object.freeze(outcome)
    state.resolve?.(state.outcome)
  }
  return (token, json) => {
    try {
      return token == null ? after(json) : before(token, json)
    } catch (err) {
      // Only a bug of ours gets here; the engine must still hear a verdict.
      middlewareFailed(name, 'could not run', err)
      return token == null ? undefined : JSON.stringify({ refuse: { code: -32603, message: `Internal error: middleware ${name} could not run` } })
    }
  }
}

module.exports = { aroundWrapper }
