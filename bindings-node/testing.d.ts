// Type definitions for toolwire/testing: an in-memory client for tests.

/**
 * `import { connect } from 'toolwire/testing'`: an in-memory client for tests, speaking to a
 * `Server` in this process through the engine (no transport, no child process).
 *
 * @packageDocumentation
 * @module toolwire/testing
 */
import type { CallToolResult, ContentBlock, Implementation, JsonSchema, PromptArgument, Server, ToolAnnotations } from './index'

type Json = { [key: string]: any }

/** The server answered a request with a JSON-RPC error (`error` is its error object). */
export declare class McpError extends Error {
  readonly error: { code: number; message: string; data?: unknown }
  readonly code: number
  readonly data: unknown
}

export interface Progress {
  progress: number
  total?: number
  message?: string
}

/** Answers a question of the server's (`elicitation/create`, `sampling/createMessage`). */
export type Answer = (params: Json) => Json | Promise<Json>

export interface ConnectOptions {
  /** `'2025-11-25'` (the default: an initialized session) or `'2026-07-28'` (stand-alone requests). */
  protocolVersion?: string
  elicitation?: Answer
  sampling?: Answer
  /** What `roots/list` returns. */
  roots?: { uri: string; name?: string }[]
  capabilities?: Json
  clientInfo?: Implementation
  /** How long a request waits for its answer, in ms (30 000 by default). */
  timeoutMs?: number
}

export interface CallToolOptions {
  onprogress?: (progress: Progress) => void
}

export interface ListedTool {
  name: string
  title?: string
  description?: string
  inputSchema: JsonSchema
  outputSchema?: JsonSchema
  annotations?: ToolAnnotations
  _meta?: Json
  [key: string]: unknown
}

export interface ListedResource {
  uri: string
  name: string
  title?: string
  description?: string
  mimeType?: string
  [key: string]: unknown
}

export interface ListedResourceTemplate {
  uriTemplate: string
  name: string
  title?: string
  description?: string
  mimeType?: string
  [key: string]: unknown
}

export interface ListedPrompt {
  name: string
  title?: string
  description?: string
  arguments?: PromptArgument[]
  [key: string]: unknown
}

export type ResourceContents = { uri: string; mimeType?: string; text: string } | { uri: string; mimeType?: string; blob: string }

export interface GetPromptResult {
  description?: string
  messages: { role: 'user' | 'assistant'; content: ContentBlock }[]
}

export type Reference = { type: 'ref/prompt'; name: string } | { type: 'ref/resource'; uri: string }

export declare class TestClient {
  readonly protocolVersion: string
  readonly modern: boolean
  /** The capabilities declared (those given, plus one per answer given), once connected. */
  readonly capabilities: Json
  readonly clientInfo: Implementation
  /** Notifications received so far (progress ones included), in order; a new array each read. */
  readonly notifications: Json[]
  /** The `initialize` (or, in 2026-07-28, `server/discover`) result. */
  readonly serverInfo: Json
  /** The server's `{ name, version, ... }`, from either era's answer. */
  readonly server: Implementation | Record<string, never>
  /**
   * Sends `method`; resolves to its result, rejects with `McpError` for a JSON-RPC error and with
   * a `ToolwireError` (code `TOOLWIRE_TIMEOUT`) when no answer came within `timeoutMs` (the
   * server is then told the request is cancelled).
   */
  request(method: string, params?: Json, options?: { timeoutMs?: number }): Promise<Json>
  /** Every tool, all pages. */
  listTools(): Promise<ListedTool[]>
  /** The tool's result (an `isError` one too); 2026-07-28 input-required rounds are answered. */
  callTool(name: string, args?: Json, options?: CallToolOptions): Promise<CallToolResult>
  /** The TypeScript SDK's form; the second argument (a result schema there) is not used. */
  callTool(params: { name: string; arguments?: Json }, resultSchema?: unknown, options?: CallToolOptions): Promise<CallToolResult>
  listResources(): Promise<ListedResource[]>
  listResourceTemplates(): Promise<ListedResourceTemplate[]>
  readResource(uri: string | { uri: string }): Promise<{ contents: ResourceContents[] }>
  listPrompts(): Promise<ListedPrompt[]>
  getPrompt(name: string, args?: Record<string, string>): Promise<GetPromptResult>
  getPrompt(params: { name: string; arguments?: Record<string, string> }): Promise<GetPromptResult>
  complete(ref: Reference, argument: string, value: string, context?: Record<string, string>): Promise<{ values: string[]; total?: number; hasMore?: boolean }>
  /**
   * Ends the session once the calls in flight are answered, then `connect`'s hold on the
   * lifespan (the last hold's close resolves after its clean-up).
   */
  close(): Promise<void>
  [Symbol.asyncDispose](): Promise<void>
}

/**
 * A connected `TestClient` for `server` over core's in-memory session. It holds the server's
 * `lifespan` as a serve does: started first (its failure rejects this), let go of at `close()`.
 */
export declare function connect(server: Server, options?: ConnectOptions): Promise<TestClient>

/** A golden wire vector case (tests/vectors/README.md): what it sends, what it expects. */
export interface VectorCase {
  name: string
  description?: string
  /** `'demo'` (the default) or `'conformance'`: the server the case is written for. */
  server?: string
  options?: { pageSize?: number; maxFrameBytes?: number; maxDepth?: number }
  initialize?: string
  clientCapabilities?: Json
  steps: Json[]
}

/**
 * Replays one golden wire vector case on a new session of `server` with core's replayer.
 * `testCase` may be the case's JSON text: as written, an integer beyond 2^53 reaches core
 * exactly. Resolves when the case holds; rejects with an `AssertionError` naming the case and
 * the step that failed.
 */
export declare function replayVector(server: Server, testCase: VectorCase | string): Promise<void>
