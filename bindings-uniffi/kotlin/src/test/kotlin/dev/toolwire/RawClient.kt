package dev.toolwire

import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeoutOrNull
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.jsonObject
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.fail

/** A raw MCP client over [Server.connect]: send JSON texts, read outbound frames (the typed one is [dev.toolwire.testing.TestClient]). */
class RawClient(server: Server) : AutoCloseable {
    val connection: Connection = server.connect()

    fun send(json: String) = connection.handleFrame(json)

    /** The next outbound frame as JSON; fails after [timeoutMs]. */
    fun recv(timeoutMs: Long = 10_000): JsonElement = runBlocking {
        val text = withTimeoutOrNull(timeoutMs) { connection.recv() }
            ?: fail("no outbound frame within $timeoutMs ms (or the session ended)")
        Json.parseToJsonElement(text)
    }

    fun recvObject(timeoutMs: Long = 10_000): JsonObject = recv(timeoutMs).jsonObject

    /** `initialize` + `notifications/initialized`; returns the initialize result. */
    fun initialize(version: String = "2025-11-25", capabilities: String = "{}"): JsonObject {
        send(
            """{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"$version",""" +
                """"capabilities":$capabilities,"clientInfo":{"name":"kotlin-test","version":"1.0"}}}""",
        )
        val answer = recvObject()
        assertEquals("0", answer["id"].toString(), "initialize answer: $answer")
        send("""{"jsonrpc":"2.0","method":"notifications/initialized"}""")
        return answer.getValue("result").jsonObject
    }

    /** Sends `tools/call` with this id; `meta` is the JSON text of `_meta`, if any. */
    fun call(id: Int, tool: String, arguments: String, meta: String? = null) {
        val metaPart = if (meta == null) "" else ""","_meta":$meta"""
        send("""{"jsonrpc":"2.0","id":$id,"method":"tools/call","params":{"name":"$tool","arguments":$arguments$metaPart}}""")
    }

    /** Ends the input, lets calls in flight finish, and returns every frame sent meanwhile. */
    fun finish(): List<JsonElement> = runBlocking {
        connection.shutdown()
        buildList {
            while (true) {
                val text = withTimeoutOrNull(10_000) { connection.recv() } ?: break
                add(Json.parseToJsonElement(text))
            }
        }
    }

    override fun close() = connection.abort()
}
