package dev.toolwire

import dev.toolwire.testing.McpError
import dev.toolwire.testing.testClient
import kotlinx.coroutines.runBlocking
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.buildJsonObject
import kotlinx.serialization.json.int
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import kotlinx.serialization.json.put
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows
import org.junit.jupiter.params.ParameterizedTest
import org.junit.jupiter.params.provider.ValueSource
import java.net.URI
import java.net.http.HttpClient
import java.net.http.HttpRequest
import java.net.http.HttpResponse

/** `metrics()`, `metricsText()` and `HttpServerOptions(metricsPath)`: calls counted by tool and outcome in both eras. */
class MetricsTest {
    private fun server(config: ServerConfig? = null): Server {
        val server = Server("metered", "1", config = config)
        server.tool(ToolDefinition("echo", inputSchemaJson = """{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}""")) { _, args ->
            ToolResult.Text(Json.parseToJsonElement(args).jsonObject.getValue("text").jsonPrimitive.content)
        }
        server.tool(ToolDefinition("fail")) { _, _ -> throw ToolwireException.Handler("broken") }
        return server
    }

    private fun JsonObject.obj(vararg path: String): JsonObject = path.fold(this) { at, key -> at.getValue(key).jsonObject }

    @ParameterizedTest
    @ValueSource(strings = ["2025-11-25", "2026-07-28"])
    fun `calls are counted by tool and outcome`(version: String) = runBlocking {
        val server = server()
        server.testClient(protocolVersion = version).use { client ->
            client.callTool("echo", buildJsonObject { put("text", "hi") })
            client.callTool("echo", buildJsonObject { put("text", 3) })
            client.callTool("fail")
            assertEquals(-32602, assertThrows<McpError> { runBlocking { client.callTool("nope") } }.code)
            val metrics = server.metrics()
            assertEquals(Json.parseToJsonElement("""{"result":1,"tool_error":1}"""), metrics.obj("tools", "echo").getValue("outcomes"))
            assertEquals(Json.parseToJsonElement("""{"tool_error":1}"""), metrics.obj("tools", "fail").getValue("outcomes"))
            assertFalse(metrics.obj("tools").containsKey("nope"))
            val calls = metrics.obj("methods", "tools/call")
            assertEquals(4, calls.getValue("calls").jsonPrimitive.int)
            assertEquals(1, calls.obj("outcomes").getValue("invalid_params").jsonPrimitive.int)
            assertEquals(4, calls.obj("latency").getValue("count").jsonPrimitive.int)
            assertEquals(16, calls.obj("latency").getValue("buckets").jsonArray.size)
            assertEquals(if (version == "2025-11-25") 1 else 0, metrics.getValue("sessions").jsonPrimitive.int)
        }
        val text = server.metricsText().lines()
        assertTrue("toolwire_tool_calls_total{tool=\"echo\",outcome=\"result\"} 1" in text, text.joinToString("\n"))
        assertTrue("toolwire_tool_call_duration_seconds_count{tool=\"echo\"} 2" in text)
    }

    @Test
    fun `the metrics path serves Prometheus text, and metrics can be off`() {
        val server = server()
        val http = server.serveHttp("127.0.0.1", 0u, HttpServerOptions(metricsPath = "/metrics"))
        try {
            val client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build()
            val scraped = client.send(
                HttpRequest.newBuilder(URI(http.url().removeSuffix("/mcp") + "/metrics")).GET().build(),
                HttpResponse.BodyHandlers.ofString(),
            )
            assertEquals(200, scraped.statusCode())
            assertEquals("text/plain; version=0.0.4; charset=utf-8", scraped.headers().firstValue("content-type").orElseThrow())
            assertTrue("toolwire_sessions 0" in scraped.body().lines(), scraped.body())
        } finally {
            http.stop()
            http.waitBlocking()
            http.destroy()
        }
        val quiet = server(ServerConfig(metrics = false))
        runBlocking { quiet.testClient().use { it.callTool("echo", buildJsonObject { put("text", "hi") }) } }
        assertEquals(Json.parseToJsonElement("{}"), quiet.metrics().getValue("tools"))
        assertFalse(quiet.metrics().getValue("enabled").jsonPrimitive.content.toBoolean())
    }
}
