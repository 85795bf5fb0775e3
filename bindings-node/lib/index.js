'use strict'
// The JavaScript API of toolwire: Server, Context, content helpers, ToolwireError.
// Protocol work happens in the engine (src/, core/); this layer converts values.

const native = require('./native')
const { ToolwireError, checkCounts, created, fromNative, unwrap } = require('./errors')
const { compileSchema, compilePromptArguments, completable, pointer } = require('./schema')

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

/** Whether `err` is the engine's "ask the client first" signal (not a failure). */
const isInputRequired = (err) => err instanceof ToolwireError && err.code === 'TOOLWIRE_INPUT_REQUIRED'

const hasThen = (value) => value !== null && typeof value === 'object' && typeof value.then === 'function'

const TOOL_CONFIG_KEYS = new Set([
  'title', 'description', 'inputSchema', 'outputSchema', 'annotations', 'icons', '_meta', 'timeoutMs', 'maxConcurrency',
  'taskSupport',
])
const PROMPT_CONFIG_KEYS = new Set(['title', 'description', 'arguments', 'argsSchema', '_meta'])

/**
 * A server's `lifespan`: started once before its first serve (handlers wait for it), ended by
 * `close()`. `value` is what handlers see; `pending` the start while it runs.
 */
class Lifespan {
  constructor(factory) {
    this.factory = factory
    this.value = undefined
    this.started = null // the start's Promise, once begun
    this.pending = null // the same while it has not settled: calls wait for it
    this.end = null // ends an async generator lifespan (its `finally` runs)
  }

  start(server) {
    if (this.factory === undefined) return Promise.resolve()
    if (this.started !== null) return this.started
    this.started = (async () => {
      const made = this.factory(server)
      if (made !== null && typeof made === 'object' && typeof made.next === 'function' && typeof made.return === 'function') {
        // `async function* lifespan(server) { …set up…; try { yield value } finally { …clean up… } }`
        const step = await made.next()
        if (step.done) throw new TypeError('toolwire: a lifespan generator must yield its value once')
        this.value = step.value
        this.end = () => made.return(undefined)
      } else {
        this.value = await made
      }
    })()
    this.pending = this.started
    this.started.then(
      () => {
        this.pending = null
      },
      () => {},
    )
    return this.started
  }

  /** Ends a started lifespan (its cleanup runs); a later serve starts it again. */
  async stop() {
    const started = this.started
    if (started === null) return
    const end = this.end
    this.started = this.pending = this.end = null
    this.value = undefined
    try {
      await started
    } catch {
      return // it never started: nothing to clean up
    }
    if (end !== null) await end()
  }
}

/** The error a call gets while the server's lifespan failed to start. */
function lifespanFailure(err) {
  const message = err instanceof Error ? err.message : String(err)
  return new Error(`the server's lifespan failed to start: ${message}`)
}

/**
 * Sends `process.stdout`'s writes to stderr until `restore()`; `protocolWrite(bytes)` writes to
 * the real stdout. Unless `eager`, a stream not made yet is patched when first read, not now:
 * Node makes `process.stdout` on first use, and making it loads its stream modules (about 5 ms
 * of a start), which the engine's own stdio path never needs.
 */
function redirectStdout(eager) {
  const redirected = function redirected(...args) {
    return process.stderr.write(...args)
  }
  let stream = null
  let original = null
  const patch = (s) => {
    if (stream === null) {
      stream = s
      original = s.write
      s.write = redirected
    }
    return s
  }
  const descriptor = Object.getOwnPropertyDescriptor(process, 'stdout')
  // Only while Node's stream modules are not loaded can no one hold the stream yet (console
  // keeps the one it first wrote to, code may keep a reference): making it loads them. Node's
  // own property is a configurable getter that makes the stream once; anything else (a test's
  // replacement, an older Node) is patched now, as before.
  const streamsLoaded = !Array.isArray(process.moduleLoadList) || process.moduleLoadList.includes('NativeModule stream')
  const lazy = !eager && !streamsLoaded && typeof descriptor?.get === 'function' && descriptor.configurable === true
  let ours = null
  if (lazy) {
    ours = {
      ...descriptor,
      get() {
        Object.defineProperty(process, 'stdout', descriptor)
        return patch(descriptor.get.call(process))
      },
    }
    Object.defineProperty(process, 'stdout', ours)
  } else {
    patch(process.stdout)
  }
  return {
    protocolWrite(bytes) {
      if (stream === null) patch(process.stdout)
      original.call(stream, bytes)
    },
    restore() {
      if (stream !== null) {
        stream.write = original
      } else if (ours !== null && Object.getOwnPropertyDescriptor(process, 'stdout')?.get === ours.get) {
        // Still our getter (not replaced by the application meanwhile): Node's own again.
        Object.defineProperty(process, 'stdout', descriptor)
      }
    },
  }
}

class Server {
  #native
  #onToolError
  #lifespan
  /** The running `serveStdio()`s: `{ stop() }` each, whose Promise resolves once it has ended. */
  #stdio = new Set()
  /** The running HTTP servers this server started. */
  #http = new Set()
  /** The sessions `connect()` opened and nobody ended yet: `{ shutdown() }` each. */
  #connections = new Set()
  /** The `httpHandler()`s that served a request and were not closed since: `{ shutdown() }` each. */
  #mounts = new Set()

  /**
   * @param {object} options `name`, `version`, and optionally `title`, `instructions`, `pageSize`,
   *   `defaultToolTimeoutMs`, `maxConcurrentCalls`, `maxConcurrentCallsPerSession`,
   *   `maxConcurrentCallsPerPrincipal`, `maxFrameBytes`, `maxDepth`, `onToolError(error, toolName)`,
   *   `metrics` (default true), and for 2026-07-28 `cacheTtlMs`, `cacheScope`, `requestStateKeys`, `modernOnly`;
   *   `redis` (a URL) shares tasks and changes with the other replicas through that Redis.
   */
  constructor(options) {
    if (options === null || typeof options !== 'object') throw new TypeError('toolwire: new Server({ name, version, ... })')
    const { onToolError, lifespan, ...init } = options
    if (typeof init.name !== 'string' || typeof init.version !== 'string') {
      throw new TypeError('toolwire: a Server needs a string name and version')
    }
    if (lifespan !== undefined && typeof lifespan !== 'function') {
      throw new TypeError('toolwire: lifespan must be a function (async, or an async generator that yields once)')
    }
    checkCounts(init)
    this.#native = created(native.createServer(init), native.NativeServer)
    this.#onToolError = onToolError ?? defaultToolErrorLog
    this.#lifespan = new Lifespan(lifespan)
  }

  /**
   * Runs the `lifespan` (once; `serveStdio()`, `serveHttp()` and `connect()` start it too) and
   * resolves when it has, or rejects with its error. `close()` ends it.
   */
  start() {
    return this.#lifespan.start(this)
  }

  /**
   * Registers a tool. `handler(args, ctx)` may return a value or a Promise: a string (text),
   * nothing (no content), a whole CallToolResult (`content` an array of blocks, and no keys
   * besides `content`, `structuredContent`, `isError`, `_meta`), another object (structured
   * content plus its JSON as text), or anything else (one text block of its JSON). A throw
   * becomes an `isError` result with the error's message.
   */
  tool(name, config, handler) {
    if (typeof config === 'function' && handler === undefined) {
      handler = config
      config = {}
    }
    if (typeof name !== 'string') throw new TypeError('toolwire: a tool needs a string name')
    if (typeof handler !== 'function') throw new TypeError(`toolwire: tool ${JSON.stringify(name)} needs a handler function`)
    config = config ?? {}
    for (const key of Object.keys(config)) {
      if (!TOOL_CONFIG_KEYS.has(key)) throw new TypeError(`toolwire: unknown tool option ${JSON.stringify(key)} for tool ${JSON.stringify(name)}`)
    }
    const input = compileSchema(config.inputSchema, 'input', 'inputSchema')
    const output = compileSchema(config.outputSchema, 'output', 'outputSchema')
    const definition = { name, inputSchema: input.json ?? { type: 'object' } }
    for (const key of ['title', 'description', 'annotations', 'icons', '_meta']) {
      if (config[key] !== undefined) definition[key] = config[key]
    }
    if (output.json !== undefined) definition.outputSchema = output.json
    if (config.taskSupport !== undefined) definition.taskSupport = config.taskSupport
    const failed = this.#native.addTool(
      JSON.stringify(definition),
      this.#wrap(name, handler, input.parse),
      config.timeoutMs ?? undefined,
      config.maxConcurrency ?? undefined,
    )
    if (failed) throw fromNative(failed)
    return this
  }

  /**
   * Puts `fn(request, next)` in front of every request but `initialize` (and 2026-07-28's
   * `server/discover`), after the middlewares added before it, as in Koa or Hono:
   *
   *   server.middleware(async (request, next) => {
   *     if (!staff.has(request.principal)) throw new ProtocolError(-32001, 'Forbidden')
   *     const outcome = await next() // the request is handled here
   *     audit.info(`${request.method} ${request.name}: ${outcome.kind} in ${outcome.elapsedMs} ms`)
   *   })
   *
   * The code before `next()` decides: throw `ProtocolError` for that JSON-RPC error, `ToolError`
   * for an `isError` result of a `tools/call` (another method gets -32603). `next()` resolves
   * with how the request ended (`{ kind, code?, elapsedMs }`) once the answer is sent: what runs
   * after it observes. A middleware that throws anything else, or settles without calling
   * `next()`, refuses the request with -32603 (a throw is written to stderr).
   */
  middleware(fn) {
    if (typeof fn !== 'function') throw new TypeError('toolwire: server.middleware(async (request, next) => { ... }) needs a function')
    this.#native.addMiddleware(aroundWrapper(fn))
    return this
  }

  /** Unregisters a tool; returns whether it existed. Clients are told (list_changed). */
  removeTool(name) {
    return this.#native.removeTool(name)
  }

  /** The registered tools' names, sorted. */
  get toolNames() {
    return this.#native.toolNames()
  }

  /**
   * What the server has done and is doing: by method (`methods`) and by tool (`tools`) the
   * `calls`, `inFlight`, how they ended (`outcomes`: `result`, `tool_error`, `invalid_params`,
   * `cancelled`, `refused`, …) and a latency histogram (`latency`: `count`, `sumSeconds`,
   * cumulative `buckets` of `le` seconds); then `callsInFlight`, `callsQueued`, `refused` by
   * limit, live `sessions`, open SSE `streams`, `listenStreams` and `tasks` running.
   */
  metrics() {
    return JSON.parse(this.#native.metricsJson())
  }

  /**
   * The metrics in the Prometheus text format (0.0.4), for a route of your own
   * (`res.type('text/plain; version=0.0.4').send(server.metricsText())`); `serveHttp`'s
   * `metricsPath` serves it itself.
   */
  metricsText() {
    return this.#native.metricsText()
  }

  #wrap(name, handler, parse) {
    const onError = this.#onToolError
    const fail = (err, ctx) => {
      if (err instanceof ProtocolError) return protocolErrorJson(err)
      // After a cancel or a deadline the answer is discarded; the abort is no failure. Nor is
      // the engine's "ask the client first" (2026-07-28): it answers input_required itself.
      if (!ctx.isCancelled && !isInputRequired(err)) {
        try {
          onError(err, name)
        } catch {
          // A failing log hook must not turn a tool error into a lost answer.
        }
      }
      const message = err instanceof Error ? err.message : String(err)
      return errorResult(message || (err instanceof Error ? err.name : 'Error'))
    }
    const run = (args, ctx) => {
      // A result that cannot be serialised (a cycle, a BigInt) fails like a throw.
      const settle = (value) => {
        try {
          return returnedJson(value)
        } catch (err) {
          return fail(err, ctx)
        }
      }
      let value
      try {
        value = handler(args, ctx)
      } catch (err) {
        return fail(err, ctx)
      }
      if (!hasThen(value)) return settle(value)
      // The engine gets nothing now and the result when the Promise settles.
      Promise.resolve(value).then(settle, (err) => fail(err, ctx)).then((json) => native.settleCall(ctx[CALL], json))
      return undefined
    }
    const lifespan = this.#lifespan
    // Until the lifespan has started, a call waits for it (and fails if it cannot start).
    const later = (call, start) => {
      lifespan.pending.then(start, (err) => fail(lifespanFailure(err), new Context(call, lifespan))).then((json) => {
        if (json !== undefined) native.settleCall(call, json)
      })
      return undefined
    }
    if (parse === null) {
      return (call, args) => {
        if (lifespan.pending !== null) return later(call, () => run(JSON.parse(args), new Context(call, lifespan)))
        return run(JSON.parse(args), new Context(call, lifespan))
      }
    }
    const invalid = (issues) =>
      errorResult(native.invalidArgumentsText(name, issues.map((issue) => ({ path: pointer(issue.path), message: issue.message }))))
    const parsing = (call, args) => {
      const parsed = parse(JSON.parse(args))
      const ctx = new Context(call, lifespan)
      if (!hasThen(parsed)) return parsed.issues ? invalid(parsed.issues) : run(parsed.data, ctx)
      // An async refinement: the arguments are known later, and so is the result.
      parsed.then(
        (p) => {
          if (p.issues) return native.settleCall(call, invalid(p.issues))
          const json = run(p.data, ctx)
          if (json !== undefined) native.settleCall(call, json)
        },
        (err) => native.settleCall(call, fail(err, ctx)),
      )
      return undefined
    }
    return (call, args) => (lifespan.pending !== null ? later(call, () => parsing(call, args)) : parsing(call, args))
  }

  /**
   * Registers a resource. A `uri` with `{variables}` is a resource template (RFC 6570: `{id}` is
   * one path segment, `{+path}` anything). `handler(uri, variables)` may return (or resolve to)
   * a string (text), a Buffer/Uint8Array (a blob), `{ text | blob, mimeType }`, or an array of
   * those; throw `new ResourceNotFound()` for a URI that does not exist.
   */
  resource(uri, config, handler) {
    if (typeof config === 'function' && handler === undefined) {
      handler = config
      config = {}
    }
    if (typeof uri !== 'string') throw new TypeError('toolwire: a resource needs a string uri')
    if (typeof handler !== 'function') throw new TypeError(`toolwire: resource ${JSON.stringify(uri)} needs a handler function`)
    config = config ?? {}
    const template = uri.includes('{')
    const definition = { [template ? 'uriTemplate' : 'uri']: uri, name: config.name ?? uri }
    for (const key of ['title', 'description', 'mimeType', 'annotations', '_meta']) {
      if (config[key] !== undefined) definition[key] = config[key]
    }
    const wrapper = jsonWrapper(this.#afterLifespan((request, call) => handler(request.uri, request.variables, this.#requestContext(request, call))), (value) =>
      value instanceof InputRequired
        ? { inputRequired: value.toJSON() }
        : { returned: returned(value) },
    )
    const failed = this.#native.addResource(JSON.stringify(definition), template, wrapper)
    if (failed) throw fromNative(failed)
    return this
  }

  /**
   * Registers a prompt. Its arguments come from `config.argsSchema` (a zod raw shape such as
   * `{ language: z.string().describe('…') }`, a zod object, or a JSON Schema object of string
   * properties), which also checks and parses them (refused ones answer -32602), or are listed
   * in `config.arguments` as `{ name, title?, description?, required? }`. `handler(args, round)`
   * may return (or resolve to) a string (one user message), an array of messages (strings,
   * content blocks, or `{ role, content }`), or `{ messages, description? }`. Arguments made
   * with `completable()` or with an enum are completed without a `completion()` of your own.
   */
  prompt(name, config, handler) {
    if (typeof config === 'function' && handler === undefined) {
      handler = config
      config = {}
    }
    if (typeof name !== 'string') throw new TypeError('toolwire: a prompt needs a string name')
    if (typeof handler !== 'function') throw new TypeError(`toolwire: prompt ${JSON.stringify(name)} needs a handler function`)
    config = config ?? {}
    for (const key of Object.keys(config)) {
      if (!PROMPT_CONFIG_KEYS.has(key)) throw new TypeError(`toolwire: unknown prompt option ${JSON.stringify(key)} for prompt ${JSON.stringify(name)}`)
    }
    if (config.argsSchema !== undefined && config.arguments !== undefined) {
      throw new TypeError(`toolwire: prompt ${JSON.stringify(name)}: give argsSchema or arguments, not both`)
    }
    const args =
      config.argsSchema === undefined
        ? { list: (config.arguments ?? []).map((a) => ({ required: false, ...a })), parse: null, completers: {} }
        : compilePromptArguments(name, config.argsSchema)
    const definition = { name, arguments: args.list }
    if (args.argumentsSchema !== undefined) definition.argumentsSchema = args.argumentsSchema
    for (const key of ['title', 'description', '_meta']) {
      if (config[key] !== undefined) definition[key] = config[key]
    }
    const render = (request, call) => handler(request.arguments, this.#requestContext(request, call))
    const parsing = (request, call) => {
      const refused = (issues) =>
        new ProtocolError(-32602, native.invalidPromptArgumentsText(name, issues.map((issue) => ({ path: pointer(issue.path), message: issue.message }))))
      const take = (parsed) => {
        if (parsed.issues) throw refused(parsed.issues)
        return handler(parsed.data, this.#requestContext(request, call))
      }
      const parsed = args.parse(request.arguments)
      return hasThen(parsed) ? parsed.then(take) : take(parsed)
    }
    const failed = this.#native.addPrompt(
      JSON.stringify(definition),
      jsonWrapper(this.#afterLifespan(args.parse === null ? render : parsing), (value) =>
        value instanceof InputRequired ? { inputRequired: value.toJSON() } : { returned: returned(value) },
      ),
    )
    if (failed) throw fromNative(failed)
    const completers = Object.entries(args.completers).filter(([, complete]) => complete !== null)
    if (completers.length > 0) {
      const byArgument = new Map(completers)
      this.completion({ prompt: name }, (argument, value, context) => {
        const complete = byArgument.get(argument)
        return complete ? complete(value, { arguments: context }) : []
      })
    }
    return this
  }

  /**
   * Completes the arguments of a prompt (`{ prompt: name }`) or the variables of a resource
   * template (`{ template: uriTemplate }`): `complete(argument, value, context)` returns (or
   * resolves to) suggested values, best first.
   */
  completion(target, complete) {
    const kind = target?.prompt !== undefined ? 'prompt' : target?.template !== undefined ? 'template' : null
    if (kind === null) throw new TypeError('toolwire: completion({ prompt } or { template }, complete)')
    if (typeof complete !== 'function') throw new TypeError('toolwire: completion needs a function')
    const wrapper = jsonWrapper(
      this.#afterLifespan((request, call) => complete(request.argument, request.value, request.context, this.#requestContext(request, call))),
      (values) => ({ values: Array.from(values ?? [], String) }),
    )
    const failed = this.#native.setCompleter(kind, kind === 'prompt' ? target.prompt : target.template, wrapper)
    if (failed) throw fromNative(failed)
    return this
  }

  /** `handle(request, call)`, once the lifespan has started (a Promise until then). */
  #afterLifespan(handle) {
    const lifespan = this.#lifespan
    return (request, call) =>
      lifespan.pending === null
        ? handle(request, call)
        : lifespan.pending.then(() => handle(request, call), (err) => Promise.reject(lifespanFailure(err)))
  }

  /**
   * A resource read's, prompt's or completion's context: a tool's (progress, log, signal,
   * client info, the lifespan's value), whose 2026-07-28 round is the request's.
   */
  #requestContext(request, call) {
    return new RequestContext(call, this.#lifespan, request)
  }

  /** Unregisters a resource or template; returns whether it existed. */
  removeResource(uri) {
    return this.#native.removeResource(uri)
  }

  /** Unregisters a prompt; returns whether it existed. */
  removePrompt(name) {
    return this.#native.removePrompt(name)
  }

  /** Tells the clients subscribed to `uri` that it changed. */
  notifyResourceUpdated(uri) {
    this.#native.notifyResourceUpdated(uri)
  }

  /**
   * Serves Streamable HTTP at `http://host:port/mcp` (port 0 picks one). Resolves once
   * listening, to an `HttpServer` (`url`, `close()`, `closed`). Options: `path`, `stateless`,
   * `responseMode` (`'auto'` | `'json'` | `'sse'`), `jsonResponse`, `allowedHosts`, `allowedOrigins`, `maxSessions`, `maxSessionsPerClient`, `sessionIdleTimeoutMs`, `headerReadTimeoutMs`, `bodyReadTimeoutMs`, `maxConnections`, `maxSseBufferedBytes`,
   * `tokenValidator(token) -> { subject?, scopes? } | { insufficientScope } | null` (sync or async) with
   * `authorizationServers` and `resourceUrl`, `metricsPath` (serves `metricsText()` to GET there).
   * Host and Origin are checked by default.
   */
  async serveHttp(host = '127.0.0.1', port = 8000, options = {}) {
    const { tokenValidator, ...init } = options ?? {}
    checkCounts(init)
    await this.start()
    let resolveClosed
    const closed = new Promise((resolve) => {
      resolveClosed = resolve
    })
    const validator =
      typeof tokenValidator === 'function'
        ? jsonWrapper(
            (request) => tokenValidator(request.token),
            (verdict) => verdict ?? null,
          )
        : undefined
    const nativeHttp = created(this.#native.startHttp({ host, port, ...init }, validator, () => resolveClosed()), native.NativeHttpServer)
    const http = new HttpServer(nativeHttp, closed)
    this.#http.add(http)
    closed.then(() => this.#http.delete(http))
    return http
  }

  /**
   * Streamable HTTP inside a web server of your own: a request handler `(req, res, next?)` for
   * node:http or Express (`app.all('/mcp', handler)`), and `handler.fetch(request)` for Web
   * `Request` → `Response` frameworks. The app routes requests to it (the path is not matched
   * again). Options: `serveHttp`'s less the listener's (`headerReadTimeoutMs`, `maxConnections`
   * belong to the app's server). The Host guard lets only loopback names through unless
   * `allowedHosts` names the app's host names. The first request starts the server's
   * `lifespan`; `await handler.close()` ends the handler's sessions (calls in flight finish
   * first) and its hold on the lifespan, which ends unless something else is served; a request
   * after it starts again. `server.close()` closes it too.
   */
  httpHandler(options = {}) {
    const { tokenValidator, ...init } = options ?? {}
    for (const key of ['host', 'port', 'headerReadTimeoutMs', 'maxConnections']) {
      if (init[key] !== undefined) {
        throw new TypeError(`toolwire: httpHandler has no ${key} option: the app's own HTTP server listens`)
      }
    }
    checkCounts(init)
    const validator =
      typeof tokenValidator === 'function'
        ? jsonWrapper(
            (request) => tokenValidator(request.token),
            (verdict) => verdict ?? null,
          )
        : undefined
    const create = () => created(this.#native.httpEndpoint(init, validator), native.NativeHttpEndpoint)
    // Options are checked now; the endpoint is made again after close().
    let endpoint = create()
    const mounts = this.#mounts
    const mount = {
      /** Ends the endpoint's sessions; the next request gets a new endpoint. */
      async shutdown() {
        mounts.delete(mount)
        const ending = endpoint
        endpoint = null
        if (ending !== null) await ending.shutdown()
      },
    }
    // A close() under way: requests wait for it, then start afresh.
    let closing = null
    const ready = async () => {
      while (closing !== null) await closing
      endpoint ??= create()
      const serving = endpoint
      mounts.add(mount)
      await this.start()
      return serving
    }
    const handler = (req, res, next) => serveNode(ready, req, res, next)
    handler.fetch = (request) => serveFetch(ready, request)
    handler.close = async () => {
      while (closing !== null) await closing
      const held = mounts.has(mount)
      const ending = (async () => {
        await mount.shutdown()
        if (held) await this.#releaseLifespan()
      })()
      closing = ending.then(
        () => {},
        () => {},
      )
      try {
        await ending
      } finally {
        closing = null
      }
    }
    return handler
  }

  /** Ends the lifespan when nothing is served any more (a transport of the server's ended). */
  async #releaseLifespan() {
    if (this.#stdio.size === 0 && this.#http.size === 0 && this.#mounts.size === 0 && this.#connections.size === 0) {
      await this.#lifespan.stop()
    }
  }

  /**
   * Serves one client over stdin/stdout until stdin ends (then calls in flight finish), or
   * `close()`, SIGINT or SIGTERM (when the application has no listener of its own). While
   * serving, anything else written to stdout goes to stderr. A process has one stdin: while it
   * is served (by this server or another), this rejects with `TOOLWIRE_BUSY`.
   */
  serveStdio() {
    let stdio
    try {
      // Core's claim on stdin comes first, on every path.
      stdio = created(this.#native.serveStdio(), native.NativeStdio)
    } catch (err) {
      return Promise.reject(err)
    }
    // Tools that console.log must not corrupt the protocol stream: stdout's writes go to
    // stderr while serving.
    const redirect = redirectStdout(stdio.streams)
    let ended = false
    const write = (bytes) => {
      if (bytes && !ended) redirect.protocolWrite(bytes)
    }
    // Ctrl-C or a polite kill ends serving the way end of input does (calls in flight finish),
    // unless the application listens for those signals itself.
    const onSignal = () => this.close()
    const signals = ['SIGINT', 'SIGTERM'].filter((signal) => process.listenerCount(signal) === 0)
    for (const signal of signals) process.once(signal, onSignal)
    const serving = {}
    this.#stdio.add(serving)
    // Calls read before the lifespan has started wait for it; if it cannot start, serving ends
    // and the returned Promise rejects with its error.
    let lifespanError = null
    this.start().catch((err) => {
      lifespanError = err
      serving.stop?.()
    })
    const restore = () => {
      ended = true
      redirect.restore()
      for (const signal of signals) process.off(signal, onSignal)
      this.#stdio.delete(serving)
    }
    let done
    if (!stdio.streams) {
      // Pipes and sockets: the engine reads and writes them from this thread's event loop.
      done = stdio.served().then(restore)
      serving.stop = () => {
        stdio.stop()
        return done
      }
    } else {
      let connection
      try {
        // Frames queued outside a feed (Promise handlers, progress, timers) arrive here.
        connection = this.#native.connect(() => write(connection.take()))
      } catch (err) {
        stdio.release()
        restore()
        return Promise.reject(err)
      }
      done = this.#serveStdioStreams(stdio, connection, write, restore, serving)
    }
    return done.then(async () => {
      if (lifespanError !== null) throw lifespanError
      // End of input with nothing else served: the lifespan ends with it (as close() ends it).
      if (this.#stdio.size === 0 && this.#http.size === 0 && this.#mounts.size === 0) await this.#lifespan.stop()
    })
  }

  // A terminal or a file: Node's stream objects carry the bytes; `stdio` holds core's claim on
  // stdin until reading ends.
  #serveStdioStreams(stdio, connection, write, restore, serving) {
    const { stdin, stdout } = process
    let settled
    const over = new Promise((resolve) => {
      settled = resolve
    })
    return new Promise((resolve, reject) => {
      const onData = (chunk) => write(connection.feed(chunk))
      const onEnd = () => finish(null, false)
      const onError = (err) => finish(err, false)
      const onStdoutError = (err) => finish(err.code === 'EPIPE' ? null : err, true)
      let finished = false
      const finish = async (err, abrupt) => {
        if (finished) return
        finished = true
        stdin.off('data', onData).off('end', onEnd).off('error', onError)
        stdin.pause()
        try {
          if (abrupt) {
            connection.close()
          } else {
            write(connection.endInput())
          }
          await connection.shutdown()
          write(connection.take())
        } catch (failure) {
          err ??= failure
        } finally {
          stdout.off('error', onStdoutError)
          // Drained: as on the engine's own path, stdin may be served again, and stdout is
          // given back.
          stdio.release()
          restore()
          settled()
        }
        if (err) reject(err)
        else resolve()
      }
      serving.stop = () => {
        finish(null, false)
        return over
      }
      stdout.on('error', onStdoutError)
      stdin.on('data', onData).on('end', onEnd).on('error', onError)
    })
  }

  /**
   * Ends every transport this server serves: `serveStdio()` (reading stops, calls in flight
   * finish, then its Promise resolves), every HTTP server `serveHttp()` started (as their
   * `close()`) and every `connect()` session (as its `shutdown()`); then the `lifespan`.
   * Resolves once all of them have ended.
   */
  close() {
    const ends = []
    for (const serving of this.#stdio) ends.push(serving.stop())
    for (const http of this.#http) ends.push(http.close())
    for (const connection of this.#connections) ends.push(connection.shutdown())
    for (const mount of this.#mounts) ends.push(mount.shutdown())
    // The lifespan ends last: calls in flight may still use what it gave.
    return Promise.all(ends).then(() => this.#lifespan.stop())
  }

  /**
   * A session over a channel of your own: `send(message)` gets each outbound JSON text;
   * feed inbound ones to `handleFrame(message)`.
   */
  connect(send) {
    if (typeof send !== 'function') throw new TypeError('toolwire: connect(send) needs a function')
    // Calls wait for the lifespan; a failed start is each call's error (await start() to see it).
    this.start().catch(() => {})
    const connection = this.#native.connect(() => flush(connection.takeMessages()))
    const flush = (messages) => {
      for (const message of messages) send(message)
    }
    const open = this.#connections
    let ending = null
    const session = {
      /** Feeds one inbound JSON-RPC message (text or bytes). */
      handleFrame(message) {
        flush(connection.feedMessage(typeof message === 'string' ? Buffer.from(message) : message))
      },
      /** No more input: calls in flight finish (their answers are sent), then the session ends. */
      shutdown() {
        ending ??= (async () => {
          try {
            await connection.shutdown()
            flush(connection.takeMessages())
          } finally {
            open.delete(session)
          }
        })()
        return ending
      },
      /** Ends at once: calls in flight are cancelled and nothing more is sent. */
      close() {
        open.delete(session)
        connection.close()
      },
      get protocolVersion() {
        return connection.protocolVersion ?? null
      },
    }
    open.add(session)
    return session
  }
}

/** A running Streamable HTTP server (from `server.serveHttp`). */
class HttpServer {
  #native

  constructor(nativeHttp, closed) {
    this.#native = nativeHttp
    /** Resolves once the server has stopped and its sessions ended. */
    this.closed = closed
  }

  /** The endpoint, e.g. `http://127.0.0.1:8000/mcp`. */
  get url() {
    return this.#native.url
  }

  /** Stops accepting; sessions drain their calls; resolves when done. */
  close() {
    this.#native.close()
    return this.closed
  }
}

/**
 * One request of node:http or Express to a mounted endpoint (`server.httpHandler()`): its head
 * and body to the engine, the answer's head and body back; a client hanging up ends it.
 */
async function serveNode(ready, req, res, next) {
  let endpoint
  try {
    endpoint = await ready()
  } catch (err) {
    return failed(err, res, next)
  }
  const exchange = endpoint.exchange(req.method, req.originalUrl ?? req.url, req.rawHeaders, req.socket?.remoteAddress ?? undefined)
  if (!(exchange instanceof native.NativeExchange)) {
    // Not a request the engine can read (a bad header or target).
    res.writeHead(400, { 'content-type': 'text/plain; charset=utf-8' })
    res.end(exchange.message)
    return
  }
  let reading = true
  const endBody = () => {
    if (!reading) return
    reading = false
    exchange.endBody()
  }
  // The client went away before the answer was out: a 2026-07-28 request is cancelled.
  res.on('close', () => {
    if (res.writableFinished) return
    if (reading) {
      reading = false
      exchange.abortBody()
    }
    exchange.close()
  })
  if (req.readableEnded) {
    // A body parser read it already (`express.json()`): its result is the body.
    const body = parsedBody(req.body)
    if (body.length === 0) endBody()
    else exchange.sendBody(body).then(endBody, endBody)
  } else {
    req.on('data', (chunk) => {
      if (!reading) return // answered already (too large, refused): the rest is dropped
      req.pause()
      exchange.sendBody(chunk).then(
        (taken) => {
          if (!taken) reading = false
          req.resume()
        },
        () => req.resume(),
      )
    })
    req.on('end', endBody)
    req.on('error', () => {
      if (reading) {
        reading = false
        exchange.abortBody()
      }
    })
  }
  try {
    const head = await exchange.response()
    if (head === null || res.destroyed) return // the client hung up first
    res.writeHead(head.status, head.headers)
    // A streamed answer (SSE) starts now, not with its first event.
    if (!hasHeader(head.headers, 'content-length')) res.flushHeaders()
    for (;;) {
      const chunk = await exchange.nextChunk()
      if (chunk === null) break
      if (!res.write(chunk)) await drained(res)
    }
    if (!res.destroyed) res.end()
  } catch (err) {
    exchange.close()
    failed(err, res, next)
  }
}

/**
 * One Web `Request` to a mounted endpoint: the `Response`, its body a `ReadableStream` read as
 * the engine produces it. The request's `signal` aborting, or the body cancelled, is the
 * client hanging up.
 */
async function serveFetch(ready, request) {
  const endpoint = await ready()
  const url = new URL(request.url)
  const headers = []
  for (const [name, value] of request.headers) headers.push(name, value)
  // A Request made in code may have no Host field: the URL's authority is the request's.
  if (!request.headers.has('host')) headers.push('host', url.host)
  const exchange = endpoint.exchange(request.method, url.pathname + url.search, headers, undefined)
  if (!(exchange instanceof native.NativeExchange)) {
    // Not a request the engine can read (a bad header or target).
    return new Response(exchange.message, { status: 400, headers: { 'content-type': 'text/plain; charset=utf-8' } })
  }
  const signal = request.signal
  const hangUp = () => {
    exchange.abortBody()
    exchange.close()
  }
  signal?.addEventListener('abort', hangUp, { once: true })
  const done = () => signal?.removeEventListener('abort', hangUp)
  if (signal?.aborted) hangUp()
  if (request.body === null) {
    exchange.endBody()
  } else {
    const reader = request.body.getReader()
    ;(async () => {
      try {
        for (;;) {
          const { done: ended, value } = await reader.read()
          if (ended) return exchange.endBody()
          if (!(await exchange.sendBody(Buffer.from(value.buffer, value.byteOffset, value.byteLength)))) {
            // Answered already (too large, refused): the rest is not read.
            return reader.cancel().catch(() => {})
          }
        }
      } catch {
        exchange.abortBody()
      }
    })()
  }
  const head = await exchange.response()
  if (head === null) {
    done()
    throw signal?.reason ?? new DOMException('The client hung up', 'AbortError')
  }
  const responseHeaders = new Headers()
  for (let i = 0; i < head.headers.length; i += 2) responseHeaders.append(head.headers[i], head.headers[i + 1])
  if (NULL_BODY_STATUSES.has(head.status)) {
    done()
    exchange.close()
    return new Response(null, { status: head.status, headers: responseHeaders })
  }
  const body = new ReadableStream(
    {
      async pull(controller) {
        const chunk = await exchange.nextChunk()
        if (chunk === null) {
          done()
          controller.close()
        } else {
          controller.enqueue(chunk)
        }
      },
      cancel() {
        done()
        exchange.close()
      },
    },
    { highWaterMark: 0 },
  )
  return new Response(body, { status: head.status, headers: responseHeaders })
}

/** Statuses whose Web `Response` has no body. */
const NULL_BODY_STATUSES = new Set([101, 204, 205, 304])

/** A body a parser already read (`req.body`), as bytes: parsed JSON is serialised again. */
function parsedBody(body) {
  if (body === undefined || body === null) return Buffer.alloc(0)
  if (Buffer.isBuffer(body)) return body
  if (body instanceof Uint8Array) return Buffer.from(body.buffer, body.byteOffset, body.byteLength)
  if (typeof body === 'string') return Buffer.from(body)
  return Buffer.from(JSON.stringify(body))
}

function hasHeader(rawHeaders, name) {
  for (let i = 0; i < rawHeaders.length; i += 2) if (rawHeaders[i].toLowerCase() === name) return true
  return false
}

/** Resolves when `res` can take more, or has closed. */
function drained(res) {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done).off('close', done)
      resolve()
    }
    res.on('drain', done).on('close', done)
  })
}

/** A mounted endpoint that could not answer (its lifespan failed to start, say): Express's
 * error handling when there is a `next`, else a 500. */
function failed(err, res, next) {
  if (typeof next === 'function') return next(err)
  if (res.headersSent) {
    res.destroy()
    return
  }
  res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' })
  res.end(`toolwire: ${err instanceof Error ? err.message : String(err)}`)
}

/** Throw it in a resource handler: the client gets JSON-RPC -32002 (resource not found). */
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

class ResourceNotFound extends Error {
  constructor(message = 'Resource not found') {
    super(message)
    this.name = 'ResourceNotFound'
  }
}

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

/** The engine's own log levels (not the client-facing `ctx.log` ones), most severe first. */
const ENGINE_LOG_LEVELS = ['error', 'warn', 'info', 'debug', 'trace']

/**
 * Routes the engine's own logs (connections, sessions, limits, failures: not what tools send
 * the client with `ctx.log`) to `handler({ level, target, message })`, for `level` ('info' by
 * default) and more severe, on the JS thread, in order. `onEngineLog(null)` stops. They go
 * through a bounded queue: if the handler falls behind, records are dropped and the next one
 * says how many. `DEBUG=toolwire` (as the `debug` package reads it) writes them to stderr.
 */
function onEngineLog(handler, options = {}) {
  if (handler === null) {
    native.setEngineLogHandler(null)
    return
  }
  if (typeof handler !== 'function') throw new TypeError('toolwire: onEngineLog(handler, { level }) needs a function (or null)')
  const level = options?.level ?? 'info'
  if (!ENGINE_LOG_LEVELS.includes(level)) {
    throw new TypeError(`toolwire: unknown engine log level ${JSON.stringify(level)} (one of ${ENGINE_LOG_LEVELS.join(', ')})`)
  }
  let reported = false
  native.setEngineLogHandler((records) => {
    for (const record of records) {
      try {
        handler(record)
      } catch (err) {
        // A throw here would end the process from a log line: say it once, keep going.
        if (!reported) process.stderr.write(`toolwire: the engine log handler threw: ${err instanceof Error ? err.stack : String(err)}\n`)
        reported = true
      }
    }
  }, level)
}

/** Whether a `DEBUG` list (`debug`'s syntax: names, `*` wildcards, `-name` to exclude) names `name`. */
function debugNames(spec, name) {
  let on = false
  for (const item of (spec ?? '').split(/[\s,]+/).filter(Boolean)) {
    const negated = item.startsWith('-')
    const pattern = new RegExp(`^${(negated ? item.slice(1) : item).replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`)
    if (pattern.test(name)) {
      if (negated) return false
      on = true
    }
  }
  return on
}

if (debugNames(process.env.DEBUG, 'toolwire')) {
  onEngineLog((record) => process.stderr.write(`toolwire ${record.level.toUpperCase()} ${record.target}: ${record.message}\n`), { level: 'debug' })
}

function defaultToolErrorLog(err, toolName) {
  const detail = err instanceof Error ? err.stack || err.message : String(err)
  process.stderr.write(`toolwire: tool ${JSON.stringify(toolName)} failed: ${detail}\n`)
}

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

module.exports = {
  Server,
  Context,
  InputRequired,
  ProtocolError,
  ToolError,
  HttpServer,
  ResourceNotFound,
  ToolwireError,
  text,
  image,
  audio,
  resourceLink,
  embeddedResource,
  LOG_LEVELS,
  ENGINE_LOG_LEVELS,
  completable,
  onEngineLog,
}
