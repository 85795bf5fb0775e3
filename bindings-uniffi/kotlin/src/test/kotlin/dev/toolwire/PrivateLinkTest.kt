package dev.toolwire

import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.boolean
import kotlinx.serialization.json.int
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows
import java.net.URI
import java.net.http.HttpClient
import java.net.http.HttpRequest
import java.net.http.HttpResponse

/**
 * The wrapper's private interface to the library (NativeLink.kt ↔ jvm_abi.rs): every value that
 * crosses it, in both directions, through a real server. Also the vocabulary the languages share
 * (list roots, timeouts on client requests, results with every field, `stop()`).
 */
class PrivateLinkTest {
    private fun server() = Server("link-test", "1.0")

    private fun JsonObject.result() = getValue("result").jsonObject

    private fun JsonObject.firstText() = result().getValue("content").jsonArray[0].jsonObject.getValue("text").jsonPrimitive.content

    @Test
    fun `every kind of result crosses back, in one batch and alone`() {
        val server = server()
        server.tool(ToolDefinition(name = "text")) { _, _ -> ToolResult.Text("plain é") }
        server.tool(ToolDefinition(name = "structured")) { _, _ -> ToolResult.Structured("""{"n":1}""") }
        server.tool(ToolDefinition(name = "error")) { _, _ -> ToolResult.Error("it broke") }
        server.tool(ToolDefinition(name = "content")) { _, _ ->
            ToolResult.Content(
                listOf(ContentBlock.Text("one"), ContentBlock.Image("aGk=", "image/png")),
                structuredJson = """{"n":2}""",
                isError = true,
                metaJson = """{"trace":"t1"}""",
            )
        }
        RawClient(server).use { client ->
            client.initialize()
            for ((id, name) in listOf("text", "structured", "error", "content").withIndex()) client.call(id + 1, name, "{}")
            val byId = (1..4).map { client.recvObject() }.associateBy { it.getValue("id").jsonPrimitive.int }
            assertEquals("plain é", byId.getValue(1).firstText())
            assertEquals(1, byId.getValue(2).result().getValue("structuredContent").jsonObject.getValue("n").jsonPrimitive.int)
            assertEquals("it broke", byId.getValue(3).firstText())
            assertTrue(byId.getValue(3).result().getValue("isError").jsonPrimitive.boolean)
            val content = byId.getValue(4).result()
            assertEquals(listOf("text", "image"), content.getValue("content").jsonArray.map { it.jsonObject.getValue("type").jsonPrimitive.content })
            assertEquals(2, content.getValue("structuredContent").jsonObject.getValue("n").jsonPrimitive.int)
            assertTrue(content.getValue("isError").jsonPrimitive.boolean)
            assertEquals("t1", content.getValue("_meta").jsonObject.getValue("trace").jsonPrimitive.content)
        }
    }

    @Test
    fun `arguments larger than the take buffer arrive whole`() {
        val server = server()
        server.tool(ToolDefinition(name = "len")) { _, args -> ToolResult.Text(args.length.toString()) }
        val big = "x".repeat(600_000)
        RawClient(server).use { client ->
            client.initialize()
            client.call(1, "len", """{"s":"$big"}""")
            assertEquals((big.length + 8).toString(), client.recvObject().firstText())
        }
    }

    @Test
    fun `a bad definition is refused through the private interface with the library's error`() {
        val server = server()
        val refused = assertThrows<ToolwireException.Registration> {
            server.tool(ToolDefinition(name = "bad name!")) { _, _ -> ToolResult.Text("never") }
        }
        assertTrue(refused.detail.contains("bad name!"), refused.detail)
        server.tool(ToolDefinition(name = "twice")) { _, _ -> ToolResult.Text("1") }
        assertThrows<ToolwireException.Registration> {
            server.blockingTool(ToolDefinition(name = "twice")) { _, _ -> ToolResult.Text("2") }
        }
        assertEquals(listOf("twice"), server.toolNames())
    }

    @Test
    fun `list roots returns the roots, and its timeout works`() {
        val server = server()
        server.tool(ToolDefinition(name = "roots")) { context, _ ->
            val roots = context.listRoots()
            ToolResult.Text(roots.joinToString { "${it.uri} ${it.name} ${it.metaJson}" })
        }
        server.tool(ToolDefinition(name = "impatient")) { context, _ ->
            try {
                context.listRoots(timeoutMs = 50u)
                ToolResult.Text("answered")
            } catch (e: ToolwireException.Timeout) {
                ToolResult.Text("timed out")
            }
        }
        RawClient(server).use { client ->
            client.initialize(capabilities = """{"roots":{}}""")
            client.call(1, "roots", "{}")
            val request = client.recvObject()
            assertEquals("roots/list", request.getValue("method").jsonPrimitive.content)
            client.send(
                """{"jsonrpc":"2.0","id":${request.getValue("id")},"result":{"roots":[{"uri":"file:///w","name":"work","_meta":{"k":1}},{"uri":"file:///t"}]}}""",
            )
            assertEquals("""file:///w work {"k":1}, file:///t null null""", client.recvObject().firstText())

            // Never answered: the timeout ends the wait and the client is told.
            client.call(2, "impatient", "{}")
            assertEquals("roots/list", client.recvObject().getValue("method").jsonPrimitive.content)
            assertEquals("notifications/cancelled", client.recvObject().getValue("method").jsonPrimitive.content)
            assertEquals("timed out", client.recvObject().firstText())
        }
    }

    @Test
    fun `sample and elicit time out too`() {
        val server = server()
        server.tool(ToolDefinition(name = "sample")) { context, _ ->
            try {
                context.sample("""{"messages":[],"maxTokens":5}""", timeoutMs = 50u)
                ToolResult.Text("answered")
            } catch (e: ToolwireException.Timeout) {
                ToolResult.Text("timed out")
            }
        }
        server.tool(ToolDefinition(name = "elicit")) { context, _ ->
            try {
                context.elicit("""{"message":"?","requestedSchema":{"type":"object","properties":{}}}""", timeoutMs = 50u)
                ToolResult.Text("answered")
            } catch (e: ToolwireException.Timeout) {
                ToolResult.Text("timed out")
            }
        }
        RawClient(server).use { client ->
            client.initialize(capabilities = """{"sampling":{},"elicitation":{}}""")
            for ((id, pair) in listOf("sample" to "sampling/createMessage", "elicit" to "elicitation/create").withIndex()) {
                client.call(id + 1, pair.first, "{}")
                assertEquals(pair.second, client.recvObject().getValue("method").jsonPrimitive.content)
                assertEquals("notifications/cancelled", client.recvObject().getValue("method").jsonPrimitive.content)
                assertEquals("timed out", client.recvObject().firstText())
            }
        }
    }

    @Test
    fun `a handler's own timeout fails its call instead of leaving it unanswered`() {
        val server = server()
        server.tool(ToolDefinition(name = "at-once")) { _, _ ->
            kotlinx.coroutines.withTimeout(0) { ToolResult.Text("never") }
        }
        server.tool(ToolDefinition(name = "later")) { _, _ ->
            kotlinx.coroutines.withTimeout(20) { kotlinx.coroutines.awaitCancellation() }
        }
        server.blockingTool(ToolDefinition(name = "blocking")) { _, _ ->
            throw java.util.concurrent.CancellationException("gave up")
        }
        RawClient(server).use { client ->
            client.initialize()
            for ((id, name) in listOf("at-once", "later", "blocking").withIndex()) {
                client.call(id + 1, name, "{}")
                val answer = client.recvObject()
                assertTrue(answer.result().getValue("isError").jsonPrimitive.boolean, "$name: $answer")
            }
        }
    }

    @Test
    fun `stop ends the HTTP servers the server started`() {
        val server = server()
        server.tool(ToolDefinition(name = "hi")) { _, _ -> ToolResult.Text("hi") }
        val first = server.serveHttp("127.0.0.1", 0u)
        val second = server.serveHttp("127.0.0.1", 0u)
        try {
            server.stop()
            // Each returns once its server has stopped and its sessions ended.
            first.waitBlocking()
            second.waitBlocking()
            val refused = runCatching {
                HttpClient.newHttpClient().send(
                    HttpRequest.newBuilder(URI(first.url())).POST(HttpRequest.BodyPublishers.ofString("{}")).build(),
                    HttpResponse.BodyHandlers.ofString(),
                )
            }
            assertTrue(refused.isFailure, "the port no longer accepts")
            // The server itself serves again afterwards.
            val third = server.serveHttp("127.0.0.1", 0u)
            third.stop()
            third.waitBlocking()
            third.destroy()
        } finally {
            first.destroy()
            second.destroy()
        }
    }

    @Test
    fun `request ids keep their type`() {
        val server = server()
        server.tool(ToolDefinition(name = "id")) { context, _ ->
            ToolResult.Text(
                when (val id = context.requestId()) {
                    is RequestId.Number -> "number ${id.value}"
                    is RequestId.Text -> "text ${id.value}"
                },
            )
        }
        RawClient(server).use { client ->
            client.initialize()
            client.call(7, "id", "{}")
            assertEquals("number 7", client.recvObject().firstText())
            client.send("""{"jsonrpc":"2.0","id":"7","method":"tools/call","params":{"name":"id","arguments":{}}}""")
            assertEquals("text 7", client.recvObject().firstText())
        }
    }

    @Test
    fun `client info carries the whole clientInfo`() {
        val server = server()
        server.tool(ToolDefinition(name = "who")) { context, _ ->
            val info = context.clientInfo()
            ToolResult.Text("${info?.description} ${info?.websiteUrl} ${Json.parseToJsonElement(context.clientInfoJson()).jsonObject["icons"]}")
        }
        RawClient(server).use { client ->
            client.send(
                """{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},""" +
                    """"clientInfo":{"name":"c","version":"1","description":"a client","websiteUrl":"https://c.example","icons":[{"src":"https://c.example/i.png"}]}}}""",
            )
            client.recvObject()
            client.send("""{"jsonrpc":"2.0","method":"notifications/initialized"}""")
            client.call(1, "who", "{}")
            assertEquals("""a client https://c.example [{"src":"https://c.example/i.png"}]""", client.recvObject().firstText())
        }
    }
}

class StdioClaimTest {
    @Test
    fun `stdin is served by one loop at a time in a process`() {
        val server = Server("claim-test", "1.0")
        // Opening reads nothing: it only claims stdin and takes its descriptors.
        val first = NativeLink.openStdio(server)
        try {
            val busy = assertThrows<ToolwireException.Busy> { NativeLink.openStdio(Server("other", "1.0")) }
            assertTrue(busy.detail.contains("stdin"), busy.detail)
        } finally {
            NativeLink.closeStdio(first)
        }
        NativeLink.closeStdio(NativeLink.openStdio(server))
    }
}
