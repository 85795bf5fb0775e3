package dev.toolwire

import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.boolean
import kotlinx.serialization.json.int
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertNotEquals
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows
import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger

private const val TEXT_ARG = """{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}"""

private fun server() = Server("kotlin-test", "1.0")

private fun JsonObject.result() = getValue("result").jsonObject

private fun JsonObject.firstText() = result().getValue("content").jsonArray[0].jsonObject.getValue("text").jsonPrimitive.content

private fun JsonObject.isError() = result()["isError"]?.jsonPrimitive?.boolean ?: false

class ToolsTest {
    @Test
    fun `suspending, sync-looking and blocking handlers answer`() {
        val server = server()
        server.tool(ToolDefinition(name = "plain", inputSchemaJson = TEXT_ARG)) { _, args ->
            ToolResult.Text("plain $args")
        }
        server.tool(ToolDefinition(name = "suspends")) { _, _ ->
            delay(20)
            ToolResult.Text("after a delay")
        }
        server.blockingTool(ToolDefinition(name = "blocks")) { _, _ ->
            Thread.sleep(20)
            ToolResult.Text("on ${Thread.currentThread().name}")
        }
        RawClient(server).use { client ->
            client.initialize()
            client.call(1, "plain", """{"text":"hi"}""")
            assertEquals("""plain {"text":"hi"}""", client.recvObject().firstText())
            client.call(2, "suspends", "{}")
            assertEquals("after a delay", client.recvObject().firstText())
            client.call(3, "blocks", "{}")
            val answer = client.recvObject()
            assertFalse(answer.isError(), "$answer")
            assertTrue(answer.firstText().startsWith("on "), "$answer")
        }
    }

    @Test
    fun `structured results and content blocks`() {
        val server = server()
        server.tool(
            ToolDefinition(
                name = "stats",
                outputSchemaJson = """{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}""",
            ),
        ) { _, _ -> ToolResult.Structured("""{"n":3}""") }
        server.tool(ToolDefinition(name = "wrong-shape", outputSchemaJson = """{"type":"object","required":["n"]}""")) { _, _ ->
            ToolResult.Structured("""{"m":1}""")
        }
        server.tool(ToolDefinition(name = "not-json")) { _, _ -> ToolResult.Structured("{nope") }
        server.tool(ToolDefinition(name = "blocks")) { _, _ ->
            ToolResult.Content(
                listOf(
                    ContentBlock.Text("one"),
                    ContentBlock.Image("aGk=", "image/png"),
                    ContentBlock.ResourceLink("file:///a.txt", "a.txt"),
                    ContentBlock.Json("""{"type":"text","text":"raw","annotations":{"priority":1}}"""),
                ),
                null,
            )
        }
        server.tool(ToolDefinition(name = "soft-error")) { _, _ -> ToolResult.Error("no such city") }
        RawClient(server).use { client ->
            client.initialize()
            client.call(1, "stats", "{}")
            val stats = client.recvObject().result()
            assertEquals(3, stats.getValue("structuredContent").jsonObject.getValue("n").jsonPrimitive.int)
            assertEquals("""{"n":3}""", stats.getValue("content").jsonArray[0].jsonObject.getValue("text").jsonPrimitive.content)

            client.call(2, "wrong-shape", "{}")
            val wrong = client.recvObject()
            assertTrue(wrong.isError(), "$wrong")

            client.call(3, "not-json", "{}")
            val notJson = client.recvObject()
            assertTrue(notJson.isError() && notJson.firstText().contains("invalid JSON"), "$notJson")

            client.call(4, "blocks", "{}")
            val blocks = client.recvObject().result().getValue("content").jsonArray.map { it.jsonObject }
            assertEquals(listOf("text", "image", "resource_link", "text"), blocks.map { it.getValue("type").jsonPrimitive.content })
            assertEquals("image/png", blocks[1].getValue("mimeType").jsonPrimitive.content)
            assertEquals(1, blocks[3].getValue("annotations").jsonObject.getValue("priority").jsonPrimitive.int)

            client.call(5, "soft-error", "{}")
            val soft = client.recvObject()
            assertTrue(soft.isError())
            assertEquals("no such city", soft.firstText())
        }
    }

    @Test
    fun `thrown exceptions become error results and the server keeps serving`() {
        val server = server()
        server.tool(ToolDefinition(name = "throws")) { _, _ -> throw IllegalArgumentException("bad input, sorry") }
        server.tool(ToolDefinition(name = "throws-bare")) { _, _ -> throw UnsupportedOperationException() }
        server.tool(ToolDefinition(name = "throws-ours")) { _, _ -> throw ToolwireException.Handler("told you") }
        server.blockingTool(ToolDefinition(name = "blocking-throws")) { _, _ -> error("blocking boom") }
        // A raw ToolHandler (no lambda wrapper) throwing an arbitrary exception.
        server.tool(
            ToolDefinition(name = "raw-throws"),
            object : ToolHandler {
                override suspend fun call(context: CallContext, argumentsJson: String): ToolResult = throw RuntimeException("raw boom")
            },
        )
        server.tool(ToolDefinition(name = "ok")) { _, _ -> ToolResult.Text("still here") }
        RawClient(server).use { client ->
            client.initialize()
            val expected = mapOf(
                "throws" to "bad input, sorry",
                "throws-bare" to "UnsupportedOperationException",
                "throws-ours" to "told you",
                "blocking-throws" to "blocking boom",
            )
            for ((i, entry) in expected.entries.withIndex()) {
                client.call(i, entry.key, "{}")
                val answer = client.recvObject()
                assertTrue(answer.isError(), "$answer")
                assertEquals(entry.value, answer.firstText())
            }
            client.call(10, "raw-throws", "{}")
            val raw = client.recvObject()
            assertTrue(raw.isError() && raw.firstText().contains("raw boom"), "$raw")
            client.call(11, "ok", "{}")
            assertEquals("still here", client.recvObject().firstText())
        }
    }

    @Test
    fun `arguments are checked against the schema before the handler runs`() {
        val server = server()
        val runs = AtomicInteger()
        server.tool(ToolDefinition(name = "echo", inputSchemaJson = TEXT_ARG)) { _, _ ->
            runs.incrementAndGet()
            ToolResult.Text("ran")
        }
        RawClient(server).use { client ->
            client.initialize()
            client.call(1, "echo", """{"text":5}""")
            val answer = client.recvObject()
            assertTrue(answer.isError(), "$answer")
            assertTrue(answer.firstText().contains("/text"), answer.firstText())
            client.call(2, "missing", "{}")
            val unknown = client.recvObject()
            assertEquals(-32602, unknown.getValue("error").jsonObject.getValue("code").jsonPrimitive.int)
            assertEquals(0, runs.get())
        }
    }

    @Test
    fun `bad definitions are refused at registration`() {
        val server = server()
        val noop: suspend (CallContext, String) -> ToolResult = { _, _ -> ToolResult.Text("") }
        assertThrows<ToolwireException.Registration> { server.tool(ToolDefinition(name = "bad name!"), noop) }
        assertThrows<ToolwireException.Registration> {
            server.tool(ToolDefinition(name = "schema", inputSchemaJson = """{"type":"object","properties":{"a":{"type":"nope"}}}"""), noop)
        }
        val notJson = assertThrows<ToolwireException.Registration> {
            server.tool(ToolDefinition(name = "text", inputSchemaJson = "{not json"), noop)
        }
        assertTrue(notJson.detail.contains("not valid JSON"), notJson.detail)
        assertThrows<ToolwireException.Registration> {
            server.tool(ToolDefinition(name = "meta", metaJson = "[1]"), noop)
        }
        server.tool(ToolDefinition(name = "twice"), noop)
        val duplicate = assertThrows<ToolwireException.Registration> { server.tool(ToolDefinition(name = "twice"), noop) }
        assertTrue(duplicate.detail.contains("already registered"), duplicate.detail)
        assertEquals(listOf("twice"), server.toolNames())
    }

    @Test
    fun `a hundred concurrent calls run at once`() {
        val server = server()
        val started = AtomicInteger()
        val allStarted = CompletableDeferred<Unit>()
        server.tool(ToolDefinition(name = "wait")) { _, args ->
            if (started.incrementAndGet() == 100) allStarted.complete(Unit)
            // A barrier: no call answers before all hundred run at once (one after another,
            // the first would wait for the others forever and time out).
            withTimeout(10_000) { allStarted.await() }
            ToolResult.Text(args)
        }
        RawClient(server).use { client ->
            client.initialize()
            for (i in 1..100) client.call(i, "wait", """{"i":$i}""")
            val answers = (1..100).map { client.recvObject() }
            assertEquals((1..100).toSet(), answers.map { it.getValue("id").jsonPrimitive.int }.toSet())
            for (answer in answers) {
                assertFalse(answer.isError(), "$answer")
                assertEquals("""{"i":${answer.getValue("id").jsonPrimitive.int}}""", answer.firstText())
            }
        }
    }

    @Test
    fun `cancelling a call cancels its coroutine and sends no answer`() {
        val server = server()
        val started = CountDownLatch(1)
        val cancelled = CompletableDeferred<Throwable>()
        server.tool(ToolDefinition(name = "forever")) { _, _ ->
            started.countDown()
            try {
                delay(60_000)
                ToolResult.Text("never")
            } catch (e: Throwable) {
                cancelled.complete(e)
                throw e
            }
        }
        RawClient(server).use { client ->
            client.initialize()
            client.call(7, "forever", "{}")
            assertTrue(started.await(5, TimeUnit.SECONDS))
            client.send("""{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}""")
            val cause = runBlocking { withTimeout(5_000) { cancelled.await() } }
            assertTrue(cause is kotlin.coroutines.cancellation.CancellationException, "$cause")
            client.send("""{"jsonrpc":"2.0","id":8,"method":"ping"}""")
            assertEquals(8, client.recvObject().getValue("id").jsonPrimitive.int)
            assertEquals(emptyList<Any>(), client.finish())
        }
    }

    @Test
    fun `a deadline cancels the call and reports it, and the context sees it`() {
        val server = server()
        val sawCancel = CompletableDeferred<Boolean>()
        server.blockingTool(ToolDefinition(name = "slow-blocking", timeoutMs = 100u)) { context, _ ->
            val until = System.nanoTime() + 5_000_000_000
            while (!context.isCancelled() && System.nanoTime() < until) Thread.sleep(5)
            sawCancel.complete(context.isCancelled())
            ToolResult.Text("gave up")
        }
        server.tool(ToolDefinition(name = "awaits-cancel", timeoutMs = 100u)) { context, _ ->
            context.cancelled()
            ToolResult.Text("unreachable in practice")
        }
        RawClient(server).use { client ->
            client.initialize()
            client.call(1, "slow-blocking", "{}")
            val answer = client.recvObject()
            assertTrue(answer.isError() && answer.firstText().contains("timed out"), "$answer")
            assertTrue(runBlocking { withTimeout(5_000) { sawCancel.await() } })
            client.call(2, "awaits-cancel", "{}")
            val second = client.recvObject()
            assertTrue(second.isError() && second.firstText().contains("timed out"), "$second")
        }
    }

    @Test
    fun `progress and logs reach the client`() {
        val server = server()
        server.tool(ToolDefinition(name = "steps")) { context, _ ->
            assertTrue(context.wantsProgress())
            for (i in 1..3) assertTrue(context.progress(i.toDouble(), 3.0, "step $i"))
            assertFalse(context.progress(2.0), "progress must grow")
            assertFalse(context.log(LogLevel.DEBUG, "below the level"))
            assertTrue(context.log(LogLevel.WARNING, "careful", "steps"))
            assertTrue(context.logJson(LogLevel.ERROR, """{"code":7}"""))
            ToolResult.Text("done")
        }
        RawClient(server).use { client ->
            client.initialize()
            client.send("""{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"info"}}""")
            assertEquals(1, client.recvObject().getValue("id").jsonPrimitive.int)
            client.call(2, "steps", "{}", meta = """{"progressToken":"p"}""")
            val frames = (1..6).map { client.recvObject() }
            val progress = frames.filter { it["method"]?.jsonPrimitive?.content == "notifications/progress" }
            assertEquals(listOf(1, 2, 3), progress.map { it.getValue("params").jsonObject.getValue("progress").jsonPrimitive.int })
            assertEquals("step 3", progress[2].getValue("params").jsonObject.getValue("message").jsonPrimitive.content)
            val logs = frames.filter { it["method"]?.jsonPrimitive?.content == "notifications/message" }.map { it.getValue("params").jsonObject }
            assertEquals(listOf("warning", "error"), logs.map { it.getValue("level").jsonPrimitive.content })
            assertEquals("steps", logs[0].getValue("logger").jsonPrimitive.content)
            assertEquals(7, logs[1].getValue("data").jsonObject.getValue("code").jsonPrimitive.int)
            assertEquals("done", frames.last().firstText())
        }
    }

    @Test
    fun `the context knows the call and the client`() {
        val server = server()
        server.tool(ToolDefinition(name = "who")) { context, _ ->
            val info = context.clientInfo()
            ToolResult.Text(
                listOf((context.requestId() as RequestId.Text).value, context.toolName(), context.protocolVersion(), info?.name, info?.version).joinToString("|") +
                    "|" + context.clientCapabilitiesJson(),
            )
        }
        RawClient(server).use { client ->
            client.initialize("2025-06-18", """{"roots":{}}""")
            client.send("""{"jsonrpc":"2.0","id":"abc","method":"tools/call","params":{"name":"who","arguments":{}}}""")
            assertEquals("""abc|who|2025-06-18|kotlin-test|1.0|{"roots":{}}""", client.recvObject().firstText())
            assertEquals("2025-06-18", client.connection.protocolVersion())
        }
    }

    @Test
    fun `elicitation round trip, client errors and missing capabilities`() {
        val server = server()
        server.tool(ToolDefinition(name = "ask")) { context, _ ->
            val answer = context.elicit(
                """{"message":"Your name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}""",
            )
            ToolResult.Text("got $answer")
        }
        server.tool(ToolDefinition(name = "ask-fails")) { context, _ ->
            try {
                context.elicit("""{"message":"?","requestedSchema":{"type":"object","properties":{}}}""")
                ToolResult.Text("unexpected")
            } catch (e: ToolwireException.Client) {
                ToolResult.Text("client error ${e.code}: ${e.detail} ${e.dataJson}")
            }
        }
        server.tool(ToolDefinition(name = "sample")) { context, _ ->
            try {
                context.sample("""{"messages":[],"maxTokens":5}""")
                ToolResult.Text("unexpected")
            } catch (e: ToolwireException.Capability) {
                ToolResult.Text("capability: ${e.detail}")
            }
        }
        RawClient(server).use { client ->
            client.initialize(capabilities = """{"elicitation":{}}""")
            client.call(1, "ask", "{}")
            val request = client.recvObject()
            assertEquals("elicitation/create", request.getValue("method").jsonPrimitive.content)
            val id = request.getValue("id")
            client.send("""{"jsonrpc":"2.0","id":$id,"result":{"action":"accept","content":{"name":"Ada"}}}""")
            assertEquals("""got {"action":"accept","content":{"name":"Ada"}}""", client.recvObject().firstText())

            client.call(2, "ask-fails", "{}")
            val second = client.recvObject()
            client.send("""{"jsonrpc":"2.0","id":${second.getValue("id")},"error":{"code":-32001,"message":"user left","data":{"why":"bored"}}}""")
            assertEquals("""client error -32001: user left {"why":"bored"}""", client.recvObject().firstText())

            client.call(3, "sample", "{}")
            assertEquals("capability: the client did not declare the sampling capability", client.recvObject().firstText())
        }
    }

    @Test
    fun `tools added and removed while connected notify the client`() {
        val server = server()
        server.tool(ToolDefinition(name = "first")) { _, _ -> ToolResult.Text("1") }
        RawClient(server).use { client ->
            client.initialize()
            server.tool(ToolDefinition(name = "second")) { _, _ -> ToolResult.Text("2") }
            val notice = client.recvObject()
            assertEquals("notifications/tools/list_changed", notice.getValue("method").jsonPrimitive.content)
            client.send("""{"jsonrpc":"2.0","id":1,"method":"tools/list"}""")
            val names = client.recvObject().result().getValue("tools").jsonArray.map { it.jsonObject.getValue("name").jsonPrimitive.content }
            assertEquals(listOf("first", "second"), names)
            assertTrue(server.removeTool("first"))
            assertFalse(server.removeTool("first"))
            assertEquals("notifications/tools/list_changed", client.recvObject().getValue("method").jsonPrimitive.content)
        }
    }

    @Test
    fun `sessions are independent and a closed connection ends`() {
        val server = server()
        server.tool(ToolDefinition(name = "echo", inputSchemaJson = TEXT_ARG)) { _, args -> ToolResult.Text(args) }
        val a = RawClient(server)
        val b = RawClient(server)
        a.initialize("2025-03-26")
        b.send("""{"jsonrpc":"2.0","id":1,"method":"tools/list"}""")
        val refused = b.recvObject()
        assertNotEquals(null, refused["error"], "an uninitialized session must refuse: $refused")
        assertEquals("2025-03-26", a.connection.protocolVersion())
        assertNull(b.connection.protocolVersion())
        a.close()
        assertNull(runBlocking { withTimeout(5_000) { a.connection.recv() } })
        b.close()
    }

    @Test
    fun `server settings apply`() {
        val server = Server("configured", "2.0", "Use me well.", ServerConfig(title = "Configured", pageSize = 1u))
        server.tool(ToolDefinition(name = "a")) { _, _ -> ToolResult.Text("") }
        server.tool(ToolDefinition(name = "b", annotations = ToolAnnotations(readOnlyHint = true))) { _, _ -> ToolResult.Text("") }
        RawClient(server).use { client ->
            val result = client.initialize()
            assertEquals("Use me well.", result.getValue("instructions").jsonPrimitive.content)
            assertEquals("Configured", result.getValue("serverInfo").jsonObject.getValue("title").jsonPrimitive.content)
            client.send("""{"jsonrpc":"2.0","id":1,"method":"tools/list"}""")
            val page = client.recvObject().result()
            assertEquals(1, page.getValue("tools").jsonArray.size)
            val cursor = page.getValue("nextCursor")
            client.send("""{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":$cursor}}""")
            val tool = client.recvObject().result().getValue("tools").jsonArray[0].jsonObject
            assertEquals("b", tool.getValue("name").jsonPrimitive.content)
            assertTrue(tool.getValue("annotations").jsonObject.getValue("readOnlyHint").jsonPrimitive.boolean)
        }
    }

    @Test
    fun `text crosses to the engine exactly, and a lone surrogate is refused`() {
        // Every non-ASCII width and characters that look like JSON escapes, through the
        // bindings' string lowering (patched to the JDK's encoder, checked by decoding back).
        val text = "héllo ∑ 😀 \u0000 \\ \" \n end"
        val server = Server("kotlin-test", "1.0", text)
        server.tool(ToolDefinition(name = "described", description = text)) { _, _ -> ToolResult.Text("") }
        RawClient(server).use { client ->
            assertEquals(text, client.initialize().getValue("instructions").jsonPrimitive.content)
            client.send("""{"jsonrpc":"2.0","id":1,"method":"tools/list"}""")
            val tool = client.recvObject().result().getValue("tools").jsonArray[0].jsonObject
            assertEquals(text, tool.getValue("description").jsonPrimitive.content)
        }
        // Not valid UTF-16, so no UTF-8 for it: refused before it reaches the engine, as
        // UniFFI's own encoder refused it (getBytes alone would have sent a '?').
        assertThrows<java.nio.charset.CharacterCodingException> {
            server.tool(ToolDefinition(name = "lone", description = "half \uD83D of a pair")) { _, _ -> ToolResult.Text("") }
        }
        assertEquals(listOf("described"), server.toolNames())
    }

    @Test
    fun `the per-session and per-principal call limits are options and refuse 0`() {
        val refused = assertThrows<ToolwireException.InvalidArgument> {
            Server("limits", "1", null, ServerConfig(maxConcurrentCallsPerSession = 0u))
        }
        assertTrue(refused.detail.contains("max_concurrent_calls_per_session must be at least 1"), refused.detail)
        val principal = assertThrows<ToolwireException.InvalidArgument> {
            Server("limits", "1", null, ServerConfig(maxConcurrentCallsPerPrincipal = 0u))
        }
        assertTrue(principal.detail.contains("max_concurrent_calls_per_principal must be at least 1"), principal.detail)
        Server(
            "limits", "1", null,
            ServerConfig(maxConcurrentCallsPerSession = 2u, maxConcurrentCallsPerPrincipal = 4u, maxOutboundBytes = 65_536uL),
        ).destroy()
    }
}

class ForeignTraitLoadTest {
    @Test
    fun `foreign-trait handlers take sustained pipelined load`() {
        val server = Server("load", "1.0")
        server.tool(
            ToolDefinition(name = "echo", inputSchemaJson = TEXT_ARG),
            object : ToolHandler {
                override suspend fun call(context: CallContext, argumentsJson: String): ToolResult = ToolResult.Text(argumentsJson)
            },
        )
        server.blockingTool(
            ToolDefinition(name = "echo-blocking", inputSchemaJson = TEXT_ARG),
            object : BlockingToolHandler {
                override fun call(context: CallContext, argumentsJson: String): ToolResult = ToolResult.Text(argumentsJson)
            },
        )
        RawClient(server).use { client ->
            client.initialize()
            val total = 20_000
            var sent = 0
            var received = 0
            while (received < total) {
                while (sent < total && sent - received < 64) {
                    sent++
                    client.call(sent, if (sent % 2 == 0) "echo" else "echo-blocking", """{"text":"$sent"}""")
                }
                val answer = client.recvObject()
                val id = answer.getValue("id").jsonPrimitive.int
                assertEquals("""{"text":"$id"}""", answer.firstText())
                received++
            }
        }
    }
}
