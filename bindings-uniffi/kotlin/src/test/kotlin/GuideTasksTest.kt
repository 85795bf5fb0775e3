// The test of docs/guides/tasks.md, which includes the part between the markers.
// --8<-- [start:test]
import dev.toolwire.testing.TestClient
import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.buildJsonObject
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import kotlinx.serialization.json.long
import kotlinx.serialization.json.put
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Test

class ArchiveTest {
    private val tasks = buildJsonObject {
        put("extensions", buildJsonObject { put("io.modelcontextprotocol/tasks", buildJsonObject {}) })
        put("elicitation", buildJsonObject {})
    }
    private val yes = buildJsonObject {
        put("action", "accept")
        put("content", buildJsonObject { put("confirm", JsonPrimitive(true)) })
    }

    /**
     * `tasks/get` until the task's status is one of [until], waiting the `pollIntervalMs` the
     * server asks for between two polls (for at most 10 s: a test must not hang).
     */
    private suspend fun poll(client: TestClient, taskId: String, vararg until: String): JsonObject {
        val deadline = System.nanoTime() + 10_000_000_000L
        while (true) {
            val task = client.request("tasks/get", buildJsonObject { put("taskId", taskId) })
            val status = task["status"]!!.jsonPrimitive.content
            if (status in until) return task
            check(System.nanoTime() < deadline) { "the task is still $status" }
            delay(task["pollIntervalMs"]!!.jsonPrimitive.long)
        }
    }

    @Test
    fun `archive runs as a task for a client that follows tasks`() = runBlocking {
        TestClient.connect(archiveServer(), protocolVersion = "2026-07-28", capabilities = tasks).use { client ->
            val call = buildJsonObject {
                put("name", "archive")
                put("arguments", buildJsonObject { put("folder", "2025") })
            }
            val created = client.request("tools/call", call)
            assertEquals("task", created["resultType"]!!.jsonPrimitive.content) // the call is answered with the task
            val taskId = created["taskId"]!!.jsonPrimitive.content

            val asking = poll(client, taskId, "input_required")
            val (key, question) = asking["inputRequests"]!!.jsonObject.entries.single() // the question, under a key
            assertEquals("elicitation/create", question.jsonObject["method"]!!.jsonPrimitive.content)
            assertEquals("Archive 2025?", question.jsonObject["params"]!!.jsonObject["message"]!!.jsonPrimitive.content)
            client.request("tasks/update", buildJsonObject {
                put("taskId", taskId)
                put("inputResponses", buildJsonObject { put(key, yes) })
            })

            val done = poll(client, taskId, "completed", "failed", "cancelled")
            assertEquals("completed", done["status"]!!.jsonPrimitive.content)
            assertEquals("Archived 2025.", done["result"]!!.jsonObject["content"]!!.jsonArray[0].jsonObject["text"]!!.jsonPrimitive.content)
        }
    }

    @Test
    fun `a client without the extension gets the answer in the call`() = runBlocking {
        TestClient.connect(archiveServer(), protocolVersion = "2025-11-25", elicitation = { yes }).use { client ->
            val result = client.callTool("archive", """{"folder":"2025"}""")
            assertEquals("Archived 2025.", result["content"]!!.jsonArray[0].jsonObject["text"]!!.jsonPrimitive.content)
        }
    }
}
// --8<-- [end:test]
