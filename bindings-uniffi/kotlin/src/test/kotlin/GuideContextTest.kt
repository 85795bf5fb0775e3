// The test of docs/guides/context.md, which includes the part between the markers.
// --8<-- [start:test]
import dev.toolwire.testing.TestClient
import kotlinx.coroutines.runBlocking
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.buildJsonObject
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import kotlinx.serialization.json.put
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.params.ParameterizedTest
import org.junit.jupiter.params.provider.ValueSource

class TravelTest {
    @ParameterizedTest
    @ValueSource(strings = ["2025-11-25", "2026-07-28"])
    fun `book asks the user first`(version: String) = runBlocking {
        val asked = mutableListOf<String>()
        val progress = mutableListOf<String?>()
        // The client's elicitation handler: the user says yes.
        val user = { params: JsonObject ->
            asked += params["message"]!!.jsonPrimitive.content
            buildJsonObject {
                put("action", "accept")
                put("content", buildJsonObject { put("confirm", JsonPrimitive(true)) })
            }
        }
        TestClient.connect(travelServer(), protocolVersion = version, elicitation = user).use { client ->
            val result = client.callTool("book", """{"city":"Oslo","nights":2}""") { _, _, message -> progress += message }
            val logs = client.notifications.filter { it["method"]!!.jsonPrimitive.content == "notifications/message" }
            assertEquals("Booked 2 nights in Oslo.", result["content"]!!.jsonArray[0].jsonObject["text"]!!.jsonPrimitive.content)
            assertEquals(listOf("Book 2 nights in Oslo for 480 EUR?"), asked)
            // In 2026-07-28 a question ends the request and the client sends it again with the
            // answer: the handler runs twice, so what it does before asking, it does twice.
            val rounds = if (version == "2025-11-25") 1 else 2
            assertEquals(List(rounds) { listOf("searching", "comparing", "holding a room") }.flatten(), progress)
            // Logs go at the server's default level (info) in 2025-11-25; 2026-07-28 sends them
            // only to a request that names its level (`_meta` "io.modelcontextprotocol/logLevel").
            assertEquals(if (version == "2025-11-25") 1 else 0, logs.size)
        }
    }
}
// --8<-- [end:test]
