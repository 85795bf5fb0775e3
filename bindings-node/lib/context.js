'use strict'
// Context and RequestContext: what a handler gets to reach its client (progress, log, the
// cancel signal, questions, client info) and the server's lifespan value. `CALL` is internal:
// the engine's handle of the call, which server.js settles a tool's answer on.

const native = require('./native')
const { unwrap } = require('./errors')

const LOG_LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency']

const CALL = Symbol('toolwire.call')

/** What a tool handler gets besides its arguments. */
class Context {
  #call
  #lifespan
  #info = null
  #signal = null
  #ended = null

  constructor(call, lifespan) {
    this.#call = call
    this.#lifespan = lifespan
  }

  /** What the server's `lifespan` gave (a database pool, a client…); undefined without one. */
  get lifespanContext() {
    return this.#lifespan.value
  }

  get [CALL]() {
    return this.#call
  }

  /** Resolves when the call ends: to why it was abandoned ("cancelled", "deadline"), or null. */
  #whenEnded() {
    if (this.#ended === null) this.#ended = native.ctxEnded(this.#call)
    return this.#ended
  }

  /** Fires when the client cancels the call (AbortError) or its deadline passes (TimeoutError). */
  get signal() {
    if (this.#signal === null) {
      const controller = new AbortController()
      this.#signal = controller.signal
      this.#whenEnded().then((reason) => {
        if (reason === 'deadline') controller.abort(new DOMException('The tool call passed its deadline', 'TimeoutError'))
        else if (reason) controller.abort(new DOMException('The client cancelled the tool call', 'AbortError'))
      })
    }
    return this.#signal
  }

  /** True once the call was cancelled or passed its deadline (or is over). */
  get isCancelled() {
    return native.ctxIsCancelled(this.#call)
  }

  /** Resolves once `isCancelled` turns true: the call was cancelled, passed its deadline, or is over. */
  cancelled() {
    return this.#whenEnded().then(() => undefined)
  }

  /** Whether the client asked for progress (its request carried a `progressToken`). */
  get wantsProgress() {
    return this.#details().wantsProgress === true
  }

  #details() {
    if (this.#info === null) this.#info = native.ctxInfo(this.#call) ?? {}
    return this.#info
  }

  get requestId() {
    return this.#details().requestId
  }

  get toolName() {
    return this.#details().toolName
  }

  get protocolVersion() {
    return this.#details().protocolVersion
  }

  /** The client's `clientInfo` ({ name, version, ... }). */
  get clientInfo() {
    return this.#details().clientInfo ?? null
  }

  get clientCapabilities() {
    return this.#details().clientCapabilities ?? {}
  }

  /** Whether the client renders MCP Apps views (it declared the extension with their MIME type). */
  get clientRendersApps() {
    return this.#details().rendersApps ?? false
  }

  /** The settings the client declared for the extension `id` (core's `client_extension`), or `null`. */
  clientExtension(id) {
    return native.ctxClientExtension(this.#call, id)
  }

  /** 2026-07-28 MRTR: the client's answers to what an earlier round asked, by key. */
  get inputResponses() {
    return this.#details().inputResponses ?? {}
  }

  /** 2026-07-28 MRTR: the state this tool returned with its last `InputRequired`, verified by the engine. */
  get requestState() {
    return this.#details().requestState ?? null
  }

  /** The request's W3C trace context: `{ traceparent, tracestate, baggage }` (each string or null). */
  get traceContext() {
    return this.#details().traceContext ?? { traceparent: null, tracestate: null, baggage: null }
  }

  /** Reports progress (only if the client asked for it; values must increase). Returns whether it was sent. */
  progress(progress, total, message) {
    return native.ctxProgress(this.#call, progress, total ?? undefined, message ?? undefined)
  }

  /** Sends `notifications/message` if `level` passes the client's level. Returns whether it was sent. */
  log(level, data, logger) {
    if (!LOG_LEVELS.includes(level)) {
      throw new TypeError(`toolwire: unknown log level ${JSON.stringify(level)} (one of ${LOG_LEVELS.join(', ')})`)
    }
    return native.ctxLog(this.#call, level, data === undefined ? null : data, logger ?? undefined)
  }

  /**
   * Over Streamable HTTP with an SSE answer: closes the connection carrying this call (after a
   * retry hint) without ending the call; the client reconnects and resumes. No effect on stdio.
   */
  closeSseStream() {
    native.ctxCloseSseStream(this.#call)
  }

  /**
   * `sampling/createMessage`: asks the client's model. In a 2026-07-28 request nothing is sent:
   * the answer comes from this round, or the promise rejects with a `ToolwireError` of code
   * `TOOLWIRE_INPUT_REQUIRED`; let it end the tool, and the engine asks the client, who calls
   * again (this line then has its answer). Code before the question runs again each round.
   */
  async sample(params, options = {}) {
    return unwrap(await native.ctxClientRequest(this.#call, 'sample', params, options.timeoutMs))
  }

  /** `elicitation/create`: asks the user. */
  async elicit(params, options = {}) {
    return unwrap(await native.ctxClientRequest(this.#call, 'elicit', params, options.timeoutMs))
  }

  /** `roots/list`: the client's roots. */
  async listRoots(options = {}) {
    return unwrap(await native.ctxClientRequest(this.#call, 'roots', {}, options.timeoutMs))
  }

  /**
   * Several questions at once, each `[method, params]` with method `'elicitation/create'`,
   * `'sampling/createMessage'` or `'roots/list'`; resolves to their results in order (for roots,
   * `{ roots }`). In a 2026-07-28 request they make one round: the client is asked every
   * unanswered one together. In a session they are sent one after the other.
   */
  async askAll(questions, options = {}) {
    if (!Array.isArray(questions)) {
      throw new TypeError('toolwire: askAll takes an array of [method, params] pairs')
    }
    return unwrap(await native.ctxAskAll(this.#call, questions, options.timeoutMs))
  }

  /** Any other request to the client. */
  async request(method, params = {}, options = {}) {
    return unwrap(await native.ctxRequest(this.#call, method, params, options.timeoutMs))
  }
}

/**
 * What a resource, prompt or completion handler gets last: a `Context` (progress, log, signal,
 * client info, `lifespanContext`) whose `inputResponses` and `requestState` are the request's
 * own 2026-07-28 round.
 */
class RequestContext extends Context {
  #request

  constructor(call, lifespan, request) {
    super(call, lifespan)
    this.#request = request
  }

  get inputResponses() {
    return this.#request.inputResponses ?? {}
  }

  get requestState() {
    return this.#request.requestState ?? null
  }
}

module.exports = { LOG_LEVELS, CALL, Context, RequestContext }
