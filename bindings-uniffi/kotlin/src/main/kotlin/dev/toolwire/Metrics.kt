// The server's metrics as Kotlin reads them: the engine counts, this parses its JSON.
package dev.toolwire

import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.jsonObject

/**
 * What the server has done and is doing: by method (`"methods"`) and by tool (`"tools"`) the
 * `calls`, `inFlight`, how they ended (`"outcomes"`: `result`, `tool_error`, `invalid_params`,
 * `cancelled`, `refused`…) and a latency histogram (`"latency"`: `count`, `sumSeconds`,
 * cumulative `buckets` of `le` seconds); then `callsInFlight`, `callsQueued`, `refused` by limit,
 * live `sessions`, open SSE `streams`, `listenStreams` and `tasks` running. [metricsText] gives
 * the same in the Prometheus text format; `HttpServerOptions(metricsPath = "/metrics")` serves
 * it, or a Ktor route of yours: `get("/metrics") { call.respondText(server.metricsText()) }`.
 */
fun Server.metrics(): JsonObject = Json.parseToJsonElement(metricsJson()).jsonObject
