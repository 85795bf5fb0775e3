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
  const request = { method: req.method, target: req.originalUrl ?? req.url, headers: req.rawHeaders, peer: req.socket?.remoteAddress ?? undefined }
  // A body in whole already (a parser read it, as `express.json()` does; or none) is answered in
  // one step, on this thread when it needs no handler of ours.
  if (req.readableEnded) return answerWhole(endpoint, request, parsedBody(req.body), res, next)
  if (req.complete) return answerWhole(endpoint, request, bufferedBody(req), res, next)
  const length = Number(req.headers['content-length'])
  if (!(length <= wholeBodyBytes(endpoint)) || req.headers['transfer-encoding'] !== undefined) {
    return streamRequest(endpoint, request, [], req, res, next)
  }
  // A small body follows its head at once, nearly always: read it whole, within the endpoint's
  // body timeout; past that, it is fed to the engine as it comes, whose own timeout answers 408.
  const chunks = []
  const whole = () => {
    stop()
    answerWhole(endpoint, request, chunks.length === 1 ? chunks[0] : Buffer.concat(chunks), res, next)
  }
  const stalled = () => {
    stop()
    streamRequest(endpoint, request, chunks, req, res, next, timeoutMs)
  }
  const timeoutMs = endpoint.bodyReadTimeoutMs
  const timer = timeoutMs === null || timeoutMs === undefined ? null : setTimeout(stalled, timeoutMs)
  const keep = (chunk) => chunks.push(chunk)
  // The client went away mid-body: nothing to answer.
  const gone = () => stop()
  const stop = () => {
    if (timer !== null) clearTimeout(timer)
    req.off('data', keep).off('end', whole).off('error', gone)
  }
  req.on('data', keep).on('end', whole).on('error', gone)
}

/** The engine's rule (the same for every endpoint), read once rather than crossed for per request. */
let wholeBodyLimit = null
function wholeBodyBytes(endpoint) {
  wholeBodyLimit ??= endpoint.wholeBodyBytes
  return wholeBodyLimit
}

/** One request whose body is whole: answered at once when the engine needs no handler of ours. */
function answerWhole(endpoint, request, body, res, next) {
  const exchange = endpoint.answer(request.method, request.target, request.headers, body.length > 0 ? body : null, request.peer)
  if (!(exchange instanceof native.NativeExchange)) return badRequest(exchange, res)
  const complete = exchange.completeResponse()
  if (complete !== null) {
    res.writeHead(complete.status, complete.headers)
    res.end(complete.body)
    return
  }
  // The client went away before the answer was out: a 2026-07-28 request is cancelled.
  res.on('close', () => {
    if (!res.writableFinished) exchange.close()
  })
  return respond(exchange, res, next)
}

/**
 * One request whose body is fed to the engine as it comes (`read`: the chunks read before, for
 * `waitedMs`, which the engine's body timeout counts).
 */
function streamRequest(endpoint, request, read, req, res, next, waitedMs) {
  const exchange = endpoint.exchange(request.method, request.target, request.headers, request.peer, waitedMs)
  if (!(exchange instanceof native.NativeExchange)) return badRequest(exchange, res)
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
  // Chunks go in order: taken at once while the engine has room, else queued behind the
  // last (the request paused meanwhile); the body ends after the last.
  let sent = Promise.resolve()
  let queued = 0
  const settled = (taken) => {
    if (!taken) reading = false
    if (--queued === 0) req.resume()
  }
  const feed = (chunk) => {
    if (!reading) return // answered already (too large, refused): the rest is dropped
    if (queued === 0) {
      const offered = exchange.trySendBody(chunk)
      if (offered !== null) {
        if (!offered) reading = false
        return
      }
    }
    queued++
    req.pause()
    sent = sent.then(() => (reading ? exchange.sendBody(chunk) : false)).then(settled, () => settled(true))
  }
  for (const chunk of read) feed(chunk)
  if (req.readableEnded) {
    sent.then(endBody)
  } else {
    req.on('data', feed)
    req.on('end', () => sent.then(endBody))
    req.on('error', () => {
      if (reading) {
        reading = false
        exchange.abortBody()
      }
    })
  }
  return respond(exchange, res, next)
}

/** The engine's answer to `res`: whole, or streamed chunk by chunk (SSE). */
async function respond(exchange, res, next) {
  try {
    const head = exchange.readyResponse() ?? (await exchange.response())
    if (head === null || res.destroyed) return // the client hung up first
    res.writeHead(head.status, head.headers)
    if ((head.body ?? null) !== null) {
      res.end(head.body)
      return
    }
    // What of the stream is here already goes with the head: a call's SSE answer often is
    // whole by now, and then no wait is needed.
    let { chunks, ended } = exchange.readyChunks(READY_BYTES)
    while (!ended) {
      if (chunks.length > 0) {
        if (!res.write(chunks)) await drained(res)
      } else {
        // A streamed answer (SSE) starts now, not with its first event.
        res.flushHeaders()
      }
      const chunk = await exchange.nextChunk()
      if (chunk === null) break
      // With what came after it, and the end when it is here.
      const more = exchange.readyChunks(READY_BYTES)
      chunks = more.chunks.length > 0 ? Buffer.concat([chunk, more.chunks]) : chunk
      ended = more.ended
    }
    if (res.destroyed) return
    if (ended) res.end(chunks)
    else res.end()
  } catch (err) {
    exchange.close()
    failed(err, res, next)
  }
}

/** At most this much of a stream's ready chunks is joined into one write. */
const READY_BYTES = 64 * 1024

/** Not a request the engine can read (a bad header or target): 400 naming why. */
function badRequest(described, res) {
  res.writeHead(400, { 'content-type': 'text/plain; charset=utf-8' })
  res.end(described.message)
}

/** The body node:http has parsed in whole and holds for `req`: its buffered chunks, read now. */
function bufferedBody(req) {
  const chunks = []
  for (let chunk = req.read(); chunk !== null; chunk = req.read()) chunks.push(chunk)
  if (chunks.length === 1) return chunks[0]
  return Buffer.concat(chunks)
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
  const target = url.pathname + url.search
  // A small body (its length said) read whole within the endpoint's body timeout, or none:
  // answered in one step, at once when no handler of ours is needed. Otherwise (a large or
  // chunked body) it is fed as it comes; a stalled one is fed once it is there, and the engine's
  // own timeout answers 408 meanwhile. (`arrayBuffer()` and the head, not `body`: Web servers
  // that make Requests lazily, as @hono/node-server does, then need not make one.)
  const length = request.headers.get('content-length')
  let whole
  let stalled = null
  if (length !== null && Number(length) <= wholeBodyBytes(endpoint)) {
    const reading = request.arrayBuffer()
    const got = await within(reading, endpoint.bodyReadTimeoutMs).catch(() => GONE)
    // The client went away mid-body: as a hang-up before the head.
    if (got === GONE) throw request.signal?.reason ?? new DOMException('The client hung up', 'AbortError')
    if (got === STALLED) stalled = reading
    else whole = Buffer.from(got)
  } else if (request.body === null) {
    whole = null
  }
  const exchange =
    whole !== undefined
      ? endpoint.answer(request.method, target, headers, whole !== null && whole.length > 0 ? whole : null, undefined)
      : endpoint.exchange(request.method, target, headers, undefined, stalled !== null ? endpoint.bodyReadTimeoutMs : undefined)
  if (!(exchange instanceof native.NativeExchange)) {
    // Not a request the engine can read (a bad header or target).
    return new Response(exchange.message, { status: 400, headers: { 'content-type': 'text/plain; charset=utf-8' } })
  }
  if (whole !== undefined) {
    const complete = exchange.completeResponse()
    if (complete !== null) return wholeResponse(complete)
  }
  const signal = request.signal
  const hangUp = () => {
    exchange.abortBody()
    exchange.close()
  }
  signal?.addEventListener('abort', hangUp, { once: true })
  const done = () => signal?.removeEventListener('abort', hangUp)
  if (signal?.aborted) hangUp()
  if (stalled !== null) {
    stalled.then(
      (got) => {
        const chunk = Buffer.from(got)
        const offered = chunk.length === 0 || exchange.trySendBody(chunk)
        if (offered === null) exchange.sendBody(chunk).then(() => exchange.endBody(), () => exchange.abortBody())
        else exchange.endBody()
      },
      () => exchange.abortBody(),
    )
  } else if (whole === undefined) {
    const reader = request.body.getReader()
    ;(async () => {
      try {
        for (;;) {
          const { done: ended, value } = await reader.read()
          if (ended) return exchange.endBody()
          const chunk = Buffer.from(value.buffer, value.byteOffset, value.byteLength)
          if (!(exchange.trySendBody(chunk) ?? (await exchange.sendBody(chunk)))) {
            // Answered already (too large, refused): the rest is not read.
            return reader.cancel().catch(() => {})
          }
        }
      } catch {
        exchange.abortBody()
      }
    })()
  }
  const head = exchange.readyResponse() ?? (await exchange.response())
  if (head === null) {
    done()
    throw signal?.reason ?? new DOMException('The client hung up', 'AbortError')
  }
  if ((head.body ?? null) !== null || NULL_BODY_STATUSES.has(head.status)) {
    done()
    exchange.close()
    return wholeResponse(head)
  }
  const responseHeaders = webHeaders(head.headers)
  // A stream that is whole already (a call's SSE answer often is) is a whole body.
  const front = exchange.readyChunks(READY_BYTES)
  if (front.ended) {
    done()
    exchange.close()
    return new Response(front.chunks, { status: head.status, headers: responseHeaders })
  }
  let first = front.chunks.length > 0 ? front.chunks : null
  const body = new ReadableStream(
    {
      async pull(controller) {
        if (first !== null) {
          controller.enqueue(first)
          first = null
          return
        }
        const chunk = await exchange.nextChunk()
        if (chunk === null) {
          done()
          controller.close()
          return
        }
        // With what came after it, and the end when it is here.
        const more = exchange.readyChunks(READY_BYTES)
        controller.enqueue(more.chunks.length > 0 ? Buffer.concat([chunk, more.chunks]) : chunk)
        if (more.ended) {
          done()
          controller.close()
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

/** What `promise` settles to, or STALLED once `timeoutMs` passed first (`null`: no limit). */
async function within(promise, timeoutMs) {
  if (timeoutMs === null || timeoutMs === undefined) return promise
  let timer
  const stalled = new Promise((resolve) => (timer = setTimeout(resolve, timeoutMs, STALLED)))
  try {
    return await Promise.race([promise, stalled])
  } finally {
    clearTimeout(timer)
  }
}

const STALLED = Symbol('stalled')
const GONE = Symbol('gone')

/** A Web `Response` of an answer whose body came whole (a status without one: none). */
function wholeResponse(head) {
  const body = NULL_BODY_STATUSES.has(head.status) ? null : head.body
  return new Response(body, { status: head.status, headers: webHeaders(head.headers) })
}

function webHeaders(rawHeaders) {
  const headers = new Headers()
  for (let i = 0; i < rawHeaders.length; i += 2) headers.append(rawHeaders[i], rawHeaders[i + 1])
  return headers
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
