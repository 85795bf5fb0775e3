package dev.toolwire

import dev.toolwire.testing.TestClient
import kotlinx.coroutines.runBlocking
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows

/** `Server.mount`: another server's catalog under a prefix, its calls forwarded. */
class MountTest {
    // --8<-- [start:inner]
    private fun weather(): Server {
        val server = Server("weather", "1")
        server.tool(
            ToolDefinition(
                name = "forecast",
                description = "Tomorrow's weather in a city.",
                inputSchemaJson = """{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}""",
            ),
        ) { ctx, args ->
            ctx.progress(1.0, 2.0, "looking")
            val city = kotlinx.serialization.json.Json.parseToJsonElement(args).jsonObject.getValue("city").jsonPrimitive.content
            ToolResult.Text("sunny in $city")
        }
        server.resource(ResourceDefinition("docs://readme", "readme")) { uri, _ -> listOf(ResourceContent(uri, text = "Weather for everyone.")) }
        return server
    }

    private suspend fun gateway(): Pair<Server, Mount> {
        val gateway = Server("gateway", "1")
        val mount = gateway.mount("weather", Upstream.InProcess(weather())) // weather_forecast, docs://weather/readme
        return gateway to mount
    }
    // --8<-- [end:inner]

    private fun JsonObject.text() = getValue("content").jsonArray[0].jsonObject.getValue("text").jsonPrimitive.content

    @Test
    fun `a server in this process is mounted under a prefix, its calls forwarded with progress`() = runBlocking {
        val (gateway, mount) = gateway()
        assertEquals("weather", mount.prefix())
        assertEquals(listOf("docs://weather/readme", "weather_forecast"), mount.registered().sorted())
        for (version in listOf("2025-11-25", "2026-07-28")) {
            val client = TestClient.connect(gateway, protocolVersion = version)
            try {
                assertEquals(listOf("weather_forecast"), client.listTools().map { it.getValue("name").jsonPrimitive.content })
                val heard = mutableListOf<String?>()
                val result = client.callTool("weather_forecast", """{"city":"Oslo"}""") { _, _, message -> synchronized(heard) { heard.add(message) } }
                assertEquals("sunny in Oslo", result.text())
                assertEquals(listOf<String?>("looking"), synchronized(heard) { heard.toList() })
                val read = client.readResource("docs://weather/readme")
                assertEquals("Weather for everyone.", read.getValue("contents").jsonArray[0].jsonObject.getValue("text").jsonPrimitive.content)
            } finally {
                client.close()
            }
        }
        mount.unmount()
        assertEquals(listOf<String>(), gateway.toolNames())
    }

    @Test
    fun `a server over Streamable HTTP is proxied`() = runBlocking {
        val http = weather().serveHttp("127.0.0.1", 0u)
        try {
            // --8<-- [start:http]
            val gateway = Server("gateway", "1")
            gateway.mount("weather", Upstream.Http(http.url(), mapOf())) // or Upstream.Command("python", listOf("weather.py"), mapOf(), null)
            // --8<-- [end:http]
            TestClient.connect(gateway).use { client ->
                assertEquals("sunny in Bergen", client.callTool("weather_forecast", """{"city":"Bergen"}""").text())
            }
        } finally {
            http.stop()
        }
    }

    @Test
    fun `what cannot be mounted is refused, naming why`() = runBlocking {
        val gateway = Server("gateway", "1")
        val prefix = assertThrows<ToolwireException.InvalidArgument> { runBlocking { gateway.mount("a b", Upstream.InProcess(weather())) } }
        assertTrue(prefix.detail.contains("a mount's prefix"), prefix.detail)
        val spawn = assertThrows<ToolwireException.Transport> {
            runBlocking { gateway.mount("x", Upstream.Command("toolwire-no-such-program", listOf(), mapOf(), null)) }
        }
        assertTrue(spawn.detail.contains("cannot spawn"), spawn.detail)
    }
}
