'use strict'
// The JavaScript API of toolwire: Server, Context, content helpers, ToolwireError.
// Protocol work happens in the engine (src/, core/); this layer converts values.
//
// Only re-exports: the API is defined in modules of one concern each, as the Python package's
// (each module's opening comment says what it holds). Each requires only modules above it in
// this list (right column), so there is no require cycle:
//   platform    this platform's addon package; errors when it is missing   -
//   native      the addon                                                  platform
//   errors      ToolwireError; ProtocolError, ToolError, ResourceNotFound  -
//   schema      zod or JSON Schema: definitions, argument parsing          -
//   logs        the engine's own logs (onEngineLog, DEBUG=toolwire)        native
//   content     content blocks, InputRequired, returned values as JSON     -
//   context     Context, RequestContext                                    native, errors
//   lifespan    the server's lifespan: its value, the engine's hooks       native, errors
//   settle      the engine's calling convention: answers given later       native, errors
//   middleware  fn(request, next) for the engine's around-middleware       errors, settle
//   catalog     resources, prompts, completions: definitions, wrappers     native, errors, schema, content, context, lifespan, settle
//   http        HttpServer (serveHttp), token validators                   settle
//   mount       httpHandler(): node:http, Express, fetch                   native
//   stdio       stdout kept for the protocol; Node's streams path          -
//   server      Server: tools, middleware, metrics, transports             the above but platform and logs

const { ToolwireError, ProtocolError, ToolError, ResourceNotFound } = require('./errors')
const { completable } = require('./schema')
const { ENGINE_LOG_LEVELS, onEngineLog } = require('./logs')
const { text, image, audio, resourceLink, embeddedResource, InputRequired } = require('./content')
const { LOG_LEVELS, Context } = require('./context')
const { HttpServer } = require('./http')
const { Server, Mount } = require('./server')

module.exports = {
  Server,
  Mount,
  Context,
  InputRequired,
  ProtocolError,
  ToolError,
  HttpServer,
  ResourceNotFound,
  ToolwireError,
  text,
  image,
  audio,
  resourceLink,
  embeddedResource,
  LOG_LEVELS,
  ENGINE_LOG_LEVELS,
  completable,
  onEngineLog,
}
