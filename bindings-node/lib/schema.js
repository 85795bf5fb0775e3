'use strict'
// Tool schemas: JSON Schema objects pass through; zod schemas (zod 3 or 4, a z.object or a raw
// shape such as `{ text: z.string() }`) become JSON Schema once, at registration, and parse
// the validated arguments of each call (so defaults and transforms apply).

const isZod3 = (value) => value !== null && typeof value === 'object' && typeof value._def === 'object' && typeof value.safeParse === 'function' && !('_zod' in value)
const isZod4 = (value) => value !== null && typeof value === 'object' && typeof value._zod === 'object'
const isZod = (value) => isZod3(value) || isZod4(value)

/** `{ text: z.string() }`: a plain object whose values are all zod schemas. */
function isRawShape(value) {
  if (value === null || typeof value !== 'object' || Array.isArray(value) || isZod(value)) return false
  const values = Object.values(value)
  return values.length > 0 && values.every(isZod)
}

function zod4ToJson(schema, io) {
  if (typeof schema.toJSONSchema === 'function') {
    return schema.toJSONSchema({ io, unrepresentable: 'any' })
  }
  // zod/mini schemas have no method; the core package has the function.
  const core = require('zod/v4/core')
  return core.toJSONSchema(schema, { io, unrepresentable: 'any' })
}

// zod 4 marks a field that may be missing on input ('optional' or, with a default,
// 'defaulted') and one that may be missing on output.
function zod4IsOptional(schema, io) {
  return (io === 'input' ? schema._zod.optin : schema._zod.optout) !== undefined
}

// zod 3 has no JSON Schema export of its own: this covers the types tool arguments use.
function zod3ToJson(schema, io) {
  const def = schema._def
  let out
  switch (def.typeName) {
    case 'ZodString': {
      out = { type: 'string' }
      for (const check of def.checks || []) {
        if (check.kind === 'min') out.minLength = check.value
        else if (check.kind === 'max') out.maxLength = check.value
        else if (check.kind === 'length') out.minLength = out.maxLength = check.value
        else if (check.kind === 'regex') out.pattern = check.regex.source
        else if (['email', 'url', 'uuid', 'datetime', 'date', 'time', 'ipv4', 'ipv6'].includes(check.kind)) {
          out.format = { url: 'uri', datetime: 'date-time' }[check.kind] || check.kind
        }
      }
      break
    }
    case 'ZodNumber': {
      out = { type: (def.checks || []).some((c) => c.kind === 'int') ? 'integer' : 'number' }
      for (const check of def.checks || []) {
        if (check.kind === 'min') out[check.inclusive ? 'minimum' : 'exclusiveMinimum'] = check.value
        else if (check.kind === 'max') out[check.inclusive ? 'maximum' : 'exclusiveMaximum'] = check.value
        else if (check.kind === 'multipleOf') out.multipleOf = check.value
      }
      break
    }
    case 'ZodBigInt': out = { type: 'integer' }; break
    case 'ZodBoolean': out = { type: 'boolean' }; break
    case 'ZodNull': out = { type: 'null' }; break
    case 'ZodAny': case 'ZodUnknown': out = {}; break
    case 'ZodDate': out = { type: 'string', format: 'date-time' }; break
    case 'ZodLiteral': out = { const: def.value }; break
    case 'ZodEnum': out = { type: 'string', enum: [...def.values] }; break
    case 'ZodNativeEnum': {
      const values = Object.entries(def.values).filter(([key]) => Number.isNaN(Number(key))).map(([, v]) => v)
      out = { enum: values }
      break
    }
    case 'ZodArray': {
      out = { type: 'array', items: zod3ToJson(def.type, io) }
      if (def.minLength) out.minItems = def.minLength.value
      if (def.maxLength) out.maxItems = def.maxLength.value
      if (def.exactLength) out.minItems = out.maxItems = def.exactLength.value
      break
    }
    case 'ZodTuple':
      out = { type: 'array', prefixItems: def.items.map((item) => zod3ToJson(item, io)) }
      if (!def.rest) { out.minItems = out.maxItems = def.items.length } else { out.items = zod3ToJson(def.rest, io) }
      break
    case 'ZodObject': {
      const shape = typeof def.shape === 'function' ? def.shape() : def.shape
      out = shapeToJson(shape, io, zod3ToJson, (field) => field.isOptional())
      if (def.unknownKeys === 'strict') out.additionalProperties = false
      else if (def.catchall && def.catchall._def.typeName !== 'ZodNever') out.additionalProperties = zod3ToJson(def.catchall, io)
      break
    }
    case 'ZodRecord': out = { type: 'object', additionalProperties: zod3ToJson(def.valueType, io) }; break
    case 'ZodOptional': out = zod3ToJson(def.innerType, io); break
    case 'ZodNullable': out = { anyOf: [zod3ToJson(def.innerType, io), { type: 'null' }] }; break
    case 'ZodDefault': out = { ...zod3ToJson(def.innerType, io), default: def.defaultValue() }; break
    case 'ZodCatch': case 'ZodReadonly': case 'ZodBranded':
      out = zod3ToJson(def.innerType || def.type, io); break
    case 'ZodUnion': case 'ZodDiscriminatedUnion':
      out = { anyOf: [...(def.options.values ? def.options.values() : def.options)].map((o) => zod3ToJson(o, io)) }; break
    case 'ZodIntersection': out = { allOf: [zod3ToJson(def.left, io), zod3ToJson(def.right, io)] }; break
    case 'ZodEffects': out = zod3ToJson(def.schema, io); break
    case 'ZodPipeline': out = zod3ToJson(io === 'input' ? def.in : def.out, io); break
    case 'ZodLazy': out = zod3ToJson(def.getter(), io); break
    default:
      throw new TypeError(`toolwire: zod type ${def.typeName} has no JSON Schema form; give the tool a JSON Schema instead`)
  }
  if (def.description && out.description === undefined) out.description = def.description
  return out
}

function shapeToJson(shape, io, convert, isOptional) {
  const properties = {}
  const required = []
  for (const [key, field] of Object.entries(shape)) {
    properties[key] = convert(field, io)
    if (!isOptional(field)) required.push(key)
  }
  const out = { type: 'object', properties }
  if (required.length > 0) out.required = required
  return out
}

function zodToJson(schema, io) {
  const json = isZod4(schema) ? zod4ToJson(schema, io) : zod3ToJson(schema, io)
  // Both dialects default to 2020-12 in the engine; the marker only adds bytes to tools/list.
  if (json.$schema === 'https://json-schema.org/draft/2020-12/schema') delete json.$schema
  return json
}

/**
 * A tool schema as `{ json, parse }`: `json` for the engine, `parse(args)` (or `null` when
 * the schema is plain JSON Schema) giving `{ data }` or `{ issues }`, maybe as a Promise.
 */
function compileSchema(schema, io, where) {
  if (schema === undefined || schema === null) return { json: undefined, parse: null }
  if (isZod(schema)) {
    return { json: zodToJson(schema, io), parse: (value) => parseWith(schema, value) }
  }
  if (isRawShape(schema)) {
    const isOptional = (field) => (isZod4(field) ? zod4IsOptional(field, io) : field.isOptional())
    const json = shapeToJson(schema, io, zodToJson, isOptional)
    return { json, parse: (value) => parseShape(schema, value) }
  }
  if (typeof schema !== 'object' || Array.isArray(schema)) {
    throw new TypeError(`toolwire: ${where} must be a JSON Schema object, a zod schema or a zod raw shape`)
  }
  return { json: schema, parse: null }
}

/** A zod issue path as a JSON Pointer (`""` is the root). */
function pointer(path) {
  return (path || []).map((key) => '/' + String(key).replace(/~/g, '~0').replace(/\//g, '~1')).join('')
}

function parseWith(schema, value) {
  let result
  try {
    result = schema.safeParse(value)
  } catch {
    // An async refinement or transform: only safeParseAsync can run it.
    return schema.safeParseAsync(value).then(settled)
  }
  return settled(result)
}

function settled(result) {
  return result.success ? { data: result.data } : { issues: result.error.issues }
}

function parseShape(shape, value) {
  const data = {}
  const issues = []
  const pending = []
  for (const [key, field] of Object.entries(shape)) {
    const take = (outcome) => {
      if (outcome.issues) {
        for (const issue of outcome.issues) issues.push({ ...issue, path: [key, ...(issue.path || [])] })
      } else if (outcome.data !== undefined || key in value) {
        data[key] = outcome.data
      }
    }
    const outcome = parseWith(field, value[key])
    if (typeof outcome.then === 'function') pending.push(outcome.then(take))
    else take(outcome)
  }
  const finish = () => (issues.length ? { issues } : { data })
  return pending.length ? Promise.all(pending).then(finish) : finish()
}

// completable(schema, complete): the completer of a prompt argument, kept beside the user's
// schema rather than on it (their schema object stays as they made it).
const COMPLETERS = new WeakMap()

function completable(schema, complete) {
  if (!isZod(schema)) throw new TypeError('toolwire: completable(schema, complete) needs a zod schema')
  if (typeof complete !== 'function') throw new TypeError('toolwire: completable(schema, complete) needs a function')
  COMPLETERS.set(schema, complete)
  // zod 4's .describe()/.meta() make a clone sharing the definition: it stays completable.
  if (isZod4(schema)) COMPLETERS.set(schema._zod.def, complete)
  return schema
}

/** The completer of `field`, also through `.optional()`, `.default()` and the like. */
function completerOf(field) {
  for (let schema = field, depth = 0; schema && depth < 16; depth++) {
    const def = isZod4(schema) ? schema._zod.def : schema._def
    const complete = COMPLETERS.get(schema) ?? (def && COMPLETERS.get(def))
    if (complete) return complete
    schema = def && (def.innerType || def.schema || def.in)
  }
  return null
}

/** A zod object's shape (zod 3 or 4), or null for any other zod schema. */
function zodObjectShape(schema) {
  if (isZod4(schema)) return schema._zod.def.type === 'object' ? schema._zod.def.shape : null
  if (schema._def.typeName !== 'ZodObject') return null
  return typeof schema._def.shape === 'function' ? schema._def.shape() : schema._def.shape
}

/**
 * A prompt's `argsSchema` (a zod raw shape, a zod object, or a JSON Schema object whose
 * properties are strings) as `{ list, parse, completers, argumentsSchema? }`: the `arguments`
 * the prompt declares; for zod, `parse(args)` giving `{ data }` or `{ issues }` (maybe as a
 * Promise) and the completers by argument (from `completable()`, else from an `enum`); for
 * JSON Schema, the schema the engine checks and completes from (`parse` is null).
 */
function compilePromptArguments(prompt, schema) {
  const where = `toolwire: prompt ${JSON.stringify(prompt)}`
  const shape = isRawShape(schema) ? schema : isZod(schema) ? zodObjectShape(schema) : null
  if (isZod(schema) && shape === null) throw new TypeError(`${where}: argsSchema must be a zod object or a zod raw shape`)
  const list = []
  const completers = {}
  if (shape !== null) {
    for (const [name, field] of Object.entries(shape)) {
      const json = zodToJson(field, 'input')
      const optional = isZod4(field) ? zod4IsOptional(field, 'input') : field.isOptional()
      list.push(promptArgument(name, json, !optional))
      completers[name] = completerOf(field) ?? enumCompleter(json)
    }
    const parse = isRawShape(schema) ? (args) => parseShape(schema, args) : (args) => parseWith(schema, args)
    return { list, parse, completers }
  }
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema) || (schema.type !== undefined && schema.type !== 'object')) {
    throw new TypeError(`${where}: argsSchema must be a zod raw shape, a zod object, or a JSON Schema of type "object"`)
  }
  // The engine checks these arguments against the schema (as it checks a tool's) and
  // completes an argument's enum: only the list is made here.
  const required = new Set(Array.isArray(schema.required) ? schema.required : [])
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    if (property?.type !== undefined && property.type !== 'string') {
      throw new TypeError(`${where}: argument ${JSON.stringify(name)}: prompt arguments are strings, not ${JSON.stringify(property.type)}`)
    }
    list.push(promptArgument(name, property ?? {}, required.has(name)))
  }
  return { list, parse: null, completers: {}, argumentsSchema: { type: 'object', ...schema } }
}

function promptArgument(name, json, required) {
  const argument = { name, required }
  if (typeof json.title === 'string') argument.title = json.title
  if (typeof json.description === 'string') argument.description = json.description
  return argument
}

/** Completion from an `enum` of strings: the values that start with what was typed. */
function enumCompleter(json) {
  if (!Array.isArray(json.enum)) return null
  const values = json.enum.filter((value) => typeof value === 'string')
  return (typed) => values.filter((value) => value.startsWith(typed))
}

module.exports = { compileSchema, compilePromptArguments, completable, isZod, pointer }
