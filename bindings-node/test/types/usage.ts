// Type tests: `tsc -p test/types` must accept this file; the @ts-expect-error lines must fail.
import { createServer } from 'node:http'

import { z } from 'zod'
import { z as z3 } from 'zod3'

import { ProtocolError, Server, ToolError, ToolwireError, completable, image, text, type CallToolResult, type Context, type Mount, type Metrics, type Outcome, type RequestInfo } from 'toolwire'
import { McpError, connect, replayVector } from 'toolwire/testing'

const server = new Server({ name: 'typed', version: '1.0.0', instructions: 'Types only.' })

// zod 4 raw shape: args are inferred, optional keys stay optional.
server.tool('greet', { inputSchema: { name: z.string(), times: z.number().optional() } }, ({ name, times }) => {
  const n: string = name
  const t: number | undefined = times
  // @ts-expect-error `name` is a string
  const wrong: number = name
  return `${n} ${t ?? 1} ${wrong}`
})

// zod 4 object with an output schema: the structured return is checked.
server.tool(
  'stats',
  { inputSchema: z.object({ values: z.array(z.number()) }), outputSchema: z.object({ mean: z.number() }) },
  async ({ values }, ctx: Context) => {
    ctx.progress(1, 2, 'half way')
    ctx.log('info', { count: values.length })
    if (ctx.signal.aborted) return { content: [text('aborted')], isError: true }
    const stopped: boolean = ctx.isCancelled
    const wants: boolean = ctx.wantsProgress
    const waiting: Promise<void> = ctx.cancelled()
    void [stopped, wants, waiting]
    // The old boolean reads as a function now: TypeScript refuses it as a condition (TS2774).
    // @ts-expect-error use ctx.isCancelled
    if (ctx.cancelled) return 'stale check'
    return { mean: values.reduce((a, b) => a + b, 0) / values.length }
  },
)

// zod 3 works the same way.
server.tool('old', { inputSchema: z3.object({ flag: z3.boolean() }) }, ({ flag }) => {
  const f: boolean = flag
  return String(f)
})

// Plain JSON Schema: arguments are an open record.
server.tool('raw', { inputSchema: { type: 'object', properties: { q: { type: 'string' } } } }, (args) => String(args.q))

// No config at all, and content blocks.
server.tool('picture', (): CallToolResult => ({ content: [image(new Uint8Array([1]), 'image/png')] }))

// The back-channel and errors.
server.tool('ask', async (_args, ctx) => {
  try {
    const answer = await ctx.elicit({ message: 'Name?', requestedSchema: { type: 'object' } }, { timeoutMs: 1000 })
    return String(answer.action)
  } catch (err) {
    if (err instanceof ToolwireError && err.code === 'TOOLWIRE_CAPABILITY') return 'no elicitation'
    throw err
  }
})

// @ts-expect-error an unknown log level
server.tool('badlevel', (_args, ctx) => ctx.log('loud', 'x'))

// @ts-expect-error timeoutMs is a number
server.tool('badopt', { timeoutMs: 'soon' }, () => 'x')

const done: Promise<void> = server.serveStdio()
void done
const closed: Promise<void> = server.close()
void closed

// Bring your own channel: handleFrame in, the callback out.
const conn = server.connect((message: string) => void message)
conn.handleFrame('{"jsonrpc":"2.0","id":1,"method":"ping"}')
// @ts-expect-error `receive` is now `handleFrame`
conn.receive('{}')

// Any JSON value may be returned when there is no output schema.
server.tool('numbers', () => [1, 2, 3])
server.tool('roots', async (_args, ctx) => (await ctx.listRoots({ timeoutMs: 100 })).map((root) => root.uri))
server.tool('long', { taskSupport: 'optional' }, async () => 'done')
server.tool('strict', { taskSupport: 'required' }, () => {
  throw new ProtocolError(-32603, 'failed')
})
server.tool('both', async (_args, ctx) => {
  const [answer, roots] = await ctx.askAll([['elicitation/create', { message: 'Sure?' }], ['roots/list', {}]])
  return `${String(answer.action)} ${String(roots.roots.length)}`
})
const names: string[] = server.toolNames
const metrics: Metrics = server.metrics()
const echoCalls: number = metrics.tools['echo']?.calls ?? metrics.methods['tools/call'].latency.count
const prometheus: string = server.metricsText()
void names
void echoCalls
void prometheus

// Resources, prompts, completion and HTTP.
server.resource('memo://{day}', { mimeType: 'text/plain' }, (uri, { day }) => `notes of ${day} at ${uri}`)
server.resource('memo://logo', async () => new Uint8Array([1, 2, 3]))
server.prompt('greet', { arguments: [{ name: 'name', required: true }] }, ({ name }) => [`Hello ${name}`, { role: 'assistant', content: 'Hi' }])
server.completion({ prompt: 'greet' }, (_argument, value) => ['ada', 'alan'].filter((n) => n.startsWith(value)))
// @ts-expect-error a completion target names a prompt or a template
server.completion({ tool: 'x' }, () => [])
async function serveOverHttp(): Promise<string> {
  const http = await server.serveHttp('127.0.0.1', 0, { stateless: true, tokenValidator: (token) => (token === 'ok' ? { subject: 'me' } : null) })
  await http.close()
  return http.url
}
void serveOverHttp

// Mounted in an app of your own: node:http (or Express), and Web Request → Response.
const mcp = server.httpHandler({ allowedHosts: ['mcp.example.com'], responseMode: 'sse' })
const plain = createServer((req, res) => {
  void mcp(req, res)
})
async function viaFetch(): Promise<Response> {
  const response: Response = await mcp.fetch(new Request('http://localhost/mcp', { method: 'POST', body: '{}' }))
  await mcp.close()
  return response
}
void [plain, viaFetch]
// @ts-expect-error the app's own server listens: no port
server.httpHandler({ port: 8000 })

// Prompt arguments from a zod shape are typed; completable() keeps the schema's type.
server.prompt(
  'review',
  { argsSchema: { code: z.string(), language: completable(z.string(), (value) => ['rust'].filter((l) => l.startsWith(value))).optional() } },
  ({ code, language }) => {
    const c: string = code
    const l: string | undefined = language
    // @ts-expect-error `code` is a string
    const wrong: number = code
    return `${c} ${l ?? ''} ${wrong}`
  },
)
server.prompt('plainArgs', { argsSchema: { type: 'object', properties: { city: { type: 'string' } } } }, (args) => args.city ?? '')

// The test client.
async function testClient(): Promise<void> {
  const client = await connect(server, { protocolVersion: '2026-07-28', elicitation: async () => ({ action: 'decline' }) })
  const tools = await client.listTools()
  const result = await client.callTool('greet', { name: 'Ada' }, { onprogress: ({ progress, total }) => void [progress, total] })
  const prompt = await client.getPrompt({ name: 'review', arguments: { code: 'x' } })
  const completion = await client.complete({ type: 'ref/prompt', name: 'review' }, 'language', 'r')
  const values: string[] = completion.values
  void [tools, result, prompt, values]
  try {
    await client.request('tools/call', { name: 'nope' })
  } catch (err) {
    if (err instanceof McpError) void err.code
  }
  await client.close()
  await replayVector(server, { name: 'ping', initialize: '2025-11-25', steps: [{ send: { jsonrpc: '2.0', id: 1, method: 'ping' } }] })
  await replayVector(server, '{"name": "as text", "steps": []}')
  // @ts-expect-error a case has steps
  await replayVector(server, { name: 'no steps' })
}
void testClient

// A lifespan: an async generator (clean-up in finally) or an async function; handlers read its value.
const pooled = new Server({
  name: 'pooled',
  version: '1',
  async *lifespan() {
    const pool = { end: async () => undefined }
    try {
      yield pool
    } finally {
      await pool.end()
    }
  },
})
pooled.tool('q', (_args, ctx) => String(ctx.lifespanContext))
pooled.resource('db://x', (_uri, _vars, round) => String(round.lifespanContext))
const started: Promise<void> = pooled.start()
void started
new Server({ name: 'plain', version: '1', lifespan: async () => ({ region: 'eu' }) })

// A replica: tasks and changes shared through Redis, the same requestState keys on each.
const replica = (): Server =>
  new Server({ name: 'replica', version: '1', redis: 'redis://127.0.0.1:6379/0', requestStateKeys: ['k'.repeat(32)] })
void replica

// Middleware: the request and the outcome are typed; refusals are ProtocolError / ToolError.
server.middleware(async (request, next) => {
  const method: string = request.method
  const principal: string | undefined = request.principal
  if (principal === undefined && method === 'tools/call') throw new ToolError('sign in first')
  if (request.name === 'secret') throw new ProtocolError(-32001, 'Forbidden')
  const outcome: Outcome = await next()
  const ms: number = outcome.elapsedMs
  // @ts-expect-error not an outcome kind
  const wrongKind: typeof outcome.kind = 'done'
  void [ms, wrongKind, outcome.code]
})
const audit = (request: RequestInfo, outcome: Outcome): string => `${request.sequence} ${request.requestId} ${outcome.kind}`
void audit
// @ts-expect-error a middleware is a function
server.middleware('audit')

// Mounting: a Server, a command to spawn or a URL; the Mount it resolves to.
const gateway = new Server({ name: 'gateway', version: '1' })
const mounted: Promise<Mount> = gateway.mount('weather', server)
void gateway.mount('files', { command: 'python', args: ['files.py'], env: { ROOT: '/srv' }, protocolVersion: '2025-11-25' })
void gateway.mount('search', { url: 'http://127.0.0.1:9000/mcp', headers: { Authorization: 'Bearer t' } }, { protocolVersion: '2025-11-25' })
void mounted.then(async (mount) => {
  const names: string[] = mount.registered()
  const prefix: string = mount.prefix
  await mount.refresh()
  await mount.unmount()
  void [names, prefix]
})
// @ts-expect-error a command line is not an upstream
void gateway.mount('x', 'python files.py')
