'use strict'
// Answers JavaScript gives later (src/settle.rs is the engine's side): a wrapper called with a
// token returns its answer as JSON text at once, or nothing and later `settleJson(token, json)`
// when its Promise settles.

const native = require('./native')
const { ProtocolError, ResourceNotFound } = require('./errors')

/** A Promise (or any thenable): the answer comes when it settles. */
const hasThen = (value) => value !== null && typeof value === 'object' && typeof value.then === 'function'

/**
 * The engine's calling convention for resources, prompts, completers and token validators:
 * `(token, requestJson)` → the answer as JSON text, or nothing now and `settleJson(token, json)`
 * when a Promise settles. Throws become `{ error }` (or `{ notFound }`).
 */
function jsonWrapper(handler, shape) {
  const failure = (err) =>
    JSON.stringify(
      err instanceof ResourceNotFound
        ? { notFound: err.message }
        : err instanceof ProtocolError
          ? { protocolError: { code: err.rpcCode, message: err.message } }
          : { error: err instanceof Error ? err.message : String(err) },
    )
  return (token, requestJson, call) => {
    const request = JSON.parse(requestJson)
    const answer = (value) => {
      try {
        return JSON.stringify(shape(value, request))
      } catch (err) {
        return failure(err)
      }
    }
    let value
    try {
      value = handler(request, call)
    } catch (err) {
      return failure(err)
    }
    if (!hasThen(value)) return answer(value)
    Promise.resolve(value).then(answer, failure).then((json) => native.settleJson(token, json))
    return undefined
  }
}

module.exports = { hasThen, jsonWrapper }
