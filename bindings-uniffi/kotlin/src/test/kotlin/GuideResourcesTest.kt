// The test of docs/guides/resources.md, which includes the part between the markers.
// --8<-- [start:test]
import dev.toolwire.testing.McpError
import dev.toolwire.testing.TestClient
import kotlinx.coroutines.runBlocking
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows

class NotesTest {
    @Test
    fun `resources, prompts and completion`() = runBlocking {
        TestClient.connect(notesServer()).use { client ->
            val templates = client.listResourceTemplates().map { it["uriTemplate"]!!.jsonPrimitive.content }
            assertEquals(listOf("notes://day/{date}"), templates)

            val read = client.readResource("notes://day/2026-11-23")
            assertEquals("Quiet.", read["contents"]!!.jsonArray[0].jsonObject["text"]!!.jsonPrimitive.content)

            val missing = assertThrows<McpError> { runBlocking { client.readResource("notes://day/1999-01-01") } }
            assertEquals(-32002, missing.code)

            val dates = client.complete(client.templateRef("notes://day/{date}"), "date", "2026-11-2")
            assertEquals(listOf("2026-11-22", "2026-11-23"), dates["values"]!!.jsonArray.map { it.jsonPrimitive.content })

            val prompt = client.getPrompt("summarize", mapOf("date" to "2026-11-22"))
            val text = prompt["messages"]!!.jsonArray[0].jsonObject["content"]!!.jsonObject["text"]!!.jsonPrimitive.content
            assertTrue(text.startsWith("Summarize the notes of 2026-11-22 (short)"), text)

            val tones = client.complete(client.promptRef("summarize"), "tone", "")
            assertEquals(listOf("short", "detailed"), tones["values"]!!.jsonArray.map { it.jsonPrimitive.content })
        }
    }
}
// --8<-- [end:test]
