'use strict'
// The server's `lifespan`: what it starts before serving and ends on close(), and how handlers
// wait for it.

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

/** `handle(request, call)`, once the lifespan has started (a Promise until then). */
function afterLifespan(lifespan, handle) {
  return (request, call) =>
    lifespan.pending === null
      ? handle(request, call)
      : lifespan.pending.then(() => handle(request, call), (err) => Promise.reject(lifespanFailure(err)))
}

module.exports = { Lifespan, lifespanFailure, afterLifespan }
