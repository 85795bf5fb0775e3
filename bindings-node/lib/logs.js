'use strict'
// The engine's own logs (connections, sessions, limits, failures) to a JS handler, and to
// stderr when `DEBUG` names toolwire: that is decided once, when this module loads.

const native = require('./native')

/** The engine's own log levels (not the client-facing `ctx.log` ones), most severe first. */
const ENGINE_LOG_LEVELS = ['error', 'warn', 'info', 'debug', 'trace']

/**
 * Routes the engine's own logs (connections, sessions, limits, failures: not what tools send
 * the client with `ctx.log`) to `handler({ level, target, message })`, for `level` ('info' by
 * default) and more severe, on the JS thread, in order. `onEngineLog(null)` stops. They go
 * through a bounded queue: if the handler falls behind, records are dropped and the next one
 * says how many. `DEBUG=toolwire` (as the `debug` package reads it) writes them to stderr.
 */
function onEngineLog(handler, options = {}) {
  if (handler === null) {
    native.setEngineLogHandler(null)
    return
  }
  if (typeof handler !== 'function') throw new TypeError('toolwire: onEngineLog(handler, { level }) needs a function (or null)')
  const level = options?.level ?? 'info'
  if (!ENGINE_LOG_LEVELS.includes(level)) {
    throw new TypeError(`toolwire: unknown engine log level ${JSON.stringify(level)} (one of ${ENGINE_LOG_LEVELS.join(', ')})`)
  }
  let reported = false
  native.setEngineLogHandler((records) => {
    for (const record of records) {
      try {
        handler(record)
      } catch (err) {
        // A throw here would end the process from a log line: say it once, keep going.
        if (!reported) process.stderr.write(`toolwire: the engine log handler threw: ${err instanceof Error ? err.stack : String(err)}\n`)
        reported = true
      }
    }
  }, level)
}

/** Whether a `DEBUG` list (`debug`'s syntax: names, `*` wildcards, `-name` to exclude) names `name`. */
function debugNames(spec, name) {
  let on = false
  for (const item of (spec ?? '').split(/[\s,]+/).filter(Boolean)) {
    const negated = item.startsWith('-')
    const pattern = new RegExp(`^${(negated ? item.slice(1) : item).replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`)
    if (pattern.test(name)) {
      if (negated) return false
      on = true
    }
  }
  return on
}

if (debugNames(process.env.DEBUG, 'toolwire')) {
  onEngineLog((record) => process.stderr.write(`toolwire ${record.level.toUpperCase()} ${record.target}: ${record.message}\n`), { level: 'debug' })
}

module.exports = { ENGINE_LOG_LEVELS, onEngineLog }
