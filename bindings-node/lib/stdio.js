'use strict'
// Serving stdio from JavaScript: stdout kept for the protocol while serving, and the path where
// Node's stream objects carry the bytes (a terminal or a file; pipes and sockets are the
// engine's own). Server.serveStdio() uses both.

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

// A terminal or a file: Node's stream objects carry the bytes; `stdio` holds core's claim on
// stdin until reading ends.
function serveStdioStreams(stdio, connection, write, restore, serving) {
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

module.exports = { redirectStdout, serveStdioStreams }
