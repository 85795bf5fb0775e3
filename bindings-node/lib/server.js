'use strict'
// The Server: its options, tools, middleware, metrics, and the transports it serves (stdio,
// HTTP, mounted, `connect()`); the engine's serves hold its lifespan while they serve (core's
// lifespan gate starts and stops it). What it registers and serves with is made in the modules
// beside it.

const native = require('./native')
const { checkCounts, created, fromNative, isInputRequired, ProtocolError, unwrap } = require('./errors')
const { compileSchema, pointer } = require('./schema')
const { CALL, Context } = require('./context')
const { errorResult, protocolErrorJson, returnedJson } = require('./content')
const { Lifespan } = require('./lifespan')
const { hasThen } = require('./settle')
const { aroundStart } = require('./middleware')
const { resourceEntry, promptEntry, completionEntry, copyRequirements, visibilityWrapper } = require('./catalog')
const { HttpServer, validatorWrapper } = require('./http')
const { mountedHandler } = require('./mount')
const { redirectStdout, serveStdioStreams } = require('./stdio')

/** `server[OPEN_CLIENT](optionsJson, ask)`: core's client on a new session, for toolwire/testing. */
const OPEN_CLIENT = Symbol('toolwire.openClient')
/** `server[REPLAY_VECTOR](caseJson)`: core's vector replayer on a new session, for toolwire/testing. */
const REPLAY_VECTOR = Symbol('toolwire.replayVector')
/** `server[HOLD_LIFESPAN]()`: a hold on the lifespan (`{ release() }`), for toolwire/testing. */
const HOLD_LIFESPAN = Symbol('toolwire.holdLifespan')

const TOOL_CONFIG_KEYS = new Set([
  'title', 'description', 'inputSchema', 'outputSchema', 'annotations', 'icons', '_meta', 'timeoutMs', 'maxConcurrency',
  'taskSupport', 'uiResource', 'visibility', 'requiredScopes', 'requiredTags',
])

const UI_RESOURCE_KEYS = new Set([
  'html', 'name', 'title', 'description', 'csp', 'permissions', 'domain', 'prefersBorder', 'listed',
  'requiredScopes', 'requiredTags',
])

class Server {
  #native
  #onToolError
  #lifespan
  /** `start()`'s hold on the lifespan (a Promise of it), until `close()`. */
  #started = null
  /** Releases of holds under way, which `close()` waits for. */
  #releasing = new Set()
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
   *   for the tasks extension `taskAfterMs`, `taskTtlMs`, `taskPollIntervalMs`, `maxTasks`, `maxTasksPerPrincipal`;
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
    this.#lifespan = new Lifespan(lifespan, this)
    if (this.#lifespan.set) this.#native.setLifespan(...this.#lifespan.hooks())
  }

  /**
   * Runs the `lifespan` (once; serving starts it too, and so does a call) and resolves when it
   * has, or rejects with its error. It is held until `close()`, which ends it.
   */
  start() {
    if (!this.#lifespan.set) return Promise.resolve()
    const started = (this.#started ??= this.#hold().catch((err) => {
      if (this.#started === started) this.#started = null
      throw err
    }))
    return started.then(() => {})
  }

  /**
   * A hold on the lifespan, started first (core's gate: once, however many serves arrive):
   * `{ release() }`, whose Promise resolves, for the last hold, once the clean-up has run.
   * Rejects with what the start threw.
   */
  async #hold() {
    if (!this.#lifespan.set) return NO_HOLD
    const held = await this.#native.holdLifespan()
    if (!(held instanceof native.NativeLifespanHold)) throw this.#lifespan.failed(held)
    let released = null
    const releasing = this.#releasing
    return {
      release() {
        if (released === null) {
          released = held.release()
          releasing.add(released)
          released.then(() => releasing.delete(released))
        }
        return released
      },
    }
  }

  /** Lets go of a hold to come (`holding`, a Promise of one); nothing when it failed. */
  #letGo(holding) {
    return holding.then(
      (hold) => hold.release(),
      () => {},
    )
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
    // MCP Apps' link: written into `_meta` (both forms hosts read) and checked by the engine.
    if (config.uiResource !== undefined) definition.uiResource = config.uiResource
    if (config.visibility !== undefined) definition.visibility = config.visibility
    copyRequirements(config, definition, `tool ${JSON.stringify(name)}`)
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
    // Refusals name it `middleware NAME`, as the logs do.
    const name = fn.name || 'anonymous'
    this.#native.addMiddleware(aroundStart(fn, name), name)
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
    // Core calls it once the lifespan runs.
    const lifespan = this.#lifespan
    if (parse === null) return (call, args) => run(JSON.parse(args), new Context(call, lifespan))
    const invalid = (issues) =>
      errorResult(native.invalidArgumentsText(name, issues.map((issue) => ({ path: pointer(issue.path), message: issue.message }))))
    return (call, args) => {
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
  }

  /**
   * Registers a resource. A `uri` with `{variables}` is a resource template (RFC 6570: `{id}` is
   * one path segment, `{+path}` anything). `handler(uri, variables)` may return (or resolve to)
   * a string (text), a Buffer/Uint8Array (a blob), `{ text | blob, mimeType }`, or an array of
   * those; throw `new ResourceNotFound()` for a URI that does not exist.
   */
  resource(uri, config, handler) {
    const { definition, template, wrapper } = resourceEntry(uri, config, handler, this.#lifespan)
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
    const { definition, wrapper, complete } = promptEntry(name, config, handler, this.#lifespan)
    const failed = this.#native.addPrompt(JSON.stringify(definition), wrapper)
    if (failed) throw fromNative(failed)
    if (complete !== null) this.completion({ prompt: name }, complete)
    return this
  }

  /**
   * Completes the arguments of a prompt (`{ prompt: name }`) or the variables of a resource
   * template (`{ template: uriTemplate }`): `complete(argument, value, context)` returns (or
   * resolves to) suggested values, best first.
   */
  completion(target, complete) {
    const { kind, key, wrapper } = completionEntry(target, complete, this.#lifespan)
    const failed = this.#native.setCompleter(kind, key, wrapper)
    if (failed) throw fromNative(failed)
    return this
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
   * Serves an MCP Apps view: the HTML5 document `config.html` at `uri` (`ui://…`), for tools
   * to link to (`tool(name, { uiResource: uri })`). `csp`, `permissions`, `domain` and
   * `prefersBorder` are its `_meta.ui`; `listed: false` keeps it out of `resources/list`.
   * Throws `TOOLWIRE_REGISTRATION` naming what the spec forbids. Removed with `removeResource`.
   */
  uiResource(uri, config) {
    if (typeof uri !== 'string') throw new TypeError('uiResource(uri, config): uri must be a string')
    if (config === null || typeof config !== 'object' || typeof config.html !== 'string') {
      throw new TypeError('uiResource(uri, config): config.html must be the view\'s HTML document')
    }
    for (const key of Object.keys(config)) {
      if (!UI_RESOURCE_KEYS.has(key)) throw new TypeError(`toolwire: unknown uiResource option ${JSON.stringify(key)}`)
    }
    const ui = {}
    for (const key of ['csp', 'permissions', 'domain', 'prefersBorder']) {
      if (config[key] !== undefined) ui[key] = config[key]
    }
    const definition = { uri, html: config.html, ui, listed: config.listed ?? true }
    for (const key of ['name', 'title', 'description']) {
      if (config[key] !== undefined && config[key] !== null) definition[key] = config[key]
    }
    copyRequirements(config, definition, `uiResource ${JSON.stringify(uri)}`)
    const failed = this.#native.addUiResource(definition)
    if (failed) throw fromNative(failed)
    return this
  }

  /**
   * Serves an Agent Skill (the Skills extension) at `skill://{path}/`: its SKILL.md and
   * `files` (path within the skill → string or bytes). Throws `TOOLWIRE_REGISTRATION` naming
   * what the spec refuses.
   */
  addSkill(path, skillMd, files = {}) {
    if (typeof path !== 'string') throw new TypeError('addSkill(path, skillMd, files): path must be a string')
    const names = Object.keys(files)
    const failed = this.#native.addSkill(path, toBuffer(skillMd, 'skillMd'), names, names.map((name) => toBuffer(files[name], name)))
    if (failed) throw fromNative(failed)
    return this
  }

  /**
   * Serves the skills under the directory `root` (every directory holding a SKILL.md); call
   * it again to serve what changed (sessions are told). All or nothing. Returns how many.
   */
  loadSkills(root) {
    return unwrap(this.#native.loadSkills(String(root)))
  }

  /**
   * `loadSkills(root)`, then loads it again whenever its files change, as long as the server
   * lives: a thread of the engine compares the tree's files (paths, sizes, modification times)
   * every `intervalMs` (default 1000). A changed tree that fails to load is logged and what was
   * served stays. Returns how many skills the first load found.
   */
  watchSkills(root, { intervalMs = 1000 } = {}) {
    checkCounts({ intervalMs })
    return unwrap(this.#native.watchSkills(String(root), intervalMs))
  }

  /** Stops serving a skill, by its path or its SKILL.md's URI; returns whether it existed. */
  removeSkill(pathOrUri) {
    return this.#native.removeSkill(pathOrUri)
  }

  /**
   * Decides per request who sees which tools, resources, templates and prompts, beyond their
   * `requiredScopes` / `requiredTags`: `rule(item, viewer)` (sync or async) returns `true` to
   * show the item. `item` is `{ kind, name, requiredScopes, requiredTags }` (`kind`: `'tool'`,
   * `'resource'`, `'resourceTemplate'` or `'prompt'`; `name` a URI for resources); `viewer` is
   * `{ subject, scopes, tags, clientInfo, protocolVersion }` (over HTTP, the token's). It is asked
   * for the items the requirements allowed, once per list (or for the one item called, read or
   * rendered); a hidden item is left out of lists and answers as unknown. A rule that throws
   * hides what it was asked about (and is logged). Replaces the rule set before; clients whose
   * view changes get `list_changed`.
   */
  visibleWhen(rule) {
    this.#native.visibleWhen(visibilityWrapper(rule))
    return this
  }

  /**
   * What the `visibleWhen` rule decides from changed (a user's role, a feature flag): every
   * session checks again and gets `list_changed` where its view changed.
   */
  visibilityChanged() {
    this.#native.visibilityChanged()
  }

  /**
   * Offers the tools through a search, for catalogs too large to list whole: `tools/list` shows
   * the `pinned` tools and two of the engine's own, `search_tools` (ranked full-text search over
   * names, titles, descriptions and arguments: BM25F) and `call_tool` (calls a tool by name).
   * Every tool stays callable by its own name; a search finds only what the client may see
   * (`visibleWhen`, required scopes and tags); a call through `call_tool` is the named tool's
   * call for middleware and limits. Options: `pinned` (tool names), `maxResults` (1 to 50,
   * default 5), `searchToolName`, `callToolName`. `toolSearch(null)` lists every tool again.
   * Throws a `ToolwireError` (`TOOLWIRE_REGISTRATION`) when a tool already has one of the names
   * or an option is refused.
   */
  toolSearch(options = {}) {
    if (options !== null && (typeof options !== 'object' || Array.isArray(options))) {
      throw new TypeError('toolwire: toolSearch(options) takes an object, or null to turn it off')
    }
    const failed = this.#native.toolSearch(options)
    if (failed) throw fromNative(failed)
    return this
  }

  /**
   * Mounts another server's tools, resources, templates and prompts under `prefix`: `upstream`
   * is a `Server` in this process, `{ command, args, env, cwd }` (a server to spawn and speak to
   * over stdio) or `{ url, headers }` (a Streamable HTTP server). Names become `${prefix}_${name}`
   * and URIs `scheme://${prefix}/rest`. A call is forwarded with its progress and cancellation,
   * and what the upstream asks during it (elicitation, sampling, roots) is asked of this
   * server's client; this server's middleware, limits and visibility apply. When the upstream's
   * lists change, this server's clients are told. An upstream that goes away fails the calls in
   * flight with an error naming it, and the next call connects again. `protocolVersion` (in
   * `options`, or beside `command` / `url`) is the version asked of the upstream: default
   * 2026-07-28, falling back to `initialize` for a handshake-era server. Resolves to a `Mount`
   * once connected; rejects with a `ToolwireError` (`TOOLWIRE_TRANSPORT` when it cannot
   * connect). Names already taken here are skipped, with a warning in the engine's logs.
   */
  async mount(prefix, upstream, options = {}) {
    if (typeof prefix !== 'string') throw new TypeError('toolwire: mount(prefix, upstream) takes a string prefix')
    const protocolVersion = options?.protocolVersion ?? upstream?.protocolVersion ?? null
    let prepared
    if (upstream instanceof Server) {
      prepared = this.#native.prepareMount(prefix, upstream.#native, null, protocolVersion)
    } else if (upstream !== null && typeof upstream === 'object' && !Array.isArray(upstream)) {
      const { protocolVersion: _asked, ...settings } = upstream
      prepared = this.#native.prepareMount(prefix, null, settings, protocolVersion)
    } else {
      throw new TypeError('toolwire: mount(prefix, upstream) takes a Server, { command, args } or { url }')
    }
    const mount = created(prepared, native.NativeMount)
    const failed = await mount.connect()
    if (failed) throw fromNative(failed)
    return new Mount(mount)
  }

  /**
   * Declares an extension this server serves: `capabilities.extensions[id] = settings` in
   * `initialize` and `server/discover`. A tool reads the client's with `ctx.clientExtension(id)`.
   */
  declareExtension(id, settings = {}) {
    const failed = this.#native.declareExtension(id, settings)
    if (failed) throw fromNative(failed)
    return this
  }

  /**
   * Serves Streamable HTTP at `http://host:port/mcp` (port 0 picks one). Resolves once
   * listening, to an `HttpServer` (`url`, `close()`, `closed`). Options: `path`, `stateless`,
   * `responseMode` (`'auto'` | `'json'` | `'sse'`), `jsonResponse`, `allowedHosts`, `allowedOrigins`, `maxSessions`, `maxSessionsPerClient`, `sessionIdleTimeoutMs`, `headerReadTimeoutMs`, `bodyReadTimeoutMs`, `maxConnections`, `maxSseBufferedBytes`,
   * `tokenValidator(token) -> { subject?, scopes?, tags? } | { insufficientScope } | null` (sync or async) with
   * `authorizationServers` and `resourceUrl`, `metricsPath` (serves `metricsText()` to GET there).
   * Host and Origin are checked by default.
   */
  async serveHttp(host = '127.0.0.1', port = 8000, options = {}) {
    const { tokenValidator, ...init } = options ?? {}
    checkCounts(init)
    // Held until core's serve holds it: core's wait for the start would block this thread.
    const hold = await this.#hold()
    try {
      return this.#startHttp(host, port, init, tokenValidator)
    } finally {
      // A failed start of the listener, when nothing else holds it, ends the lifespan.
      await hold.release()
    }
  }

  #startHttp(host, port, init, tokenValidator) {
    let resolveClosed
    const closed = new Promise((resolve) => {
      resolveClosed = resolve
    })
    const validator = validatorWrapper(tokenValidator)
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
   * and `metricsPath` belong to the app's server, which may route `server.metricsText()`). The Host guard lets only loopback names through unless
   * `allowedHosts` names the app's host names. The first request starts the server's
   * `lifespan`; `await handler.close()` ends the handler's sessions (calls in flight finish
   * first) and its hold on the lifespan, which ends unless something else is served; a request
   * after it starts again. `server.close()` closes it too.
   */
  httpHandler(options = {}) {
    const { tokenValidator, ...init } = options ?? {}
    for (const key of ['host', 'port', 'headerReadTimeoutMs', 'maxConnections', 'metricsPath']) {
      if (init[key] !== undefined) {
        throw new TypeError(`toolwire: httpHandler has no ${key} option: the app's own HTTP server listens (and routes)`)
      }
    }
    checkCounts(init)
    const validator = validatorWrapper(tokenValidator)
    const create = () => created(this.#native.httpEndpoint(init, validator), native.NativeHttpEndpoint)
    return mountedHandler(create, this.#mounts, () => this.#hold())
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
    // Held while serving (calls read before it has started wait for it, in core); if it
    // cannot start, serving ends and the returned Promise rejects with its error.
    let lifespanError = null
    const holding = this.#hold()
    holding.catch((err) => {
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
        return this.#letGo(holding).then(() => Promise.reject(err))
      }
      done = serveStdioStreams(stdio, connection, write, restore, serving)
    }
    // Served (end of input, close(), a signal): the hold ends, and with the last one the
    // lifespan (its clean-up has run when this resolves).
    const letGo = () => this.#letGo(holding)
    const served = done.then(
      async () => {
        await letGo()
        if (lifespanError !== null) throw lifespanError
      },
      async (err) => {
        await letGo()
        throw err
      },
    )
    // close() waits for all of it.
    const stop = serving.stop
    serving.stop = () => {
      stop()
      return served.then(
        () => {},
        () => {},
      )
    }
    return served
  }

  /**
   * Ends every transport this server serves: `serveStdio()` (reading stops, calls in flight
   * finish, then its Promise resolves), every HTTP server `serveHttp()` started (as their
   * `close()`), every `connect()` session (as its `shutdown()`) and `httpHandler()`, and
   * `start()`'s hold; the `lifespan` ends after the last of them and the calls in flight.
   * Resolves once all of them have ended and its clean-up has run.
   */
  async close() {
    const ends = []
    for (const serving of this.#stdio) ends.push(serving.stop())
    for (const http of this.#http) ends.push(http.close())
    for (const connection of this.#connections) ends.push(connection.shutdown())
    for (const mount of this.#mounts) ends.push(mount.shutdown())
    const started = this.#started
    this.#started = null
    if (started !== null) ends.push(this.#letGo(started))
    await Promise.all(ends)
    // Releases begun before (a mount's or a serve's that ended on its own): the last one waits for
    // the clean-up.
    await Promise.all(this.#releasing)
    // A lifespan that a call started with nothing holding it (a vector replay's, say)
    // has no serve to end it: a hold of close()'s own, let go, ends it after the calls in flight.
    if (this.#lifespan.running) await this.#letGo(this.#hold())
  }

  /**
   * A session over a channel of your own: `send(message)` gets each outbound JSON text;
   * feed inbound ones to `handleFrame(message)`. It holds no `lifespan`: its first call
   * starts it, and it runs until `close()` (a transport of your own serves many sessions, and
   * a hold each would set the app up again whenever the last client left). A failed start is
   * each call's error, and the next call tries again. While the session has calls unfinished
   * it keeps the event loop running, so their answers are sent.
   */
  connect(send) {
    if (typeof send !== 'function') throw new TypeError('toolwire: connect(send) needs a function')
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
      /**
       * No more input: calls in flight finish (their answers are sent), then the session ends.
       */
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

  /**
   * Core's client on a new session of this server (toolwire/testing): `{ client, shutdown() }`,
   * `client` a NativeClient (src/client.rs), not connected yet. `ask(method, paramsJson, reply)`
   * answers the server's questions. `close()` ends the session as it ends `connect()`'s.
   * `hold` (toolwire/testing's `connect`: its hold on the lifespan, or null) is let go of once
   * the session has ended.
   */
  [OPEN_CLIENT](options, ask, hold = null) {
    const client = created(this.#native.client(options, ask), native.NativeClient)
    const open = this.#connections
    let ending = null
    const session = {
      client,
      /** Calls in flight finish, then the session ends (core's close), then its hold; once. */
      shutdown() {
        ending ??= client.close().finally(async () => {
          open.delete(session)
          await hold?.release()
        })
        return ending
      },
    }
    open.add(session)
    return session
  }

  /**
   * Replays a golden wire vector case (JSON text) on a new session of this server with core's
   * replayer (toolwire/testing's `replayVector`): resolves to why it failed, or null. Its
   * session holds nothing: a call starts the lifespan (the replay's Promise keeps the event
   * loop alive meanwhile), and `close()` ends it.
   */
  [REPLAY_VECTOR](testCase) {
    return this.#native.replayVector(testCase)
  }

  /** A hold on the lifespan, started first (toolwire/testing's `connect`): `{ release() }`. */
  [HOLD_LIFESPAN]() {
    return this.#hold()
  }
}

/** The hold of a server without a lifespan: nothing to hold. */
const NO_HOLD = { release: () => Promise.resolve() }

/** A catalog mounted with `Server.mount`: what it registered, and the way to take it off. */
class Mount {
  #native

  constructor(mount) {
    this.#native = mount
  }

  /** The prefix. */
  get prefix() {
    return this.#native.prefix
  }

  /** The names and URIs it registered, as this server's clients see them. */
  registered() {
    return this.#native.registered()
  }

  /** Reads the upstream's lists again now (they are read when it says they changed, too). */
  async refresh() {
    const failed = await this.#native.refresh()
    if (failed) throw fromNative(failed)
  }

  /** Takes what it registered off this server and ends the connection. */
  async unmount() {
    await this.#native.unmount()
  }
}

/** A tool's failure when the options give no `onToolError`: its stack to stderr. */
function defaultToolErrorLog(err, toolName) {
  const detail = err instanceof Error ? err.stack || err.message : String(err)
  process.stderr.write(`toolwire: tool ${JSON.stringify(toolName)} failed: ${detail}\n`)
}

module.exports = { Server, Mount, OPEN_CLIENT, REPLAY_VECTOR, HOLD_LIFESPAN }

/** A skill file's contents as bytes: a string as UTF-8, bytes as they are. */
function toBuffer(contents, what) {
  if (typeof contents === 'string') return Buffer.from(contents, 'utf8')
  if (contents instanceof Uint8Array) return Buffer.from(contents.buffer, contents.byteOffset, contents.byteLength)
  throw new TypeError(`addSkill: ${what} must be a string or bytes`)
}
