package dev.toolwire

import dev.toolwire.testing.McpError
import dev.toolwire.testing.TestClient
import dev.toolwire.testing.testClient
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.buildJsonObject
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import kotlinx.serialization.json.put
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows
import org.junit.jupiter.params.ParameterizedTest
import org.junit.jupiter.params.provider.ValueSource
import java.util.Collections
import java.util.concurrent.TimeoutException

/** dev.toolwire.testing's client: both eras, the server's questions answered by callbacks, McpError, drain. */
class TestClientTest {
    private fun json(text: String) = Json.parseToJsonElement(text)

    private fun JsonObject.text() = getValue("content").jsonArray.joinToString("\n") { it.jsonObject.getValue("text").jsonPrimitive.content }

    private fun field(json: String, vararg path: String): String {
        var element = Json.parseToJsonElement(json)
        for (key in path) element = element.jsonObject.getValue(key)
        return element.jsonPrimitive.content
    }

    private fun server(): Server {
        val server = Server("questions", "2.0")
        server.tool(ToolDefinition("ask")) { context, _ ->
            val name = field(context.elicit("""{"message":"Name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}"""), "content", "name")
            val said = field(context.sample("""{"messages":[],"maxTokens":5}"""), "content", "text")
            val roots = context.listRoots().joinToString(",") { it.uri }
            ToolResult.Text("$name/$said/$roots/${context.protocolVersion()}/${context.clientInfo()?.name}")
        }
        server.tool(ToolDefinition("refused")) { context, _ ->
            try {
                context.elicit("""{"message":"?","requestedSchema":{"type":"object","properties":{}}}""")
                ToolResult.Text("answered")
            } catch (e: ToolwireException.Client) {
                ToolResult.Text("client error ${e.code}: ${e.detail}" + (e.dataJson?.let { " data=$it" } ?: ""))
            }
        }
        server.resource(ResourceDefinition("memo://{day}", "memo")) { uri, variables -> listOf(ResourceContent(uri, text = "memo of ${variables["day"]}")) }
        server.prompt(PromptDefinition("greet", arguments = listOf(PromptArgumentDefinition("name", required = true)))) { args ->
            PromptRendering(listOf(PromptMessageRecord(PromptRole.USER, ContentBlock.Text("Hello ${args["name"]}"))))
        }
        server.promptCompletion("greet") { _, value, _ -> listOf("ada", "alan", "grace").filter { it.startsWith(value) } }
        return server
    }

    private suspend fun connect(server: Server, version: String) = TestClient.connect(
        server,
        protocolVersion = version,
        elicitation = { params ->
            assertEquals("Name?", params.getValue("message").jsonPrimitive.content)
            buildJsonObject {
                put("action", "accept")
                put("content", buildJsonObject { put("name", "Ada") })
            }
        },
        sampling = { buildJsonObject {
            put("role", "assistant")
            put("model", "test")
            put("content", buildJsonObject {
                put("type", "text")
                put("text", "hi")
            })
        } },
        roots = listOf(buildJsonObject { put("uri", "file:///work") }),
        clientInfo = buildJsonObject {
            put("name", "kotlin-tests")
            put("version", "1")
        },
    )

    @ParameterizedTest
    @ValueSource(strings = ["2025-11-25", "2026-07-28"])
    fun `the server's questions are answered by the callbacks in both eras`(version: String) = runBlocking {
        connect(server(), version).use { client ->
            assertEquals("questions", client.server.getValue("name").jsonPrimitive.content)
            assertEquals("Ada/hi/file:///work/$version/kotlin-tests", client.callTool("ask").text())
        }
    }

    @ParameterizedTest
    @ValueSource(strings = ["2025-11-25", "2026-07-28"])
    fun `resources, prompts and completion`(version: String) = runBlocking {
        server().testClient(protocolVersion = version).use { client ->
            assertEquals(listOf("memo://{day}"), client.listResourceTemplates().map { it.getValue("uriTemplate").jsonPrimitive.content })
            assertEquals("memo of monday", client.readResource("memo://monday").getValue("contents").jsonArray[0].jsonObject.getValue("text").jsonPrimitive.content)
            assertEquals(listOf("greet"), client.listPrompts().map { it.getValue("name").jsonPrimitive.content })
            val prompt = client.getPrompt("greet", mapOf("name" to "Ada"))
            assertEquals("Hello Ada", prompt.getValue("messages").jsonArray[0].jsonObject.getValue("content").jsonObject.getValue("text").jsonPrimitive.content)
            val missing = assertThrows<McpError> { runBlocking { client.getPrompt("greet") } }
            assertEquals(-32602, missing.code)
            val completion = client.complete(client.promptRef("greet"), "name", "a")
            assertEquals(json("""["ada","alan"]"""), completion.getValue("values"))
        }
    }

    @Test
    fun `JSON-RPC errors are McpError, a callback's McpError is the client's answer, no callback is -32601`() = runBlocking {
        val refusing = TestClient.connect(server(), elicitation = { throw McpError(-32042, "no way") })
        refusing.use { client ->
            val unknown = assertThrows<McpError> { runBlocking { client.request("no/such/method") } }
            assertEquals(-32601, unknown.code)
            assertEquals("client error -32042: no way", client.callTool("refused").text())
        }
        server().testClient().use { client ->
            // No elicitation callback: not declared, so the engine refuses to ask.
            assertTrue(client.callTool("refused").text().startsWith("answered").not())
        }
    }

    @Test
    fun `close drains a call in flight, then requests fail with McpError`() = runBlocking {
        val server = Server("drain", "1")
        val started = CompletableDeferred<Unit>()
        val gate = CompletableDeferred<Unit>()
        server.tool(ToolDefinition("slow")) { _, _ ->
            started.complete(Unit)
            gate.await()
            ToolResult.Text("finished")
        }
        val client = server.testClient()
        val call = async { client.callTool("slow") }
        started.await()
        val closing = async { client.shutdown() }
        gate.complete(Unit)
        assertEquals("finished", call.await().text())
        closing.await()
        val closed = assertThrows<McpError> { runBlocking { client.listTools() } }
        assertEquals(-32000, closed.code)
        client.close() // idempotent
    }

    @Test
    fun `arguments as a JsonObject, and the raw request`() = runBlocking {
        val server = Server("echo", "1")
        server.tool(ToolDefinition("echo")) { _, args -> ToolResult.Text(args) }
        server.testClient().use { client ->
            val result = client.callTool("echo", buildJsonObject { put("n", JsonPrimitive(1)) })
            assertEquals(json("""{"n":1}"""), json(result.text()))
            assertEquals(json("{}"), client.request("ping"))
        }
    }

    /** A tool that waits until the engine cancels it, then says so. */
    private fun stuck(stopped: CompletableDeferred<Unit>, started: CompletableDeferred<Unit> = CompletableDeferred()): Server {
        val server = Server("stuck", "1")
        server.tool(ToolDefinition("stuck")) { _, _ ->
            started.complete(Unit)
            try {
                awaitCancellation()
            } finally {
                stopped.complete(Unit)
            }
        }
        return server
    }

    @Test
    fun `no answer in time is a TimeoutException, and the server is told the call is cancelled`() = runBlocking {
        val stopped = CompletableDeferred<Unit>()
        stuck(stopped).testClient(timeoutMs = 200).use { client ->
            val timedOut = assertThrows<TimeoutException> { runBlocking { client.callTool("stuck") } }
            assertTrue("tools/call" in timedOut.message.orEmpty(), timedOut.message)
            withTimeout(10_000) { stopped.await() }
        }
    }

    @Test
    fun `a cancelled coroutine cancels its call at the server`() = runBlocking {
        val (started, stopped) = CompletableDeferred<Unit>() to CompletableDeferred<Unit>()
        stuck(stopped, started).testClient().use { client ->
            val call = launch(start = CoroutineStart.UNDISPATCHED) { client.callTool("stuck") }
            withTimeout(10_000) { started.await() }
            call.cancel()
            withTimeout(10_000) { stopped.await() }
            assertEquals(json("{}"), client.request("ping"))
        }
    }

    @Test
    fun `a callback's McpError data reaches the server, a callback that fails answers -32603`() = runBlocking {
        val data = buildJsonObject { put("reason", "policy") }
        TestClient.connect(server(), elicitation = { throw McpError(-32042, "no way", data) }).use { client ->
            assertEquals("client error -32042: no way data={\"reason\":\"policy\"}", client.callTool("refused").text())
        }
        TestClient.connect(server(), elicitation = { error("boom") }).use { client ->
            assertEquals("client error -32603: the test client's callback failed: boom", client.callTool("refused").text())
        }
    }

    @Test
    fun `a server's JSON-RPC error data is McpError's data`() = runBlocking {
        val server = Server("guarded", "1")
        server.middleware { _, _ -> throw ToolwireException.Protocol(-32001, "Forbidden", """{"who":"nobody"}""") }
        server.testClient().use { client ->
            val refused = assertThrows<McpError> { runBlocking { client.listTools() } }
            assertEquals(-32001, refused.code)
            assertEquals("Forbidden", refused.message)
            assertEquals(json("""{"who":"nobody"}"""), refused.data)
        }
    }

    @ParameterizedTest
    @ValueSource(strings = ["2025-11-25", "2026-07-28"])
    fun `a call's progress reaches its listener, and the notifications are kept`(version: String) = runBlocking {
        val server = Server("progress", "1")
        server.tool(ToolDefinition("steps")) { context, _ ->
            context.progress(1.0, 2.0, "half")
            context.progress(2.0, null, null)
            ToolResult.Text("done")
        }
        server.testClient(protocolVersion = version).use { client ->
            val heard = Collections.synchronizedList(ArrayList<Triple<Double, Double?, String?>>())
            assertEquals("done", client.callTool("steps") { progress, total, message -> heard += Triple(progress, total, message) }.text())
            assertEquals(listOf(Triple(1.0, 2.0, "half"), Triple(2.0, null, null)), heard.toList())
            assertEquals(2, client.notifications.count { it["method"]?.jsonPrimitive?.content == "notifications/progress" })
            assertEquals(version == "2026-07-28", client.modern)
        }
    }
}
