'use strict'
// Errors: the engine's (ToolwireError), and those a handler or middleware throws to choose the
// answer (ProtocolError, ToolError, ResourceNotFound).

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

/** Whether `err` is the engine's "ask the client first" signal (not a failure). */
const isInputRequired = (err) => err instanceof ToolwireError && err.code === 'TOOLWIRE_INPUT_REQUIRED'

/**
 * Thrown by a tool when the call itself failed rather than the tool's work: the client gets a
 * JSON-RPC error with `rpcCode` (e.g. -32603) instead of an `isError` result, and a task ends
 * `failed` instead of `completed`. For what the model should read, throw any other Error.
 */
class ProtocolError extends Error {
  constructor(rpcCode, message) {
    super(message)
    if (!Number.isInteger(rpcCode) || rpcCode < -(2 ** 31) || rpcCode >= 2 ** 31) {
      throw new TypeError('toolwire: ProtocolError(rpcCode, message) needs a JSON-RPC error code (a 32-bit integer)')
    }
    this.name = 'ProtocolError'
    this.rpcCode = rpcCode
  }
}

/**
 * Thrown by a middleware before `next()`: the `tools/call` is answered with an `isError` result
 * of this message, for the model to read (another method gets JSON-RPC -32603). A tool may
 * throw it too, as any Error: an `isError` result.
 */
class ToolError extends Error {
  constructor(message) {
    super(message)
    this.name = 'ToolError'
  }
}

/** Throw it in a resource handler: the client gets JSON-RPC -32002 (resource not found). */
class ResourceNotFound extends Error {
  constructor(message = 'Resource not found') {
    super(message)
    this.name = 'ResourceNotFound'
  }
}

module.exports = {
  ToolwireError,
  fromNative,
  created,
  unwrap,
  checkCounts,
  isInputRequired,
  ProtocolError,
  ToolError,
  ResourceNotFound,
}
