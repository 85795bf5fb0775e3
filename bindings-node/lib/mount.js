'use strict'
// Streamable HTTP inside a web server of the application's (`server.httpHandler()`): the
// handler for node:http and Express, its `fetch` for Web `Request` → `Response` frameworks, and
// how each carries a request to the engine's endpoint and the answer back (src/mount.rs is the
// engine's side).

const native = require('./native')

/**
 * The handler `server.httpHandler()` returns. `create()` makes the engine's endpoint; `mounts`
 * is the server's set of handlers that served a request and were not closed since; `hold()`
 * holds the server's lifespan (a Promise of `{ release() }`), from the first request until
 * close().
 */
function mountedHandler(create, mounts, hold) {
  // Options are checked now; the endpoint is made again after close().
  let endpoint = create()
  // The hold on the lifespan (a Promise of it) since the first request.
  let held = null
  const mount = {
    /**
     * Ends the endpoint's sessions (calls in flight finish), then its hold on the lifespan
     * (the last hold's clean-up has run when this resolves); the next request starts afresh.
     */
    async shutdown() {
      mounts.delete(mount)
      const ending = endpoint
      const holding = held
      endpoint = held = null
      if (ending !== null) await ending.shutdown()
      if (holding !== null) await holding.then((h) => h.release(), () => {})
    },
  }
  // A close() under way: requests wait for it, then start afresh.
  let closing = null
  const ready = async () => {
    while (closing !== null) await closing
    endpoint ??= create()
    const serving = endpoint
    mounts.add(mount)
    const holding = (held ??= hold())
    try {
      await holding
    } catch (err) {
      // Not started: the next request tries again.
      if (held === holding) held = null
      throw err
    }
    return serving
  }
  const handler = (req, res, next) => serveNode(ready, req, res, next)
  handler.fetch = (request) => serveFetch(ready, request)
  handler.close = async () => {
    while (closing !== null) await closing
    const ending = mount.shutdown()
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
    // The last chunk handed over: the body ends after it. A body already in whole when the
    // handler reads it (the lifespan started first) ends while its chunk is being handed.
    let sent = Promise.resolve()
    req.on('data', (chunk) => {
      if (!reading) return // answered already (too large, refused): the rest is dropped
      req.pause()
      sent = exchange.sendBody(chunk).then(
        (taken) => {
          if (!taken) reading = false
          req.resume()
        },
        () => req.resume(),
      )
    })
    req.on('end', () => sent.then(endBody))
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

module.exports = { mountedHandler }
