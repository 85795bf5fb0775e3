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

/**
 * Throws for a count, size or duration option that the native layer would read as another
 * number: every number in `options` must be a whole number from 0 to 2^32 - 1 (a negative one
 * would wrap around to a huge limit).
 */
function checkCounts(options) {
  for (const [key, value] of Object.entries(options)) {
    if (typeof value !== 'number') continue
    if (!Number.isInteger(value) || value < 0 || value > 0xffffffff) {
      throw new ToolwireError(`toolwire: ${key} must be a whole number from 0 to 4294967295, not ${value}`, 'ERR_INVALID_ARG_VALUE')
    }
  }
}

module.exports = { ToolwireError, fromNative, created, unwrap, checkCounts }
