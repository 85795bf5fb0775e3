package dev.toolwire

import dev.toolwire.testing.testClient
import kotlinx.coroutines.runBlocking
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.buildJsonObject
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import kotlinx.serialization.json.put
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Test
import org.junit.jupiter.params.ParameterizedTest
import org.junit.jupiter.params.provider.ValueSource

/** The caller's W3C trace context reaches `context.traceContext()` from `_meta` in both eras and from the HTTP header. */
class TraceContextTest {
    private val traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

    private fun server(): Server {
        val server = Server("traced", "1")
        server.tool(ToolDefinition("context")) { context, _ ->
            val trace = context.traceContext()
            ToolResult.Text("${trace.traceparent}|${trace.tracestate}")
        }
        return server
    }

    private fun JsonObject.text() = getValue("content").jsonArray[0].jsonObject.getValue("text").jsonPrimitive.content

    @ParameterizedTest
    @ValueSource(strings = ["2025-11-25", "2026-07-28"])
    fun `the request's _meta trace context reaches the handler`(version: String) = runBlocking {
        server().testClient(protocolVersion = version).use { client ->
            val params = buildJsonObject {
                put("name", "context")
                put("arguments", buildJsonObject { })
                put("_meta", buildJsonObject {
                    put("traceparent", traceparent)
                    put("tracestate", "vendor=1")
                })
            }
            assertEquals("$traceparent|vendor=1", client.request("tools/call", params).text())
            assertEquals("null|null", client.callTool("context").text())
        }
    }

    @Test
    fun `over HTTP the traceparent header is the trace context`() {
        val http = server().serveHttp("127.0.0.1", 0u, HttpServerOptions(stateless = true, jsonResponse = true))
        try {
            val body = """{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"context","arguments":{}}}"""
            val reply = post(http.url(), body, "mcp-protocol-version", "2025-11-25", "traceparent", traceparent)
            assertEquals(200, reply.statusCode())
            assertEquals(true, reply.body().contains("$traceparent|null"), reply.body())
        } finally {
            http.stop()
            http.waitBlocking()
            http.destroy()
        }
    }
}
