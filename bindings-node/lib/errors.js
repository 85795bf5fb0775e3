'use strict'

/**
 * The engine's errors, with Node's idiom: one class, told apart by `code`
 * (see src/errors.rs for the codes and when each happens).
 */
class ToolwireError extends Error {
  constructor(message, code, details = {}) {
    super(message)
    this.name = code === 'ABORT_ERR' ? 'AbortError' : 'ToolwireError'
    this.code = code
    if (details.rpcCode !== undefined) this.rpcCode = details.rpcCode
    if (details.data !== undefined && details.data !== null) this.data = details.data
  }
}

/** The native layer's `{ code, message, rpcCode?, data? }` as an error to throw. */
function fromNative(info) {
  return new ToolwireError(info.message, info.code, info)
}

/**
 * A native call's value, or (when it returned an error description in its place, see
 * src/errors.rs) that error thrown. `Native` is the class of the value.
 */
function created(value, Native) {
  if (value instanceof Native) return value
  throw fromNative(value)
}

/** Unwraps a native `{ ok }` / `{ error }` outcome. */
function unwrap(outcome) {
  if (outcome.error) throw fromNative(outcome.error)
  return outcome.ok
}

module.exports = { ToolwireError, fromNative, created, unwrap }
