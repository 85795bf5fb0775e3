// The test of docs/guides/replicas.md, which includes the part between the markers.
// --8<-- [start:test]
import dev.toolwire.testing.TestClient
import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.buildJsonObject
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import kotlinx.serialization.json.long
import kotlinx.serialization.json.put
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Test

class ReplicaTest {
    private val keys = listOf("a requestState secret of at least 32 bytes, the same on every replica")
    private val tasks = buildJsonObject {
        put("extensions", buildJsonObject { put("io.modelcontextprotocol/tasks", buildJsonObject {}) })
        put("elicitation", buildJsonObject {})
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
    fun `a task made on one replica is followed and answered on the other`() = runBlocking {
        LocalRedis().use { redis ->
            val (a, b) = replica(redis.url, keys) to replica(redis.url, keys) // as two processes would be
            try {
                TestClient.connect(a, protocolVersion = "2026-07-28", capabilities = tasks).use { onA ->
                    TestClient.connect(b, protocolVersion = "2026-07-28", capabilities = tasks).use { onB ->
                        val call = buildJsonObject {
                            put("name", "archive")
                            put("arguments", buildJsonObject { put("folder", "2025") })
                        }
                        val taskId = onA.request("tools/call", call)["taskId"]!!.jsonPrimitive.content

                        val asking = poll(onB, taskId, "input_required") // B reads the task A runs
                        val key = asking["inputRequests"]!!.jsonObject.keys.single()
                        val answer = buildJsonObject {
                            put("action", "accept")
                            put("content", buildJsonObject { put("confirm", true) })
                        }
                        onB.request("tasks/update", buildJsonObject { // B passes it to A
                            put("taskId", taskId)
                            put("inputResponses", buildJsonObject { put(key, answer) })
                        })

                        val done = poll(onA, taskId, "completed", "failed", "cancelled")
                        assertEquals("Archived 2025.", done["result"]!!.jsonObject["content"]!!.jsonArray[0].jsonObject["text"]!!.jsonPrimitive.content)
                    }
                }
            } finally {
                a.close()
                b.close()
            }
        }
    }
}
// --8<-- [end:test]
