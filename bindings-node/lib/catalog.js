'use strict'
// Resources, prompts and completions: what `server.resource()`, `prompt()` and `completion()`
// register, made here (the definition as the engine reads it, the handler in the engine's
// calling convention, settle.js); the Server hands them to the engine.

const native = require('./native')
const { ProtocolError } = require('./errors')
const { compilePromptArguments, pointer } = require('./schema')
const { InputRequired, returned } = require('./content')
const { RequestContext } = require('./context')
const { hasThen, jsonWrapper } = require('./settle')

const PROMPT_CONFIG_KEYS = new Set(['title', 'description', 'arguments', 'argsSchema', '_meta', 'requiredScopes', 'requiredTags'])

/**
 * Who may see it (`requiredScopes`, `requiredTags`: arrays of strings), copied into the
 * definition, where the engine checks them on each request.
 */
function copyRequirements(config, definition, what) {
  for (const key of ['requiredScopes', 'requiredTags']) {
    const given = config[key]
    if (given === undefined) continue
    if (!Array.isArray(given) || !given.every((s) => typeof s === 'string')) {
      throw new TypeError(`toolwire: ${what}: ${key} must be an array of strings`)
    }
    definition[key] = given
  }
}

/**
 * `server.visibleWhen(rule)`: `rule(item, viewer)` (sync or async) asked for each item of a
 * request, as the engine's `{ viewer, items }` → `{ visible }` call.
 */
function visibilityWrapper(rule) {
  if (typeof rule !== 'function') throw new TypeError('toolwire: visibleWhen(rule) needs a function (item, viewer) => boolean')
  return jsonWrapper(
    (request) => {
      const verdicts = request.items.map((item) => rule(item, request.viewer))
      return verdicts.some(hasThen) ? Promise.all(verdicts) : verdicts
    },
    (verdicts) => ({ visible: verdicts.map((shown) => shown === true) }),
  )
}

/** A resource's or prompt's value as the engine's answer: a 2026-07-28 round, or what it returned. */
const answer = (value) => (value instanceof InputRequired ? { inputRequired: value.toJSON() } : { returned: returned(value) })

/**
 * A resource read's, prompt's or completion's context: a tool's (progress, log, signal,
 * client info, the lifespan's value), whose 2026-07-28 round is the request's.
 */
function requestContext(lifespan, request, call) {
  return new RequestContext(call, lifespan, request)
}

/** `server.resource(uri, config?, handler)`: `{ definition, template, wrapper }`. */
function resourceEntry(uri, config, handler, lifespan) {
  if (typeof config === 'function' && handler === undefined) {
    handler = config
    config = {}
  }
  if (typeof uri !== 'string') throw new TypeError('toolwire: a resource needs a string uri')
  if (typeof handler !== 'function') throw new TypeError(`toolwire: resource ${JSON.stringify(uri)} needs a handler function`)
  config = config ?? {}
  const template = uri.includes('{')
  const definition = { [template ? 'uriTemplate' : 'uri']: uri, name: config.name ?? uri }
  for (const key of ['title', 'description', 'mimeType', 'annotations', '_meta']) {
    if (config[key] !== undefined) definition[key] = config[key]
  }
  copyRequirements(config, definition, `resource ${JSON.stringify(uri)}`)
  const wrapper = jsonWrapper((request, call) => handler(request.uri, request.variables, requestContext(lifespan, request, call)), answer)
  return { definition, template, wrapper }
}

/**
 * `server.prompt(name, config?, handler)`: `{ definition, wrapper, complete }`, `complete` the
 * completer of its `completable()` and enum arguments (null without any).
 */
function promptEntry(name, config, handler, lifespan) {
  if (typeof config === 'function' && handler === undefined) {
    handler = config
    config = {}
  }
  if (typeof name !== 'string') throw new TypeError('toolwire: a prompt needs a string name')
  if (typeof handler !== 'function') throw new TypeError(`toolwire: prompt ${JSON.stringify(name)} needs a handler function`)
  config = config ?? {}
  for (const key of Object.keys(config)) {
    if (!PROMPT_CONFIG_KEYS.has(key)) throw new TypeError(`toolwire: unknown prompt option ${JSON.stringify(key)} for prompt ${JSON.stringify(name)}`)
  }
  if (config.argsSchema !== undefined && config.arguments !== undefined) {
    throw new TypeError(`toolwire: prompt ${JSON.stringify(name)}: give argsSchema or arguments, not both`)
  }
  const args =
    config.argsSchema === undefined
      ? { list: (config.arguments ?? []).map((a) => ({ required: false, ...a })), parse: null, completers: {} }
      : compilePromptArguments(name, config.argsSchema)
  const definition = { name, arguments: args.list }
  if (args.argumentsSchema !== undefined) definition.argumentsSchema = args.argumentsSchema
  for (const key of ['title', 'description', '_meta']) {
    if (config[key] !== undefined) definition[key] = config[key]
  }
  copyRequirements(config, definition, `prompt ${JSON.stringify(name)}`)
  const render = (request, call) => handler(request.arguments, requestContext(lifespan, request, call))
  const parsing = (request, call) => {
    const refused = (issues) =>
      new ProtocolError(-32602, native.invalidPromptArgumentsText(name, issues.map((issue) => ({ path: pointer(issue.path), message: issue.message }))))
    const take = (parsed) => {
      if (parsed.issues) throw refused(parsed.issues)
      return handler(parsed.data, requestContext(lifespan, request, call))
    }
    const parsed = args.parse(request.arguments)
    return hasThen(parsed) ? parsed.then(take) : take(parsed)
  }
  const wrapper = jsonWrapper(args.parse === null ? render : parsing, answer)
  const completers = Object.entries(args.completers).filter(([, complete]) => complete !== null)
  let complete = null
  if (completers.length > 0) {
    const byArgument = new Map(completers)
    complete = (argument, value, context) => {
      const completer = byArgument.get(argument)
      return completer ? completer(value, { arguments: context }) : []
    }
  }
  return { definition, wrapper, complete }
}

/** `server.completion(target, complete)`: `{ kind, key, wrapper }` for the engine's `setCompleter`. */
function completionEntry(target, complete, lifespan) {
  const kind = target?.prompt !== undefined ? 'prompt' : target?.template !== undefined ? 'template' : null
  if (kind === null) throw new TypeError('toolwire: completion({ prompt } or { template }, complete)')
  if (typeof complete !== 'function') throw new TypeError('toolwire: completion needs a function')
  const wrapper = jsonWrapper(
    (request, call) => complete(request.argument, request.value, request.context, requestContext(lifespan, request, call)),
    (values) => ({ values: Array.from(values ?? [], String) }),
  )
  return { kind, key: kind === 'prompt' ? target.prompt : target.template, wrapper }
}

module.exports = { resourceEntry, promptEntry, completionEntry, copyRequirements, visibilityWrapper }
