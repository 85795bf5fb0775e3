// The golden wire vectors (tests/vectors) replayed frame by frame with core's replayer
// (toolwire::client::vectors, through the binding's `Server.replayVector`), the one reader of
// their format, which every language's tests call with their own demo server.
package dev.toolwire.testing

import dev.toolwire.Server
import dev.toolwire.ToolwireException
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.contentOrNull

/**
 * Replays one golden wire vector case (`tests/vectors`: an element of a vector file's `cases`)
 * on a new session of [server], like [Server.connect]'s, with core's replayer; the server must be
 * the one the case names (`server`, `options`). [caseJson] is the case's JSON text: an integer
 * beyond 2^53 (`jsonrpc/large-integer-id`) stays exact (a `JsonObject`'s `toString()` keeps its
 * number literals as written). Its session holds nothing, as [Server.connect]'s: a call of the case
 * starts the server's lifespan, and `stop()` ends it (the rule of every language).
 *
 * Throws [AssertionError] naming the case and the step that failed, and
 * [ToolwireException.InvalidArgument] when [caseJson] is not JSON.
 */
suspend fun replayVector(server: Server, caseJson: String) {
    val failure = server.replayVector(caseJson)
    if (failure != null) throw AssertionError("${caseName(caseJson)}: $failure")
}

/** The case's `name`, for the failure's message; the JSON parsed already, so this is only a label. */
private fun caseName(caseJson: String): String {
    val case = runCatching { Json.parseToJsonElement(caseJson) }.getOrNull() as? JsonObject
    return (case?.get("name") as? JsonPrimitive)?.contentOrNull ?: "vector"
}
