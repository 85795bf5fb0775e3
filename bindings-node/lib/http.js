'use strict'
// Streamable HTTP served by the engine's own listener (`server.serveHttp()`): the running
// server's handle, and a token validator in the engine's calling convention (which a mounted
// endpoint, mount.js, takes too).

const { jsonWrapper } = require('./settle')

/** `tokenValidator(token)` (sync or async) as the engine calls it; undefined without one. */
function validatorWrapper(tokenValidator) {
  return typeof tokenValidator === 'function'
    ? jsonWrapper(
        (request) => tokenValidator(request.token),
        (verdict) => verdict ?? null,
      )
    : undefined
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

module.exports = { HttpServer, validatorWrapper }
