'use strict'
// What handlers return: content blocks, InputRequired (2026-07-28 MRTR), and a returned value
// or a tool's failure as the JSON text the engine reads (it decides what the value means, by
// the rule every language shares; only what JSON cannot say is converted here).

/** Content blocks, for `return { content: [...] }`. */
const text = (value) => ({ type: 'text', text: String(value) })
const image = (data, mimeType) => ({ type: 'image', data: base64(data), mimeType })
const audio = (data, mimeType) => ({ type: 'audio', data: base64(data), mimeType })
const resourceLink = (uri, name, extra = {}) => ({ type: 'resource_link', uri, name, ...extra })
const embeddedResource = (resource) => ({ type: 'resource', resource })

function base64(data) {
  if (typeof data === 'string') return data
  return Buffer.from(data.buffer ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength) : data).toString('base64')
}

/**
 * A resource or prompt handler's return value as the JSON the engine reads by its one rule
 * (core's `ResourceContents::from_returned` and `PromptResult::from_returned`, the same in every
 * language): only what JSON cannot say is converted here. Bytes (`Uint8Array`, `Buffer`,
 * `ArrayBuffer`) become `{ blob: base64 }` (as a `blob` value, its base64); lists and messages
 * are looked into; `undefined` is nothing.
 */
function returned(value) {
  if (value === undefined) return null
  if (Array.isArray(value)) return value.map(returned)
  if (isBytes(value)) return { blob: base64(value) }
  if (value !== null && typeof value === 'object') {
    const converted = { ...value }
    if (isBytes(converted.blob)) converted.blob = base64(converted.blob)
    if (Array.isArray(converted.messages)) converted.messages = converted.messages.map(returned)
    return converted
  }
  return value
}

const isBytes = (value) => value instanceof Uint8Array || value instanceof ArrayBuffer

/**
 * 2026-07-28 MRTR: what a tool, prompt or resource returns when it needs the client's input
 * first. The engine asks the client, who calls again with the answers (`ctx.inputResponses`, or
 * a prompt's or resource's `round`); `withState` travels sealed and comes back verified.
 */
class InputRequired {
  constructor(inputRequests = {}, requestState = undefined) {
    this.inputRequests = { ...inputRequests }
    this.requestState = requestState
  }

  /** Asks the user (`elicitation/create`) under `key`. */
  elicit(key, params) {
    return this.request(key, 'elicitation/create', params)
  }

  /** Asks the client's model (`sampling/createMessage`) under `key`. */
  sample(key, params) {
    return this.request(key, 'sampling/createMessage', params)
  }

  /** Asks for the client's roots (`roots/list`) under `key`. */
  listRoots(key) {
    return this.request(key, 'roots/list', {})
  }

  request(key, method, params) {
    this.inputRequests[key] = { method, params }
    return this
  }

  /** State for the next round (any string; the engine seals it). */
  withState(state) {
    this.requestState = state
    return this
  }

  toJSON() {
    const out = {}
    if (Object.keys(this.inputRequests).length > 0) out.inputRequests = this.inputRequests
    if (this.requestState !== undefined) out.requestState = this.requestState
    return out
  }
}

/**
 * A handler's returned value as JSON text for the engine (text crosses cheaply), which turns
 * it into the result by the rule every language shares (core's `ToolOutput::from_returned`).
 * A top-level BigInt becomes its decimal string; one deeper down throws, like a cycle.
 */
function returnedJson(value) {
  if (value instanceof InputRequired) return `InputRequired:${JSON.stringify(value)}`
  if (typeof value === 'bigint') return `"${value}"`
  return JSON.stringify(value) ?? 'null'
}

/** A ProtocolError as the engine reads it (a prefix no JSON text starts with, as for InputRequired). */
function protocolErrorJson(err) {
  return `ProtocolError:${JSON.stringify({ code: err.rpcCode, message: err.message })}`
}

function errorResult(text) {
  return JSON.stringify({ content: [{ type: 'text', text }], isError: true })
}

module.exports = {
  text,
  image,
  audio,
  resourceLink,
  embeddedResource,
  returned,
  InputRequired,
  returnedJson,
  protocolErrorJson,
  errorResult,
}
