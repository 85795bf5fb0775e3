// The test of docs/guides/middleware.md, which includes the part between the markers.
// --8<-- [start:test]
import dev.toolwire.testing.McpError
import dev.toolwire.testing.TestClient
import kotlinx.coroutines.runBlocking
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows

class GuardedTest {
    @Test
    fun `the rule, the audit and the metrics`() = runBlocking {
        val audit = mutableListOf<String>()
        val server = guardedServer(audit)
        TestClient.connect(server).use { client ->
            val pong = client.callTool("ping", "{}")
            assertEquals("pong", pong["content"]!!.jsonArray[0].jsonObject["text"]!!.jsonPrimitive.content)
            // A test client has no principal.
            val refused = assertThrows<McpError> { runBlocking { client.callTool("wipe", "{}") } }
            assertEquals(-32001, refused.code)
        }
        assertEquals(listOf("tools/call ping: RESULT"), audit) // the refused call never reached next()
        // The engine's own counters: a JSON snapshot, and Prometheus text for a /metrics route.
        val metrics = Json.parseToJsonElement(server.metricsJson()).jsonObject
        val calls = metrics["methods"]!!.jsonObject["tools/call"]!!.jsonObject["outcomes"]!!.jsonObject
        assertEquals(mapOf("result" to 1, "refused" to 1), calls.mapValues { it.value.jsonPrimitive.content.toInt() })
        assertTrue(server.metricsText().contains("toolwire_tool_calls_total{tool=\"ping\",outcome=\"result\"} 1"))
    }
}
// --8<-- [end:test]
