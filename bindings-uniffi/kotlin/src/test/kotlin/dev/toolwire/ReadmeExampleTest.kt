package dev.toolwire

import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Test

/** The server of bindings-uniffi/README.md's Kotlin example, up to `runStdio()`. */
private fun readmeServer(): Server {
    val server = Server("weather", "1.0.0", "Ask for one city at a time.")
    server.tool(
        ToolDefinition(
            name = "forecast",
            description = "Forecast for a city.",
            inputSchemaJson = """{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}""",
            timeoutMs = 10_000u,
        ),
    ) { context, argumentsJson ->
        // argumentsJson was checked against the schema; parse it with any JSON library.
        context.progress(1.0, 2.0, "fetching")   // sent only if the client asked for progress
        kotlinx.coroutines.delay(100)              // cancelled with the call
        ToolResult.Structured("""{"city":"Paris","temperatures":[20,21]}""")
    }
    server.blockingTool(ToolDefinition(name = "shout")) { _, args ->
        ToolResult.Text(args.uppercase())          // runs on Dispatchers.IO: may block
    }
    return server
}

class ReadmeExampleTest {
    @Test
    fun `the README example serves`() {
        RawClient(readmeServer()).use { client ->
            client.initialize()
            client.call(1, "forecast", """{"city":"Paris"}""", meta = """{"progressToken":1}""")
            val progress = client.recvObject()
            assertEquals("notifications/progress", progress.getValue("method").jsonPrimitive.content)
            val answer = client.recvObject().getValue("result").jsonObject
            assertEquals("Paris", answer.getValue("structuredContent").jsonObject.getValue("city").jsonPrimitive.content)
            client.call(2, "shout", """{"text":"hi"}""")
            val shout = client.recvObject().getValue("result").jsonObject.getValue("content").jsonArray[0].jsonObject
            assertEquals("""{"TEXT":"HI"}""", shout.getValue("text").jsonPrimitive.content)
        }
    }
}
