'use strict'
// A client for tests: drives a Server in process through server.connect() (core's in-memory
// session), as a real client would, without JSON-RPC text in the test.
//
//   const client = await connect(server)
//   const result = await client.callTool('forecast', { city: 'Oslo' })
//   await client.close()
//
// Both protocol eras: `protocolVersion: '2025-11-25'` (the default) initializes a session;
// '2026-07-28' sends every request stand-alone with its `_meta` and answers the server's
// input-required rounds itself. Questions the server asks (elicitation, sampling, roots) go to
// the callbacks given to `connect`, in either era. The same client as Python's toolwire.testing.

const MODERN = '2026-07-28'
// More input-required rounds than any real tool needs: a loop, not a conversation.
const MAX_ROUNDS = 16

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
 * A connected `TestClient`. Options: `protocolVersion`, `elicitation(params)` and
 * `sampling(params)` (sync or async; each one given is declared in the capabilities), `roots`
 * (what `roots/list` returns), `capabilities`, `clientInfo`, `timeoutMs` (per request, 30 s).
 * The server's lifespan is started first; `server.close()` ends it.
 */
async function connect(server, options = {}) {
  // The server's lifespan first: a failure to start is connect's error. (`server.close()` ends it.)
  await server.start()
  const client = new TestClient(server, options)
  try {
    await client.start()
  } catch (err) {
    await client.close()
    throw err
  }
  return client
}

class TestClient {
  #connection
  #pending = new Map()
  #progress = new Map()
  #nextId = 1
  #closing = null
  #closed = false
  #elicitation
  #sampling
  #roots
  #timeoutMs

  constructor(server, options = {}) {
    const { protocolVersion = '2025-11-25', elicitation, sampling, roots, capabilities, clientInfo, timeoutMs = 30_000 } = options
    this.protocolVersion = protocolVersion
    this.#elicitation = elicitation
    this.#sampling = sampling
    this.#roots = roots
    this.#timeoutMs = timeoutMs
    const declared = { ...(capabilities ?? {}) }
    if (elicitation !== undefined) declared.elicitation ??= { form: {} }
    if (sampling !== undefined) declared.sampling ??= {}
    if (roots !== undefined) declared.roots ??= { listChanged: false }
    this.capabilities = declared
    this.clientInfo = clientInfo ?? { name: 'toolwire-test-client', version: '1.0' }
    /** Notifications received so far (progress ones included), in order. */
    this.notifications = []
    /** The `initialize` (or, in 2026-07-28, `server/discover`) result. */
    this.serverInfo = {}
    this.#connection = server.connect((text) => this.#dispatch(JSON.parse(text)))
  }

  get modern() {
    return this.protocolVersion === MODERN
  }

  /** The server's `{ name, version, ... }`, from either era's answer. */
  get server() {
    const meta = this.serverInfo._meta ?? {}
    return this.serverInfo.serverInfo ?? meta['io.modelcontextprotocol/serverInfo'] ?? {}
  }

  /** Opens the session (`connect` calls it). */
  async start() {
    if (this.modern) {
      this.serverInfo = await this.request('server/discover')
      return
    }
    this.serverInfo = await this.request('initialize', {
      protocolVersion: this.protocolVersion,
      capabilities: this.capabilities,
      clientInfo: this.clientInfo,
    })
    this.#send({ jsonrpc: '2.0', method: 'notifications/initialized' })
  }

  /**
   * Ends the session: calls in flight finish first (the server's questions are still answered
   * meanwhile); then requests still pending fail with `McpError`.
   */
  close() {
    this.#closing ??= (async () => {
      await this.#connection.shutdown()
      this.#closed = true
      const closed = new McpError({ code: -32000, message: 'the session closed before the answer' })
      for (const pending of this.#pending.values()) pending.reject(closed)
      this.#pending.clear()
    })()
    return this.#closing
  }

  // --- the wire

  #send(message) {
    this.#connection.handleFrame(JSON.stringify(message))
  }

  #dispatch(message) {
    if (!('method' in message)) {
      const pending = this.#pending.get(message.id)
      if (pending !== undefined) {
        this.#pending.delete(message.id)
        pending.resolve(message)
      }
      return
    }
    if ('id' in message) {
      this.#answerRequest(message)
      return
    }
    this.notifications.push(message)
    if (message.method === 'notifications/progress') {
      const params = message.params ?? {}
      const onprogress = this.#progress.get(params.progressToken)
      if (onprogress !== undefined) {
        const { progressToken: _token, ...progress } = params
        onprogress(progress)
      }
    }
  }

  async #answerRequest(message) {
    let reply
    try {
      reply = { jsonrpc: '2.0', id: message.id, result: await this.#answer(message.method, message.params ?? {}) }
    } catch (err) {
      // A failing callback is told to the server: no call waits for an answer that never comes.
      const error =
        err instanceof McpError
          ? { code: err.code, message: err.error?.message ?? err.message }
          : { code: -32603, message: `the test client's callback failed: ${err instanceof Error ? err.message : String(err)}` }
      reply = { jsonrpc: '2.0', id: message.id, error }
    }
    if (!this.#closed) this.#send(reply)
  }

  /** What this client answers to a question of the server's. */
  async #answer(method, params) {
    let handler
    if (method === 'elicitation/create') handler = this.#elicitation
    else if (method === 'sampling/createMessage') handler = this.#sampling
    else if (method === 'roots/list' && this.#roots !== undefined) return { roots: this.#roots }
    else if (method === 'ping') return {}
    if (handler === undefined) throw new McpError({ code: -32601, message: `Method not found: ${method}` })
    return await handler(params)
  }

  // --- requests

  /**
   * Sends `method` and resolves to its result; a JSON-RPC error rejects with `McpError`. In the
   * 2026-07-28 era the request carries the version, capabilities and client info in `_meta`.
   */
  request(method, params = {}, { timeoutMs = this.#timeoutMs } = {}) {
    if (this.#closing !== null) return Promise.reject(new McpError({ code: -32000, message: 'the test client is closed' }))
    params = { ...params }
    if (this.modern) {
      params._meta = {
        'io.modelcontextprotocol/protocolVersion': MODERN,
        'io.modelcontextprotocol/clientCapabilities': this.capabilities,
        'io.modelcontextprotocol/clientInfo': this.clientInfo,
        ...(params._meta ?? {}),
      }
    }
    const id = this.#nextId++
    const message = { jsonrpc: '2.0', id, method }
    if (Object.keys(params).length > 0 || method !== 'ping') message.params = params
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id)
        reject(new Error(`toolwire testing: ${method} got no answer within ${timeoutMs} ms`))
      }, timeoutMs)
      const settle = (answer) => (answer.error !== undefined ? reject(new McpError(answer.error)) : resolve(answer.result))
      this.#pending.set(id, {
        resolve: (answer) => {
          clearTimeout(timer)
          settle(answer)
        },
        reject: (err) => {
          clearTimeout(timer)
          reject(err)
        },
      })
      this.#send(message)
    })
  }

  /**
   * A request that may answer input-required (2026-07-28): the questions are answered by the
   * callbacks and the request sent again with the answers, until it completes.
   */
  async #rounds(method, params) {
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const result = await this.request(method, params)
      if (result.resultType !== 'input_required') return result
      const answers = {}
      for (const [key, question] of Object.entries(result.inputRequests ?? {})) {
        answers[key] = await this.#answer(question.method, question.params ?? {})
      }
      params = { ...params, inputResponses: answers }
      if ('requestState' in result) params.requestState = result.requestState
      else delete params.requestState
    }
    throw new McpError({ code: -32603, message: `${method} still asked for input after ${MAX_ROUNDS} rounds` })
  }

  async #list(method, key) {
    const items = []
    let params = {}
    for (;;) {
      const page = await this.request(method, params)
      items.push(...(page[key] ?? []))
      if (!page.nextCursor) return items
      params = { cursor: page.nextCursor }
    }
  }

  /** Every tool, all pages. */
  listTools() {
    return this.#list('tools/list', 'tools')
  }

  /**
   * The tool's `CallToolResult` (an `isError` one too). `callTool(name, args, { onprogress })`,
   * or the TypeScript SDK's `callTool({ name, arguments }, undefined, { onprogress })`;
   * `onprogress({ progress, total, message })` receives the call's progress notifications.
   */
  async callTool(name, args, options) {
    // The SDK's second argument is a result schema: toolwire's results need none.
    if (typeof name === 'object' && name !== null) ({ name, arguments: args } = name)
    const params = { name, arguments: args ?? {} }
    const onprogress = options?.onprogress
    const token = onprogress === undefined ? undefined : `progress-${this.#nextId++}`
    if (token !== undefined) {
      this.#progress.set(token, onprogress)
      params._meta = { progressToken: token }
    }
    try {
      return await this.#rounds('tools/call', params)
    } finally {
      this.#progress.delete(token)
    }
  }

  listResources() {
    return this.#list('resources/list', 'resources')
  }

  listResourceTemplates() {
    return this.#list('resources/templates/list', 'resourceTemplates')
  }

  /** The `ReadResourceResult` (`contents`); `readResource(uri)` or `readResource({ uri })`. */
  readResource(uri) {
    return this.#rounds('resources/read', { uri: typeof uri === 'object' && uri !== null ? uri.uri : uri })
  }

  listPrompts() {
    return this.#list('prompts/list', 'prompts')
  }

  /** The `GetPromptResult` (`messages`); `getPrompt(name, args)` or `getPrompt({ name, arguments })`. */
  getPrompt(name, args) {
    if (typeof name === 'object' && name !== null) ({ name, arguments: args } = name)
    return this.#rounds('prompts/get', { name, arguments: args ?? {} })
  }

  /**
   * The `completion` of `completion/complete` (`values`, `hasMore`, `total`):
   * `complete(ref, argument, value, context?)` with `ref` `{ type: 'ref/prompt', name }` or
   * `{ type: 'ref/resource', uri }` and `context` the other arguments given so far.
   */
  async complete(ref, argument, value, context) {
    const params = { ref, argument: { name: argument, value } }
    if (context !== undefined) params.context = { arguments: context }
    return (await this.request('completion/complete', params)).completion
  }
}

// `await using client = await connect(server)` closes it at the end of the block (where the
// runtime has explicit resource management).
if (typeof Symbol.asyncDispose === 'symbol') {
  TestClient.prototype[Symbol.asyncDispose] = function dispose() {
    return this.close()
  }
}

module.exports = { McpError, TestClient, connect }
