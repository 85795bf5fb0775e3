'use strict'
// A client for tests: drives a Server in process through core's in-memory session, as a real
// client would, without JSON-RPC text in the test.
//
//   const client = await connect(server)
//   const result = await client.callTool('forecast', { city: 'Oslo' })
//   await client.close()
//
// Both protocol eras: `protocolVersion: '2025-11-25'` (the default) initializes a session;
// '2026-07-28' sends every request stand-alone with its `_meta` and answers the server's
// input-required rounds itself. Questions the server asks (elicitation, sampling, roots) go to
// the callbacks given to `connect`, in either era. The client is core's (`toolwire::client`,
// the same as Python's toolwire.testing; src/client.rs): this module converts values and hands
// the server's questions to the callbacks.
//
// `replayVector(server, testCase)` replays a golden wire vector case (tests/vectors) with core's
// replayer (`toolwire::client::vectors`, src/vectors.rs), as every language's tests do.

const { AssertionError } = require('node:assert')

const { ToolwireError } = require('./errors')
const { HOLD_LIFESPAN, OPEN_CLIENT, REPLAY_VECTOR } = require('./server')

/** `connect`'s hold on the lifespan, handed to the client it makes (let go of at its close). */
const LIFESPAN_HOLD = Symbol('toolwire.testing.lifespanHold')

/** The server answered a request with a JSON-RPC error (`error` is its error object). */
class McpError extends Error {
  constructor(error) {
    super(`${error?.message} (${error?.code})`)
    this.name = 'McpError'
    this.error = error
    this.code = error?.code ?? 0
    this.data = error?.data
  }
}

/**
 * A request's outcome, the JSON text of `{ ok }` or `{ error }` (src/errors.rs): its value, or
 * its error thrown: the server's answer as `McpError`, the test client's own failure (no
 * answer in time: `TOOLWIRE_TIMEOUT`) as a `ToolwireError`.
 */
function settled(outcome) {
  const { ok, error } = JSON.parse(outcome)
  if (error === undefined) return ok
  if (error.code === 'TOOLWIRE_SERVER_ERROR') {
    const answer = { code: error.rpcCode, message: error.message }
    if (error.data !== null && error.data !== undefined) answer.data = error.data
    throw new McpError(answer)
  }
  throw new ToolwireError(`toolwire testing: ${error.message}`, error.code, error)
}

/** Hands `onprogress` a progress notification's params (JSON text), without its token. */
function progressed(onprogress, params) {
  const { progressToken: _token, ...progress } = JSON.parse(params)
  try {
    onprogress(progress)
  } catch (err) {
    // Uncaught, as a throwing event listener's error is, rather than lost on the native side.
    process.nextTick(() => {
      throw err
    })
  }
}

/**
 * `ask(method, paramsJson, reply)` for the native client: answers a question of the server's
 * with the callback given for it. It holds the callbacks only, not the client: the native side
 * keeps it alive, and the client must stay collectable.
 */
function answerer(elicitation, sampling) {
  return async (method, params, reply) => {
    const callback = method === 'elicitation/create' ? elicitation : sampling
    try {
      reply.ok(JSON.stringify(await callback(JSON.parse(params))))
    } catch (err) {
      // A failing callback is told to the server: no call waits for an answer that never comes.
      if (err instanceof McpError && Number.isInteger(err.code)) {
        const data = err.data === undefined ? undefined : JSON.stringify(err.data)
        reply.fail(err.code, String(err.error?.message ?? err.message), data)
      } else reply.fail(-32603, `the test client's callback failed: ${err instanceof Error ? err.message : String(err)}`)
    }
  }
}

/**
 * A connected `TestClient`. Options: `protocolVersion`, `elicitation(params)` and
 * `sampling(params)` (sync or async; each one given is declared in the capabilities), `roots`
 * (what `roots/list` returns), `capabilities`, `clientInfo`, `timeoutMs` (per request, 30 s).
 * The client holds the server's lifespan as a serve does: started first, let go of when the
 * client closes (the last hold's `close()` resolves after the clean-up).
 */
async function connect(server, options = {}) {
  // The server's lifespan first: a failure to start is connect's error.
  const hold = await server[HOLD_LIFESPAN]()
  let client
  try {
    client = new TestClient(server, { ...options, [LIFESPAN_HOLD]: hold })
  } catch (err) {
    await hold.release()
    throw err
  }
  try {
    await client.start()
  } catch (err) {
    await client.close()
    throw err
  }
  return client
}

class TestClient {
  #session
  #native

  constructor(server, options = {}) {
    const { protocolVersion = '2025-11-25', elicitation, sampling, roots, capabilities, clientInfo, timeoutMs = 30_000 } = options
    this.protocolVersion = protocolVersion
    this.clientInfo = clientInfo ?? { name: 'toolwire-test-client', version: '1.0' }
    /** The capabilities declared (those given, plus one per answer given), once connected. */
    this.capabilities = {}
    /** The `initialize` (or, in 2026-07-28, `server/discover`) result. */
    this.serverInfo = {}
    const settings = {
      protocolVersion,
      capabilities: capabilities ?? {},
      clientInfo: this.clientInfo,
      elicitation: elicitation !== undefined,
      sampling: sampling !== undefined,
      roots: roots ?? null,
      timeoutMs,
    }
    this.#session = server[OPEN_CLIENT](JSON.stringify(settings), answerer(elicitation, sampling), options[LIFESPAN_HOLD])
    this.#native = this.#session.client
  }

  get modern() {
    return this.#native.modern
  }

  /** The server's `{ name, version, ... }`, from either era's answer. */
  get server() {
    return JSON.parse(this.#native.server())
  }

  /** Notifications received so far (progress ones included), in order; a new array each read. */
  get notifications() {
    return JSON.parse(this.#native.notifications())
  }

  /** Opens the session (`connect` calls it). */
  async start() {
    this.serverInfo = settled(await this.#native.connect())
    this.capabilities = JSON.parse(this.#native.capabilities())
  }

  /**
   * Ends the session: calls in flight finish first (the server's questions are still answered
   * meanwhile); then requests still pending fail with `McpError` (-32000).
   */
  close() {
    return this.#session.shutdown()
  }

  // --- requests

  /**
   * Sends `method` and resolves to its result; a JSON-RPC error rejects with `McpError`, no
   * answer within `timeoutMs` with a `ToolwireError` (`TOOLWIRE_TIMEOUT`). In the 2026-07-28
   * era the request carries the version, capabilities and client info in `_meta`.
   */
  async request(method, params = {}, { timeoutMs } = {}) {
    return settled(await this.#native.request(method, JSON.stringify(params ?? {}), timeoutMs))
  }

  /** Every tool, all pages. */
  async listTools() {
    return settled(await this.#native.listTools())
  }

  /**
   * The tool's `CallToolResult` (an `isError` one too). `callTool(name, args, { onprogress })`,
   * or the TypeScript SDK's `callTool({ name, arguments }, undefined, { onprogress })`;
   * `onprogress({ progress, total, message })` receives the call's progress notifications, all
   * before the result. 2026-07-28 input-required rounds are answered.
   */
  async callTool(name, args, options) {
    // The SDK's second argument is a result schema: toolwire's results need none.
    if (typeof name === 'object' && name !== null) ({ name, arguments: args } = name)
    const onprogress = options?.onprogress
    const heard = onprogress == null ? undefined : (params) => progressed(onprogress, params)
    return settled(await this.#native.callTool(name, JSON.stringify(args ?? {}), heard))
  }

  async listResources() {
    return settled(await this.#native.listResources())
  }

  async listResourceTemplates() {
    return settled(await this.#native.listResourceTemplates())
  }

  /** The `ReadResourceResult` (`contents`); `readResource(uri)` or `readResource({ uri })`. */
  async readResource(uri) {
    return settled(await this.#native.readResource(typeof uri === 'object' && uri !== null ? uri.uri : uri))
  }

  async listPrompts() {
    return settled(await this.#native.listPrompts())
  }

  /** The `GetPromptResult` (`messages`); `getPrompt(name, args)` or `getPrompt({ name, arguments })`. */
  async getPrompt(name, args) {
    if (typeof name === 'object' && name !== null) ({ name, arguments: args } = name)
    return settled(await this.#native.getPrompt(name, JSON.stringify(args ?? {})))
  }

  /**
   * The `completion` of `completion/complete` (`values`, `hasMore`, `total`):
   * `complete(ref, argument, value, context?)` with `ref` `{ type: 'ref/prompt', name }` or
   * `{ type: 'ref/resource', uri }` and `context` the other arguments given so far.
   */
  async complete(ref, argument, value, context) {
    const given = context === undefined ? undefined : JSON.stringify(context)
    return settled(await this.#native.complete(JSON.stringify(ref), argument, value, given))
  }
}

/**
 * Replays one golden wire vector case (tests/vectors: frames sent, frames expected) on a new
 * session of `server`, with core's replayer, the one every language uses. `testCase` is the
 * case, or its JSON text: as written, an integer beyond 2^53 (an id) reaches core exactly,
 * where a JavaScript number would round it. Resolves when the case holds; rejects with an
 * `AssertionError` naming the case and the step that failed.
 */
async function replayVector(server, testCase) {
  const text = typeof testCase === 'string'
  const given = text ? JSON.parse(testCase) : testCase
  if (given === null || typeof given !== 'object' || Array.isArray(given)) {
    throw new TypeError('toolwire testing: replayVector(server, testCase) needs a vector case (an object or its JSON text)')
  }
  const failure = await server[REPLAY_VECTOR](text ? testCase : JSON.stringify(testCase))
  if (failure !== null) throw new AssertionError({ message: `${given.name ?? 'vector'}: ${failure}` })
}

// `await using client = await connect(server)` closes it at the end of the block (where the
// runtime has explicit resource management).
if (typeof Symbol.asyncDispose === 'symbol') {
  TestClient.prototype[Symbol.asyncDispose] = function dispose() {
    return this.close()
  }
}

module.exports = { McpError, TestClient, connect, replayVector }
