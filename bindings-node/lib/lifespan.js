'use strict'
// The server's `lifespan`: the value handlers read, and the user's factory (an async function,
// or an async generator that yields once) as the engine's two hooks (src/lifespan.rs). When
// they run, and which calls wait for them, is core's lifespan gate.

const native = require('./native')
const { fromNative } = require('./errors')

const message = (err) => (err instanceof Error ? err.message : String(err))

class Lifespan {
  /** What handlers see (`lifespanContext`): the factory's value while it runs. */
  value = undefined
  #factory
  #server
  /** Ends an async generator lifespan (its `finally` runs). */
  #end = null
  /** What the last start threw: a serve that waited for it rejects with it. */
  #failure = undefined
  /** `stopped`, `starting`, `running` or `stopping`: where the hooks are. */
  #phase = 'stopped'

  constructor(factory, server) {
    this.#factory = factory
    this.#server = server
  }

  /** Whether the server has a lifespan (without one, nothing holds or waits). */
  get set() {
    return this.#factory !== undefined
  }

  /** Whether it is starting or running (its clean-up has not begun). */
  get running() {
    return this.#phase === 'starting' || this.#phase === 'running'
  }

  /** The hooks for the engine: `[start, stop]`. */
  hooks() {
    return [hook(() => this.#start()), hook(() => this.#stop())]
  }

  /**
   * A hold that could not be had (the native description) as the error to reject with: what
   * the start threw, when that is why.
   */
  failed(description) {
    if (description.code === 'TOOLWIRE_LIFESPAN' && this.#failure !== undefined) return this.#failure
    return fromNative(description)
  }

  async #start() {
    this.#phase = 'starting'
    this.#failure = undefined
    try {
      const made = this.#factory(this.#server)
      if (made !== null && typeof made === 'object' && typeof made.next === 'function' && typeof made.return === 'function') {
        // `async function* lifespan(server) { …set up…; try { yield value } finally { …clean up… } }`
        const step = await made.next()
        if (step.done) throw new TypeError('toolwire: a lifespan generator must yield its value once')
        this.value = step.value
        this.#end = () => made.return(undefined)
      } else {
        this.value = await made
      }
      this.#phase = 'running'
    } catch (err) {
      this.#failure = err
      this.#phase = 'stopped'
      throw err
    }
  }

  async #stop() {
    this.#phase = 'stopping'
    const end = this.#end
    this.#end = null
    try {
      if (end !== null) await end()
    } catch (err) {
      // Nobody awaits the clean-up's outcome (the engine runs it after the last serve): said
      // where a tool's failure is said by default.
      process.stderr.write(`toolwire: the lifespan's clean-up failed: ${err instanceof Error ? err.stack || err.message : String(err)}\n`)
    } finally {
      this.value = undefined
      this.#phase = 'stopped'
    }
  }
}

/**
 * `run` in the engine's calling convention for answers given later (src/settle.rs): called
 * with a token, it returns nothing and calls `settleJson(token, json)` when `run()` settles:
 * `{}`, or `{ error }` with the message of what it threw.
 */
function hook(run) {
  return (token) => {
    Promise.resolve()
      .then(run)
      .then(
        () => '{}',
        (err) => JSON.stringify({ error: message(err) }),
      )
      .then((json) => native.settleJson(token, json))
    return undefined
  }
}

module.exports = { Lifespan }
