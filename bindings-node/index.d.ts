// Type definitions for toolwire (Node binding).

/**
 * `import { Server } from 'toolwire'`: register JavaScript functions as MCP tools, resources and
 * prompts; a Rust engine speaks the protocol (stdio, Streamable HTTP, or mounted in your app).
 *
 * @packageDocumentation
 * @module toolwire
 */

import type { IncomingMessage, ServerResponse } from 'node:http'

/** A JSON Schema object (the engine accepts draft 2020-12 by default, others by `$schema`). */
export type JsonSchema = { [key: string]: unknown }

/** Anything zod 3 or zod 4 calls a schema: only the parts toolwire relies on. */
export interface ZodLike<Output = unknown> {
  safeParse(value: unknown): unknown
  readonly _output: Output
}

/** `{ text: z.string() }`: an object of zod schemas. */
export type ZodRawShapeLike = { [key: string]: ZodLike }

type OptionalKeys<S extends ZodRawShapeLike> = {
  [K in keyof S]: undefined extends S[K]['_output'] ? K : never
}[keyof S]
type RequiredKeys<S extends ZodRawShapeLike> = Exclude<keyof S, OptionalKeys<S>>
type Simplify<T> = { [K in keyof T]: T[K] } & {}

/** The arguments a handler receives for an input schema. */
export type InferArgs<S> = S extends ZodLike<infer O>
  ? O
  : S extends ZodRawShapeLike
    ? Simplify<{ [K in RequiredKeys<S>]: S[K]['_output'] } & { [K in OptionalKeys<S>]?: S[K]['_output'] }>
    : { [key: string]: any }

/** The structured result a handler may return for an output schema. */
export type InferOutput<S> = S extends ZodLike<infer O>
  ? O
  : S extends ZodRawShapeLike
    ? InferArgs<S>
    : { [key: string]: unknown }

export type LogLevel = 'debug' | 'info' | 'notice' | 'warning' | 'error' | 'critical' | 'alert' | 'emergency'

export interface Implementation {
  name: string
  version: string
  title?: string
  [key: string]: unknown
}

export interface TextContent { type: 'text'; text: string; annotations?: Annotations; _meta?: Record<string, unknown> }
export interface ImageContent { type: 'image'; data: string; mimeType: string; annotations?: Annotations; _meta?: Record<string, unknown> }
export interface AudioContent { type: 'audio'; data: string; mimeType: string; annotations?: Annotations; _meta?: Record<string, unknown> }
export interface ResourceLink {
  type: 'resource_link'; uri: string; name: string; title?: string; description?: string; mimeType?: string; size?: number
  annotations?: Annotations; _meta?: Record<string, unknown>
}
export interface EmbeddedResource {
  type: 'resource'
  resource: { uri: string; mimeType?: string; text: string } | { uri: string; mimeType?: string; blob: string }
  annotations?: Annotations
  _meta?: Record<string, unknown>
}
export interface Annotations { audience?: ('user' | 'assistant')[]; priority?: number; lastModified?: string }
export type ContentBlock = TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource

/** A `tools/call` result, returned as is. */
export interface CallToolResult {
  content: ContentBlock[]
  structuredContent?: { [key: string]: unknown }
  isError?: boolean
  _meta?: Record<string, unknown>
}

export interface ToolAnnotations {
  title?: string
  readOnlyHint?: boolean
  destructiveHint?: boolean
  idempotentHint?: boolean
  openWorldHint?: boolean
}

/** An MCP Apps view (`server.uiResource`). */
export interface UiResourceConfig {
  /** The view: an HTML5 document (`<!DOCTYPE html>`…). */
  html: string
  /** Its name (default: the URI's last segment). */
  name?: string
  title?: string
  description?: string
  /** Origins the view may reach. */
  csp?: { connectDomains?: string[]; resourceDomains?: string[]; frameDomains?: string[]; baseUriDomains?: string[] }
  /** Browser permissions asked for, each `{}`. */
  permissions?: { camera?: {}; microphone?: {}; geolocation?: {}; clipboardWrite?: {} }
  /** The host-specific origin asked for. */
  domain?: string
  prefersBorder?: boolean
  /** `false` keeps it out of `resources/list` (still read by its URI). */
  listed?: boolean
  /** Only clients whose token holds every one of these scopes see and read it. */
  requiredScopes?: string[]
  /** Only clients holding every one of these tags see and read it. */
  requiredTags?: string[]
}

export interface ToolConfig<I = undefined, O = undefined> {
  title?: string
  description?: string
  /** JSON Schema, a zod object, or a zod raw shape. */
  inputSchema?: I
  /** JSON Schema, a zod object, or a zod raw shape; a plain-object return is then checked against it. */
  outputSchema?: O
  annotations?: ToolAnnotations
  icons?: { src: string; mimeType?: string; sizes?: string[]; theme?: 'light' | 'dark' }[]
  _meta?: Record<string, unknown>
  /** Deadline of one call; past it the call answers with an error and `ctx.signal` aborts. */
  timeoutMs?: number
  /** Calls of this tool running at once; more wait in a bounded queue. */
  maxConcurrency?: number
  /**
   * Tasks extension: `'optional'` lets a 2026-07-28 client that declares it get the call as a
   * task when it runs a while or asks the client something; `'required'`: only as a task
   * (default `'never'`). The handler does not change: in a task `ctx.elicit` waits for `tasks/update`.
   */
  taskSupport?: 'never' | 'optional' | 'required'
  /** MCP Apps: the `ui://` view (registered first with `uiResource`) this tool links to. */
  uiResource?: string
  /** MCP Apps: who may call it (default both); `['app']` hides it from clients that render no views. */
  visibility?: Array<'model' | 'app'>
  /** Only clients whose token holds every one of these scopes see it; to the rest it does not exist. */
  requiredScopes?: string[]
  /** Only clients holding every one of these tags (the token validator's `tags`) see it. */
  requiredTags?: string[]
}

/**
 * What a handler may return: text, a whole CallToolResult (`content` an array of blocks, no
 * keys besides `content`, `structuredContent`, `isError`, `_meta`), another object (structured
 * content), nothing (no content), or any other JSON value (one text block of its JSON).
 */
export type ToolReturn<O> =
  | string
  | CallToolResult
  | (O extends undefined ? { [key: string]: unknown } | number | boolean | bigint | unknown[] : InferOutput<O>)
  | InputRequired
  | null
  | undefined

/** 2026-07-28 MRTR, for prompts and resources: what the client sent back (a `Context` has it all). */
export interface Round {
  inputResponses: { [key: string]: any }
  requestState: string | null
  /** What the server's `lifespan` gave (undefined without one). */
  lifespanContext: any
}

/**
 * 2026-07-28 MRTR: returned by a tool, prompt or resource that needs the client's input first.
 * The engine asks the client, who calls again with the answers; `withState` travels sealed.
 */
export declare class InputRequired {
  constructor(inputRequests?: { [key: string]: { method: string; params: unknown } }, requestState?: string)
  inputRequests: { [key: string]: { method: string; params: unknown } }
  requestState: string | undefined
  /** Asks the user (`elicitation/create`) under `key`. */
  elicit(key: string, params: { [key: string]: unknown }): this
  /** Asks the client's model (`sampling/createMessage`) under `key`. */
  sample(key: string, params: { [key: string]: unknown }): this
  /** Asks for the client's roots (`roots/list`) under `key`. */
  listRoots(key: string): this
  request(key: string, method: string, params: { [key: string]: unknown }): this
  /** State for the next round (the engine seals it). */
  withState(state: string): this
  toJSON(): { inputRequests?: { [key: string]: unknown }; requestState?: string }
}

export type ToolHandler<I, O> = (args: InferArgs<I>, ctx: Context) => ToolReturn<O> | Promise<ToolReturn<O>>

/** One of the client's roots (`roots/list`). */
export interface Root { uri: string; name?: string; _meta?: Record<string, unknown> }

export interface RequestOptions {
  /** How long to wait for the client (progress notifications extend it). */
  timeoutMs?: number
}

/** What a tool handler gets besides its arguments. */
export declare class Context {
  private constructor()
  /** What the server's `lifespan` gave (a database pool, a client…); undefined without one. */
  readonly lifespanContext: any
  /** Aborts when the client cancels the call (AbortError) or its deadline passes (TimeoutError). */
  readonly signal: AbortSignal
  /** True once the call was cancelled or passed its deadline (or is over). */
  readonly isCancelled: boolean
  /** Resolves once `isCancelled` turns true: the call was cancelled, passed its deadline, or is over. */
  cancelled(): Promise<void>
  /** 2026-07-28 MRTR: the client's answers to what an earlier round asked, by key. */
  readonly inputResponses: { [key: string]: any }
  /** 2026-07-28 MRTR: the state this tool returned with its last `InputRequired`, verified by the engine. */
  readonly requestState: string | null
  /** The request's W3C trace context. */
  readonly traceContext: { traceparent: string | null; tracestate: string | null; baggage: string | null }
  /** Whether the client asked for progress (its request carried a `progressToken`). */
  readonly wantsProgress: boolean
  readonly requestId: string | number
  readonly toolName: string
  readonly protocolVersion: string
  readonly clientInfo: Implementation | null
  readonly clientCapabilities: { [key: string]: unknown }
  /** The settings the client declared for the extension `id` (this request's own in 2026-07-28, the session's before), or `null`. */
  clientExtension(id: string): unknown
  /** Whether the client renders MCP Apps views (it declared `io.modelcontextprotocol/ui` with their MIME type). */
  readonly clientRendersApps: boolean
  /** Reports progress if the client asked for it (values must increase). Returns whether it was sent. */
  progress(progress: number, total?: number, message?: string): boolean
  /** Sends a log message if `level` passes the client's level. Returns whether it was sent. */
  log(level: LogLevel, data: unknown, logger?: string): boolean
  /** Over Streamable HTTP with an SSE answer: closes this call's connection; the client resumes. */
  closeSseStream(): void
  /** `sampling/createMessage`: asks the client's model. */
  sample(params: { [key: string]: unknown }, options?: RequestOptions): Promise<{ [key: string]: any }>
  /** `elicitation/create`: asks the user. */
  elicit(params: { [key: string]: unknown }, options?: RequestOptions): Promise<{ [key: string]: any }>
  /** `roots/list`: the client's roots. */
  listRoots(options?: RequestOptions): Promise<Root[]>
  /** Several questions at once (one 2026-07-28 round; one after the other in a session), answered in order. */
  askAll(
    questions: Array<[method: 'elicitation/create' | 'sampling/createMessage' | 'roots/list', params: { [key: string]: unknown }]>,
    options?: RequestOptions,
  ): Promise<Array<{ [key: string]: any }>>
  /** Any other request to the client. */
  request(method: string, params?: { [key: string]: unknown }, options?: RequestOptions): Promise<{ [key: string]: any }>
}

export interface ServerOptions {
  name: string
  version: string
  title?: string
  instructions?: string
  /** Tools per `tools/list` page (default: all). */
  pageSize?: number
  /** Deadline of calls of tools without their own. */
  defaultToolTimeoutMs?: number
  /** Calls running at once across the server (at least 1); more wait in a bounded queue. */
  maxConcurrentCalls?: number
  /**
   * Calls of one client session running at once (default 1024); its further calls wait behind
   * it, so one client cannot take every slot while others wait.
   */
  maxConcurrentCallsPerSession?: number
  /**
   * Calls of one authenticated principal (a bearer token's subject) running at once over all its
   * sessions and requests (default 1024); its further calls wait behind it.
   */
  maxConcurrentCallsPerPrincipal?: number
  /** Largest inbound message; a longer one is refused with -32600. */
  maxFrameBytes?: number
  /** Deepest JSON nesting accepted. */
  maxDepth?: number
  /** Called with what a tool threw (default: the stack goes to stderr). */
  onToolError?: (error: unknown, toolName: string) => void
  /**
   * Set-up and clean-up around serving, whose value handlers reach as `ctx.lifespanContext`
   * (resources and prompts: `round.lifespanContext`). An async function returning the value,
   * or an async generator yielding it once (`try { yield pool } finally { await pool.end() }`).
   * Every serve of the engine holds it while it runs (`serveStdio()`, `serveHttp()`, an
   * `httpHandler()` from its first request, a test client, `start()` until `close()`): the
   * first starts it, once; calls wait for it. A `connect()` session holds nothing: its first
   * call starts it, and it runs until `close()`, however many sessions come and go. The
   * `finally` runs after the last serve ends and the calls in flight finish (`close()` ends
   * every serve).
   */
  lifespan?: (server: Server) => unknown

  /** 2026-07-28: how long clients may cache lists, reads and `server/discover` (default 0). */
  cacheTtlMs?: number
  /** 2026-07-28: who may share those cached answers (default 'private'). */
  cacheScope?: 'private' | 'public'
  /**
   * 2026-07-28: secrets (each at least 32 bytes) for the keys that seal `requestState` between
   * MRTR rounds; the first seals, all open. Default: one random key per process.
   */
  requestStateKeys?: string[]
  /**
   * Share tasks and changes with the other replicas of this server through the Redis at this
   * URL (`redis://[:password@]host:port/db`); default: everything stays in this process.
   * Connects in the constructor: a Redis that cannot be reached throws (`TOOLWIRE_TRANSPORT`),
   * naming the URL. Give every replica the same `requestStateKeys`.
   */
  redis?: string
  /** Serve 2026-07-28 only (`initialize` is refused with -32022). */
  modernOnly?: boolean
  /**
   * Tasks extension: how long a call of a `taskSupport` tool runs in its request before it
   * becomes a task (default 250); one that asks the client something becomes one at once.
   */
  taskAfterMs?: number
  /** How long a task is kept after its creation, finished or not (its `ttlMs`; default one hour; at most 4294967295, about 49 days). A handler still running then is cancelled. */
  taskTtlMs?: number
  /** How long clients are told to wait between polls of a task (its `pollIntervalMs`; default 1000). */
  taskPollIntervalMs?: number
  /** Tasks kept at once, finished ones included until they expire (default 10,000); past it a call that would become a task is refused (-32603, retry later). */
  maxTasks?: number
  /** Tasks one principal (without authentication: everyone together) may hold at once (default 1,000). */
  maxTasksPerPrincipal?: number
  /**
   * Count requests, calls by tool, refusals, sessions and streams for `metrics()` and
   * `metricsText()` (default true; a few atomic additions per request).
   */
  metrics?: boolean
}

/** A session over a channel of your own (see `Server.connect`). */
export interface Connection {
  /** Feeds one inbound JSON-RPC message. */
  handleFrame(message: string | Uint8Array): void
  /** No more input: calls in flight finish (their answers are sent), then the session ends. */
  shutdown(): Promise<void>
  /** Ends at once: calls in flight are cancelled and nothing more is sent. */
  close(): void
  readonly protocolVersion: string | null
}

/** What a resource handler may return (or resolve to). */
export type ResourceValue =
  | string
  | Uint8Array
  | ArrayBuffer
  | { text: string; uri?: string; mimeType?: string; _meta?: Record<string, unknown> }
  | { blob: string | Uint8Array | ArrayBuffer; uri?: string; mimeType?: string; _meta?: Record<string, unknown> }
export type ResourceHandler = (
  uri: string,
  variables: Record<string, string>,
  /** The request's context (a tool's: progress, log, signal, client info, lifespanContext) and its 2026-07-28 round. */
  ctx: Context,
) => ResourceValue | ResourceValue[] | InputRequired | Promise<ResourceValue | ResourceValue[] | InputRequired>

export interface ResourceConfig {
  name?: string
  title?: string
  description?: string
  mimeType?: string
  annotations?: Annotations
  _meta?: Record<string, unknown>
  /** Only clients whose token holds every one of these scopes see it; to the rest it does not exist. */
  requiredScopes?: string[]
  /** Only clients holding every one of these tags (the token validator's `tags`) see it. */
  requiredTags?: string[]
}

export interface PromptArgument {
  name: string
  title?: string
  description?: string
  required?: boolean
}

export interface PromptConfig<A = undefined> {
  title?: string
  description?: string
  /**
   * The arguments as a zod raw shape (`{ language: z.string() }`), a zod object, or a JSON
   * Schema object of string properties (`type`, `title`, `description`, `enum`, `pattern`,
   * `minLength`, `maxLength`): they are declared from it and checked against it (refused ones
   * answer JSON-RPC -32602). An `enum` or `completable()` argument is completed for you.
   */
  argsSchema?: A
  /** The arguments listed by hand (not with `argsSchema`); only presence is checked. */
  arguments?: PromptArgument[]
  _meta?: Record<string, unknown>
  /** Only clients whose token holds every one of these scopes see it; to the rest it does not exist. */
  requiredScopes?: string[]
  /** Only clients holding every one of these tags (the token validator's `tags`) see it. */
  requiredTags?: string[]
}

/** What a prompt handler receives for an `argsSchema` (strings by name without a zod one). */
export type PromptArgs<A> = [A] extends [undefined]
  ? Record<string, string>
  : A extends ZodLike | ZodRawShapeLike
    ? InferArgs<A>
    : Record<string, string>

/** Suggests values for a prompt argument: `context.arguments` holds the others given so far. */
export type CompleteArgument = (
  value: string,
  context: { arguments: Record<string, string> },
) => Iterable<string> | Promise<Iterable<string>>

/**
 * Marks a prompt argument's zod schema as completed by `complete` (the TypeScript SDK's
 * `completable`): `completion/complete` for that argument calls it. Returns the same schema.
 */
export declare function completable<S extends ZodLike>(schema: S, complete: CompleteArgument): S

export interface PromptMessage {
  role: 'user' | 'assistant'
  content: string | ContentBlock
}
export type PromptValue = string | ContentBlock | PromptMessage
export type PromptReturn = PromptValue | PromptValue[] | { description?: string; messages: PromptValue[] }
export type PromptHandler<A = undefined> = (
  args: PromptArgs<A>,
  /** The request's context (a tool's: progress, log, signal, client info, lifespanContext) and its 2026-07-28 round. */
  ctx: Context,
) => PromptReturn | InputRequired | Promise<PromptReturn | InputRequired>

export type Completer = (
  argument: string,
  value: string,
  /** The other arguments given so far. */
  context: Record<string, string>,
  /** The request's context, as a tool's. */
  ctx: Context,
) => Iterable<string> | Promise<Iterable<string>>

export interface TokenInfo {
  subject?: string
  scopes?: string[]
  /** What the holder is (roles, groups, plans): matched against `requiredTags`. */
  tags?: string[]
}

/** How `toolSearch` offers a large catalog. */
export interface ToolSearchOptions {
  /** Tools listed as usual beside the search's two. */
  pinned?: string[]
  /** The most tools one search returns (1 to 50; default 5). */
  maxResults?: number
  /** The search tool's name (default `'search_tools'`). */
  searchToolName?: string
  /** The call tool's name (default `'call_tool'`). */
  callToolName?: string
}

/** A server to spawn and speak to over its stdin and stdout, for `mount`. */
export interface MountCommand {
  /** The program (looked up on `PATH`). */
  command: string
  args?: string[]
  /** Variables set for it, on top of this process's environment. */
  env?: Record<string, string>
  /** Its working directory. */
  cwd?: string
  /** As `MountOptions.protocolVersion`. */
  protocolVersion?: string
}

/** A Streamable HTTP server (`http://` or `https://`, trusted as `SSL_CERT_FILE` or the system says), for `mount`. */
export interface MountUrl {
  url: string
  /** Sent with every request (an `Authorization`, say). */
  headers?: Record<string, string>
  /** As `MountOptions.protocolVersion`. */
  protocolVersion?: string
}

/** How `Server.mount` speaks to its upstream. */
export interface MountOptions {
  /**
   * The version asked of the upstream: default 2026-07-28, falling back to `initialize` for a
   * handshake-era server. Give `'2025-11-25'` for an upstream whose tools ask questions as
   * requests, which 2026-07-28 has no channel for.
   */
  protocolVersion?: string
}

/** A catalog mounted with `Server.mount`. */
export declare class Mount {
  private constructor()
  /** The prefix. */
  readonly prefix: string
  /** The names and URIs it registered, as this server's clients see them. */
  registered(): string[]
  /** Reads the upstream's lists again now (they are read when it says they changed, too). */
  refresh(): Promise<void>
  /** Takes what it registered off this server and ends the connection. */
  unmount(): Promise<void>
}

/** A tool, resource, resource template or prompt, as a `visibleWhen` rule sees it. */
export interface CatalogItem {
  kind: 'tool' | 'resource' | 'resourceTemplate' | 'prompt'
  /** A tool's or prompt's name, a resource's URI, a template's URI template. */
  name: string
  requiredScopes: string[]
  requiredTags: string[]
}

/** Who a request comes from, as a `visibleWhen` rule sees it (over HTTP, the token's). */
export interface Viewer {
  subject: string | null
  scopes: string[]
  tags: string[]
  clientInfo: { name: string; version: string } | null
  protocolVersion: string | null
}

export type TokenVerdict = TokenInfo | { insufficientScope: string } | null | undefined

export interface HttpOptions {
  /** The endpoint path (default `/mcp`); it must start with `/` (else `ERR_INVALID_ARG_VALUE`). */
  path?: string
  /** No sessions: each POST stands alone; requests to the client fail at once. */
  stateless?: boolean
  /**
   * How requests are answered: `'auto'` (default) with one JSON body when the answer is ready at
   * once and an SSE stream otherwise, `'json'` always one JSON body, `'sse'` always an SSE stream.
   */
  responseMode?: 'auto' | 'json' | 'sse'
  /** The official SDK's name for `responseMode: 'json'`. */
  jsonResponse?: boolean
  /** Accepted `Host` values (default: loopback names on a loopback host). */
  allowedHosts?: string[]
  /** Accepted `Origin` values (default: loopback origins on a loopback host). */
  allowedOrigins?: string[]
  /**
   * Live sessions at most (default 10,000). A full server makes room by ending the least
   * recently used idle session of the client holding the most sessions (never leaving it with
   * fewer than the newcomer's client), or of the newcomer's own client; with none, 503.
   */
  maxSessions?: number
  /**
   * Live sessions one client may hold (default 1,000): the token's subject, or without tokens
   * the peer's address (behind a reverse proxy, the proxy: raise it there). A client at its
   * limit loses its least recently used idle session to a new one, or gets 429 if none is idle.
   */
  maxSessionsPerClient?: number
  /** Idle sessions end after this long (default 1 hour; 0: never). */
  sessionIdleTimeoutMs?: number
  /**
   * Milliseconds a client may take to send a request's head, and how long a kept-alive
   * connection may idle (default 30,000; 0: no limit). Cuts off slowloris clients.
   */
  headerReadTimeoutMs?: number
  /** Milliseconds a client may take to send a request's body, then 408 (default 30,000; 0: no limit). */
  bodyReadTimeoutMs?: number
  /** Open connections at most (default 10,000); one more is answered 503 and closed. */
  maxConnections?: number
  /**
   * Bytes that may wait for one slow SSE reader (default 1 MiB); past it the connection is let
   * go with a `retry:` hint, and the stream is resumed with `Last-Event-ID`.
   */
  maxSseBufferedBytes?: number
  /**
   * Require a bearer token: return what it grants, `{ insufficientScope: 'scope' }` to refuse a
   * valid token that lacks a scope (403), or null to refuse it (401).
   */
  tokenValidator?: (token: string) => TokenVerdict | Promise<TokenVerdict>
  /** The authorization servers named in the protected-resource metadata. */
  authorizationServers?: string[]
  /** This server's canonical URL (the tokens' audience). */
  resourceUrl?: string
  /**
   * Serve `metricsText()` to GET on this path (e.g. '/metrics') for Prometheus; Host and Origin
   * are checked, no token is asked for (default: not served).
   */
  metricsPath?: string
}

/**
 * `serveHttp`'s options less the listener's (the app's own server listens, and routes
 * `/metrics` itself: `server.metricsText()`).
 */
export type HttpHandlerOptions = Omit<HttpOptions, 'headerReadTimeoutMs' | 'maxConnections' | 'metricsPath'>

/**
 * Streamable HTTP inside a web server of your own (`server.httpHandler()`): a request handler
 * for node:http and Express, and `fetch` for Web `Request` → `Response` frameworks.
 */
export interface HttpHandler {
  /**
   * Answers one request the app routed here (any path: it is not matched again). The body is
   * streamed from `req`, or taken from `req.body` when a body parser (`express.json()`) read it
   * already. Never rejects: a failure goes to `next(err)` when given, else answers 500.
   */
  (req: IncomingMessage, res: ServerResponse, next?: (err?: unknown) => void): Promise<void>
  /**
   * Answers a Web `Request`; the `Response` body is a stream read as the engine produces it.
   * The request's `signal` aborting, or the body being cancelled, is the client hanging up.
   */
  fetch(request: Request): Promise<Response>
  /**
   * Ends this handler's sessions (calls in flight finish first) and its hold on the server's
   * lifespan, which ends unless something else is served. A later request starts again.
   */
  close(): Promise<void>
}

/** A running Streamable HTTP server. */
export declare class HttpServer {
  private constructor()
  /** The endpoint, e.g. `http://127.0.0.1:8000/mcp`. */
  readonly url: string
  /** Resolves once the server has stopped and its sessions ended. */
  readonly closed: Promise<void>
  /** Stops accepting; sessions drain their calls; resolves when done. */
  close(): Promise<void>
}

/** Throw it in a resource handler: the client gets JSON-RPC -32002 (resource not found). */
/**
 * Thrown by a tool when the call itself failed: the client gets a JSON-RPC error with `rpcCode`
 * instead of an `isError` result, and a task ends `failed` instead of `completed`.
 */
export declare class ProtocolError extends Error {
  constructor(rpcCode: number, message: string)
  readonly rpcCode: number
}

/**
 * Thrown by a middleware before `next()`: the `tools/call` is answered with an `isError` result
 * of this message, for the model to read (another method gets JSON-RPC -32603). Thrown by a
 * tool, it is an `isError` result like any Error.
 */
export declare class ToolError extends Error {
  constructor(message: string)
}

/** What a middleware sees of a request. */
export interface RequestInfo {
  /** The JSON-RPC method, e.g. `'tools/call'`. */
  readonly method: string
  /** What the request names: the tool or prompt, or the resource URI. */
  readonly name?: string
  /** The arguments of a `tools/call` or `prompts/get`. */
  readonly arguments?: Record<string, unknown>
  /** Who is calling: the bearer token's subject, when a `tokenValidator` is set. */
  readonly principal?: string
  /** The protocol version the request is served in. */
  readonly protocolVersion?: string
  readonly requestId: string | number
  /** A number no other request of this process has (to match log lines). */
  readonly sequence: number
}

/**
 * How a request ended: a result; an `isError` tool result; a 2026-07-28 round asking the client
 * first; a task created for the call; a JSON-RPC error (`code`); no answer (cancelled, or its
 * session ended); or refused by a middleware.
 */
export type OutcomeKind = 'result' | 'toolError' | 'inputRequired' | 'taskCreated' | 'error' | 'cancelled' | 'refused'

export interface Outcome {
  readonly kind: OutcomeKind
  /** The JSON-RPC error code, when `kind` is `'error'`. */
  readonly code?: number
  /** Milliseconds from the request's arrival to its answer. */
  readonly elapsedMs: number
}

/** Lets the request through; resolves with its `Outcome` once the answer is sent. Call it once. */
export type Next = () => Promise<Outcome>

/**
 * A rule around every request but `initialize` (and `server/discover`): the code before
 * `next()` decides (throw `ProtocolError` or `ToolError` to refuse); what follows observes.
 */
export type Middleware = (request: RequestInfo, next: Next) => unknown

export declare class ResourceNotFound extends Error {
  constructor(message?: string)
}

/** How requests of one method, or calls of one tool, went (see `Server.metrics`). */
export interface MetricsSeries {
  calls: number
  inFlight: number
  /** By how they ended: `result`, `tool_error`, `input_required`, `task_created`, `cancelled`, `refused`, `invalid_request`, `method_not_found`, `invalid_params`, `internal_error`, `server_error`, `other_error` (those seen). */
  outcomes: Record<string, number>
  /** From arrival to answer: `buckets` cumulative, `le` in seconds (the last, 10 s; `count` is all). */
  latency: { count: number; sumSeconds: number; buckets: { le: number; count: number }[] }
}

/** What `Server.metrics()` returns. */
export interface Metrics {
  enabled: boolean
  /** By method name (`other`: methods the server does not know); methods never called are left out. */
  methods: Record<string, MetricsSeries>
  /** By registered tool. */
  tools: Record<string, MetricsSeries>
  callsInFlight: number
  callsQueued: number
  /** Refused by a limit: `calls`, `sessions`, `connections`, `listen_streams`, `tasks`. */
  refused: Record<string, number>
  sessions: number
  streams: number
  listenStreams: number
  tasks: number
}

export declare class Server {
  /** Throws a `ToolwireError` (code `ERR_INVALID_ARG_VALUE`) for a refused option, e.g. `maxConcurrentCalls: 0`. */
  constructor(options: ServerOptions)
  /**
   * Runs the `lifespan` (once; serving starts it too) and holds it until `close()`; rejects
   * with what it threw.
   */
  start(): Promise<void>
  /** Registers a tool; throws a `ToolwireError` (code `TOOLWIRE_REGISTRATION`) for a bad definition. */
  tool<I = undefined, O = undefined>(name: string, config: ToolConfig<I, O>, handler: ToolHandler<I, O>): this
  tool(name: string, handler: ToolHandler<undefined, undefined>): this
  /**
   * Puts `middleware(request, next)` in front of every request but `initialize` (and
   * 2026-07-28's `server/discover`), after those added before it (Koa/Hono style). Before
   * `await next()` it decides: throw `ProtocolError(code, message)` for that JSON-RPC error, or
   * `ToolError(message)` for an `isError` result of a `tools/call`; `next()` resolves with the
   * `Outcome` once the answer is sent. Throwing anything else, or settling without calling
   * `next()`, refuses the request with -32603 (a throw is written to stderr).
   */
  middleware(middleware: Middleware): this
  /** Unregisters a tool; returns whether it existed. Clients are told (list_changed). */
  removeTool(name: string): boolean
  /** The registered tools' names, sorted. */
  readonly toolNames: string[]
  /** What the server has done and is doing, counted since it was made. */
  metrics(): Metrics
  /** The metrics in the Prometheus text format (0.0.4), for a route of your own. */
  metricsText(): string
  /**
   * Serves one client over stdin/stdout until stdin ends, `close()`, or SIGINT/SIGTERM (unless
   * the application listens for them itself); calls in flight finish first. Rejects with
   * `TOOLWIRE_BUSY` while stdin is already served in this process.
   */
  serveStdio(): Promise<void>
  /**
   * Ends every transport this server serves: `serveStdio()`, every HTTP server `serveHttp()`
   * started, every `connect()` session, test client and `httpHandler()`'s sessions, and
   * `start()`'s hold; the `lifespan` ends after them and the calls in flight (one a call started
   * too). Resolves once all of them have ended and its clean-up has run.
   */
  close(): Promise<void>
  /**
   * A session over a channel of your own: `send` gets each outbound JSON text. It holds no
   * `lifespan`: its first call starts it, and it runs until `close()`. While the session has
   * calls unfinished it keeps Node's event loop running, so their answers are sent.
   */
  connect(send: (message: string) => void): Connection
  /** Registers a resource, or a resource template when `uri` has `{variables}`. */
  resource(uri: string, config: ResourceConfig, handler: ResourceHandler): this
  resource(uri: string, handler: ResourceHandler): this
  /** Registers a prompt; throws a `TypeError` for an argsSchema it cannot check. */
  prompt<A = undefined>(name: string, config: PromptConfig<A>, handler: PromptHandler<A>): this
  prompt(name: string, handler: PromptHandler): this
  /** Completes a prompt's arguments or a resource template's variables. */
  completion(target: { prompt: string } | { template: string }, complete: Completer): this
  removeResource(uri: string): boolean
  removePrompt(name: string): boolean
  /** Tells the clients subscribed to `uri` that it changed. */
  notifyResourceUpdated(uri: string): void
  /**
   * Serves an MCP Apps view: the HTML5 document `config.html` at `uri` (`ui://…`), for tools to
   * link to (`{ uiResource: uri }`). `csp`, `permissions`, `domain` and `prefersBorder` are its
   * `_meta.ui`; `listed: false` keeps it out of `resources/list`. Throws
   * `TOOLWIRE_REGISTRATION` naming what the spec forbids.
   */
  uiResource(uri: string, config: UiResourceConfig): this
  /**
   * Serves an Agent Skill (the Skills extension) at `skill://{path}/`: its SKILL.md (YAML
   * frontmatter with `name`, the last segment of `path`, and `description`) and `files` by path
   * within the skill. Throws `TOOLWIRE_REGISTRATION` naming what the spec refuses.
   */
  addSkill(path: string, skillMd: string | Uint8Array, files?: { [path: string]: string | Uint8Array }): this
  /**
   * Serves the skills under the directory `root`: every directory holding a SKILL.md. Call it
   * again to serve what changed (sessions are told); all or nothing. Returns how many skills.
   */
  loadSkills(root: string): number
  /**
   * `loadSkills(root)`, then again whenever its files change (compared every `intervalMs`,
   * default 1000), as long as the server lives. Returns how many skills the first load found.
   */
  watchSkills(root: string, options?: { intervalMs?: number }): number
  /** Stops serving a skill, by its path or its SKILL.md's URI; returns whether it existed. */
  removeSkill(pathOrUri: string): boolean
  /** Declares an extension this server serves (`capabilities.extensions[id] = settings`). */
  declareExtension(id: string, settings?: { [key: string]: unknown }): this
  /**
   * Offers the tools through a search (`search_tools`, BM25F-ranked, and `call_tool`) beside the
   * `pinned` tools, for catalogs too large to list whole; every tool stays callable by name.
   * `null` lists every tool again. Throws when a tool already has one of the two names.
   */
  toolSearch(options?: ToolSearchOptions | null): this
  /**
   * Mounts another server's tools, resources, templates and prompts under `prefix`: a `Server`
   * in this process, a server to spawn over stdio, or a Streamable HTTP server. Names become
   * `${prefix}_${name}`, URIs `scheme://${prefix}/rest`; calls are forwarded with progress,
   * cancellation and the upstream's questions, under this server's middleware and limits; list
   * changes are followed; an upstream that went away is connected again on the next call.
   * Rejects with `TOOLWIRE_TRANSPORT` when it cannot connect.
   */
  mount(prefix: string, upstream: Server | MountCommand | MountUrl, options?: MountOptions): Promise<Mount>
  /**
   * Decides per request who sees which tools, resources, templates and prompts, beyond their
   * `requiredScopes` / `requiredTags`; a hidden item is left out of lists and answers as unknown.
   * A rule that throws hides what it was asked about. Replaces the rule set before.
   */
  visibleWhen(rule: (item: CatalogItem, viewer: Viewer) => boolean | Promise<boolean>): this
  /** What the `visibleWhen` rule decides from changed: sessions check again, `list_changed` where their view changed. */
  visibilityChanged(): void
  /**
   * Serves Streamable HTTP at `http://host:port/mcp`; resolves once listening (the `lifespan`
   * started first, held until the server has stopped). Rejects with what the lifespan threw,
   * `TOOLWIRE_TRANSPORT` (e.g. the port is in use) or `ERR_INVALID_ARG_VALUE` (a refused option).
   */
  serveHttp(host?: string, port?: number, options?: HttpOptions): Promise<HttpServer>
  /**
   * Streamable HTTP for a web server of your own: `app.all('/mcp', server.httpHandler())` in
   * Express, a node:http route, or `handler.fetch(request)`. The Host guard lets only loopback
   * names through unless `allowedHosts` names the app's hosts. The first request starts the
   * `lifespan` and holds it; `handler.close()` (or `close()`) ends its sessions and its hold. Throws a `ToolwireError`
   * (code `ERR_INVALID_ARG_VALUE`) for a refused option.
   */
  httpHandler(options?: HttpHandlerOptions): HttpHandler
}

export type ToolwireErrorCode =
  | 'TOOLWIRE_INPUT_REQUIRED'
  | 'TOOLWIRE_REGISTRATION'
  | 'TOOLWIRE_CAPABILITY'
  | 'TOOLWIRE_CLIENT_ERROR'
  | 'TOOLWIRE_TIMEOUT'
  | 'TOOLWIRE_CLOSED'
  | 'TOOLWIRE_TRANSPORT'
  | 'TOOLWIRE_BUSY'
  | 'TOOLWIRE_LIFESPAN'
  | 'TOOLWIRE_ERROR'
  | 'ABORT_ERR'
  | 'ERR_INVALID_ARG_VALUE'

/** The engine's errors: one class, told apart by `code`. */
export declare class ToolwireError extends Error {
  readonly code: ToolwireErrorCode
  /** The JSON-RPC error code, when the client answered with an error. */
  readonly rpcCode?: number
  readonly data?: unknown
}

export declare function text(value: string): TextContent
export declare function image(data: string | Uint8Array, mimeType: string): ImageContent
export declare function audio(data: string | Uint8Array, mimeType: string): AudioContent
export declare function resourceLink(uri: string, name: string, extra?: Partial<Omit<ResourceLink, 'type' | 'uri' | 'name'>>): ResourceLink
export declare function embeddedResource(resource: EmbeddedResource['resource']): EmbeddedResource
export declare const LOG_LEVELS: readonly LogLevel[]

/** The engine's own log levels, most severe first. */
export type EngineLogLevel = 'error' | 'warn' | 'info' | 'debug' | 'trace'
export declare const ENGINE_LOG_LEVELS: readonly EngineLogLevel[]

/** One of the engine's own log records. */
export interface EngineLogRecord {
  level: EngineLogLevel
  /** The Rust module it comes from, `toolwire::…`. */
  target: string
  message: string
}

/**
 * Routes the engine's own logs (not what tools send the client with `ctx.log`) to `handler`,
 * for `level` ('info' by default) and more severe, on the JS thread, in order; `null` stops.
 * Bounded: a handler that falls behind loses records, and the next one says how many.
 * `DEBUG=toolwire` writes them to stderr.
 */
export declare function onEngineLog(handler: ((record: EngineLogRecord) => void) | null, options?: { level?: EngineLogLevel }): void
