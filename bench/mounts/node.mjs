// The Node demo's tools (examples/node/demo.mjs) over Streamable HTTP, served by toolwire's own
// listener or mounted in the app's web server: bench/mounts' Node servers.
//
//   node bench/mounts/node.mjs --port P --serve builtin|node-http|express|fetch [--workers N] [--bare]
//
// builtin: `server.serveHttp()`; node-http: `server.httpHandler()` as node:http's request
// listener; express: the same handler at `app.all('/mcp')` of Express 5; fetch: the handler's
// `fetch` under @hono/node-server, a Web Request/Response server. --workers N (> 1) forks N
// processes with node:cluster sharing the port, as production Node deployments do. --bare: no
// toolwire in the web server: a handler answering the load generator's four requests itself
// (bareMcp below), which is what the web server alone costs per request.
import cluster from 'node:cluster'
import http from 'node:http'

import { buildServer } from '../../examples/node/demo.mjs'

const USAGE = 'usage: node.mjs --port P --serve builtin|node-http|express|fetch [--workers N] [--bare]'

function parse(argv) {
  const options = { port: null, serve: null, workers: 1, bare: false }
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--bare') {
      options.bare = true
      continue
    }
    const value = argv[++i]
    if (argv[i - 1] === '--port') options.port = Number.parseInt(value, 10)
    else if (argv[i - 1] === '--serve') options.serve = value
    else if (argv[i - 1] === '--workers') options.workers = Number.parseInt(value, 10)
    else throw new Error(`unknown argument ${JSON.stringify(argv[i - 1])}`)
  }
  if (!Number.isInteger(options.port) || !['builtin', 'node-http', 'express', 'fetch'].includes(options.serve)) {
    throw new Error('--port and --serve are needed')
  }
  if (!Number.isInteger(options.workers) || options.workers < 1) throw new Error('--workers needs a positive number')
  if (options.serve === 'builtin' && (options.workers > 1 || options.bare)) throw new Error('the built-in server runs in one process, with toolwire')
  return options
}

async function serve({ port, serve, bare }) {
  if (serve === 'builtin') {
    await buildServer({ extraTools: 100 }).serveHttp('127.0.0.1', port)
    return
  }
  const handler = bare ? bareHandler() : buildServer({ extraTools: 100 }).httpHandler()
  if (serve === 'node-http') {
    http.createServer(handler).listen(port, '127.0.0.1')
  } else if (serve === 'express') {
    const { default: express } = await import('express')
    const app = express()
    app.all('/mcp', handler)
    app.listen(port, '127.0.0.1')
  } else {
    const { serve: serveFetch } = await import('@hono/node-server')
    serveFetch({ fetch: handler.fetch, port, hostname: '127.0.0.1' })
  }
}

/**
 * The web server's own share: the load generator's four requests (initialize, the initialized
 * notification, an echo call, DELETE) answered by a few lines of JavaScript, no MCP engine. It
 * reads and parses the body as any JSON route does.
 */
function bareMcp(method, body) {
  if (method === 'DELETE') return { status: 200, body: '' }
  const message = JSON.parse(body)
  if (message.id === undefined) return { status: 202, body: '' }
  const result =
    message.method === 'initialize'
      ? { protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: { name: 'bare', version: '1' } }
      : { content: [{ type: 'text', text: message.params.arguments.text }] }
  return { status: 200, body: JSON.stringify({ jsonrpc: '2.0', id: message.id, result }), session: message.method === 'initialize' }
}

let sessions = 0
function bareHandler() {
  const answer = (method, body) => {
    const { status, body: text, session } = bareMcp(method, body)
    const headers = { 'content-type': 'application/json' }
    if (session) headers['mcp-session-id'] = `s${++sessions}`
    return { status, headers, text }
  }
  const handler = (req, res) => {
    const chunks = []
    req.on('data', (chunk) => chunks.push(chunk))
    req.on('end', () => {
      const { status, headers, text } = answer(req.method, Buffer.concat(chunks).toString())
      res.writeHead(status, headers)
      res.end(text)
    })
  }
  handler.fetch = async (request) => {
    const { status, headers, text } = answer(request.method, await request.text())
    return new Response(status === 202 ? null : text, { status, headers })
  }
  return handler
}

let options
try {
  options = parse(process.argv.slice(2))
} catch (err) {
  process.stderr.write(`node.mjs: ${err.message}\n${USAGE}\n`)
  process.exit(2)
}
if (options.workers > 1 && cluster.isPrimary) {
  for (let i = 0; i < options.workers; i++) cluster.fork()
  // A worker that dies ends the run: the load generator sees the failure, not a smaller server.
  cluster.on('exit', (worker, code) => {
    process.stderr.write(`node.mjs: worker ${worker.process.pid} exited (${code})\n`)
    process.exit(1)
  })
  for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => process.exit(0))
} else {
  serve(options).catch((err) => {
    process.stderr.write(`node.mjs: ${err.stack}\n`)
    process.exit(1)
  })
}
