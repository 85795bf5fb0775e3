package dev.toolwire

import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows
import org.junit.jupiter.api.fail

/**
 * The tasks extension from Kotlin: a tool whose definition has `taskSupport` runs as a task for
 * a client that declares the extension, `context.elicit(...)` inside it waits for
 * `tasks/update`, and [ToolResult.ProtocolError] ends a task `failed` (a JSON-RPC error outside
 * one).
 */
class TasksTest {
    private fun meta(extension: Boolean = true) =
        """{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":""" +
            (if (extension) """{"elicitation":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}}""" else """{"elicitation":{}}}""")

    private fun server(): Server {
        val server = Server("tasks", "1")
        val definition = { name: String, support: TaskSupport ->
            ToolDefinition(name = name, inputSchemaJson = """{"type":"object"}""", taskSupport = support)
        }
        server.tool(definition("confirm", TaskSupport.OPTIONAL)) { context, _ ->
            val answer = kotlinx.serialization.json.Json.parseToJsonElement(context.elicit("""{"message":"Sure?"}""")).jsonObject
            ToolResult.Text("answered ${answer["action"]!!.jsonPrimitive.content}")
        }
        server.tool(definition("broken", TaskSupport.REQUIRED)) { _, _ -> ToolResult.ProtocolError(-32603, "broken: internal failure") }
        return server
    }

    private fun RawClient.request(id: Int, method: String, params: String, extension: Boolean = true): JsonObject {
        send("""{"jsonrpc":"2.0","id":$id,"method":"$method","params":{$params,"_meta":${meta(extension)}}}""")
        return recvObject()
    }

    /** Polls until the task reaches [status] or ends (each poll answered in turn), for up to 10 s. */
    private fun RawClient.waitFor(task: String, status: String): JsonObject {
        val deadline = System.nanoTime() + 10_000_000_000L
        var id = 100
        while (System.nanoTime() < deadline) {
            val now = request(id++, "tasks/get", """"taskId":"$task"""").getValue("result").jsonObject
            if (now["status"]!!.jsonPrimitive.content in setOf(status, "completed", "failed", "cancelled")) return now
        }
        fail("the task never got there")
    }

    @Test
    fun `a question inside a task waits for tasks update`() = RawClient(server()).use { client ->
        val created = client.request(1, "tools/call", """"name":"confirm","arguments":{}""").getValue("result").jsonObject
        assertEquals("task", created["resultType"]!!.jsonPrimitive.content)
        val task = created["taskId"]!!.jsonPrimitive.content
        val parked = client.waitFor(task, "input_required")
        val (key, question) = parked["inputRequests"]!!.jsonObject.entries.single()
        assertEquals("elicitation/create", question.jsonObject["method"]!!.jsonPrimitive.content)
        val ack = client.request(2, "tasks/update", """"taskId":"$task","inputResponses":{"$key":{"action":"accept"}}""")
        assertEquals("complete", ack.getValue("result").jsonObject["resultType"]!!.jsonPrimitive.content)
        val done = client.waitFor(task, "completed")
        assertEquals("answered accept", done["result"]!!.jsonObject["content"]!!.jsonArray[0].jsonObject["text"]!!.jsonPrimitive.content)
    }

    @Test
    fun `a protocol error fails the task and is a JSON-RPC error outside one`() {
        RawClient(server()).use { client ->
            val created = client.request(1, "tools/call", """"name":"broken","arguments":{}""").getValue("result").jsonObject
            val failed = client.waitFor(created["taskId"]!!.jsonPrimitive.content, "failed")
            assertEquals("-32603", failed["error"]!!.jsonObject["code"].toString())
            assertFalse(failed.containsKey("result"))
            val refused = client.request(2, "tools/call", """"name":"broken","arguments":{}""", extension = false)
            assertEquals("-32021", refused["error"]!!.jsonObject["code"].toString())
        }
        RawClient(server()).use { legacy ->
            legacy.initialize()
            legacy.call(3, "broken", "{}")
            val answer = legacy.recvObject()
            assertEquals("broken: internal failure", answer["error"]!!.jsonObject["message"]!!.jsonPrimitive.content)
        }
    }

    @Test
    fun `the task options reach the engine`() {
        // taskAfterMs 0: a call becomes a task at once; the ttl and poll interval are what it reports.
        val config = ServerConfig(taskAfterMs = 0uL, taskTtlMs = 90_000uL, taskPollIntervalMs = 250uL, maxTasksPerPrincipal = 1u)
        val server = Server("tasks", "1", config = config)
        server.tool(ToolDefinition(name = "confirm", inputSchemaJson = """{"type":"object"}""", taskSupport = TaskSupport.OPTIONAL)) { context, _ ->
            ToolResult.Text(context.elicit("""{"message":"Sure?"}"""))
        }
        RawClient(server).use { client ->
            val created = client.request(1, "tools/call", """"name":"confirm","arguments":{}""").getValue("result").jsonObject
            assertEquals("task", created["resultType"]!!.jsonPrimitive.content)
            assertEquals(listOf("90000", "250"), listOf(created["ttlMs"].toString(), created["pollIntervalMs"].toString()))
            // Past maxTasksPerPrincipal a call that would become a task is refused.
            val refused = client.request(2, "tools/call", """"name":"confirm","arguments":{}""")
            assertEquals("-32603", refused["error"]!!.jsonObject["code"].toString())
        }
    }

    @Test
    fun `a task option out of range is refused naming it`() {
        val zeroTtl = assertThrows<ToolwireException.InvalidArgument> { Server("tasks", "1", config = ServerConfig(taskTtlMs = 0uL)) }
        assertTrue(zeroTtl.detail.contains("task_ttl and task_poll_interval must be longer than zero"), zeroTtl.detail)
        val noTasks = assertThrows<ToolwireException.InvalidArgument> { Server("tasks", "1", config = ServerConfig(maxTasks = 0u)) }
        assertTrue(noTasks.detail.contains("max_tasks and max_tasks_per_principal must be at least 1"), noTasks.detail)
    }
}
