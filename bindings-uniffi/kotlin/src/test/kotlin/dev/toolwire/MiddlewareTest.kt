package dev.toolwire

import dev.toolwire.testing.McpError
import dev.toolwire.testing.testClient
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.channels.Channel
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows
import org.junit.jupiter.params.ParameterizedTest
import org.junit.jupiter.params.provider.ValueSource
import org.slf4j.event.Level
import java.util.Collections

/**
 * `server.middleware { request, next -> }`: an allow-list by principal, a per-principal rate
 * limit and an audit log reading each outcome, in both protocol eras; refusals with a JSON-RPC
 * error or an isError result; a middleware that throws (or forgets `next()`) refuses its
 * request with -32603 and the server keeps serving. Tests wait for events, never sleep.
 */
class MiddlewareTest {
    /** One audit line: what the audit middleware heard of a request. */
    data class Line(val method: String, val name: String?, val kind: OutcomeKind, val code: Int?)

    private fun JsonObject.text() = getValue("content").jsonArray[0].jsonObject.getValue("text").jsonPrimitive.content

    private fun tools(server: Server) {
        server.tool(ToolDefinition("echo", inputSchemaJson = """{"type":"object","properties":{"text":{"type":"string"}}}""")) { _, args ->
            ToolResult.Text(Json.parseToJsonElement(args).jsonObject.getValue("text").jsonPrimitive.content)
        }
        server.tool(ToolDefinition("wipe")) { _, _ -> ToolResult.Text("wiped") }
        server.tool(ToolDefinition("fail")) { _, _ -> throw IllegalStateException("broken") }
        server.tool(ToolDefinition("strict")) { _, _ -> throw ToolwireException.Protocol(-32042, "strict says no", null) }
        server.prompt(PromptDefinition("strict-prompt")) { _ -> throw ToolwireException.Protocol(-32043, "not this prompt", null) }
    }

    /** The audit first (so it hears the allow-list's refusals), then the allow-list. */
    private fun auditedServer(audit: Channel<Line>, versions: MutableList<String?>, methods: MutableList<String>): Server {
        val server = Server("guarded", "1.0")
        tools(server)
        server.middleware("audit") { request, next ->
            methods.add(request.method)
            versions.add(request.protocolVersion)
            val outcome = next()
            assertTrue(outcome.elapsedMs >= 0.0, "elapsed ${outcome.elapsedMs}")
            audit.send(Line(request.method, request.name, outcome.kind, outcome.code))
        }
        server.middleware("allow-list") { request, next ->
            if (request.name == "wipe") throw ToolwireException.Handler("wipe is not allowed here")
            if (request.method == "prompts/list") {
                throw ToolwireException.Protocol(-32001, "Forbidden: no prompts for you", """{"rule":"prompts"}""")
            }
            next()
        }
        return server
    }

    @ParameterizedTest
    @ValueSource(strings = ["2025-11-25", "2026-07-28"])
    fun `middlewares refuse and observe, in both eras`(version: String) = runBlocking {
        val audit = Channel<Line>(Channel.UNLIMITED)
        val versions = Collections.synchronizedList(ArrayList<String?>())
        val methods = Collections.synchronizedList(ArrayList<String>())
        val server = auditedServer(audit, versions, methods)
        suspend fun heard() = withTimeout(10_000) { audit.receive() }
        server.testClient(protocolVersion = version).use { client ->
            assertEquals("hi", client.callTool("echo", """{"text":"hi"}""").text())
            assertEquals(Line("tools/call", "echo", OutcomeKind.RESULT, null), heard())

            val refused = client.callTool("wipe")
            assertEquals(JsonPrimitive(true), refused["isError"])
            assertEquals("wipe is not allowed here", refused.text())
            assertEquals(Line("tools/call", "wipe", OutcomeKind.REFUSED, null), heard())

            assertEquals(JsonPrimitive(true), client.callTool("fail")["isError"])
            assertEquals(Line("tools/call", "fail", OutcomeKind.TOOL_ERROR, null), heard())

            val forbidden = assertThrows<McpError> { runBlocking { client.listPrompts() } }
            assertEquals(-32001, forbidden.code)
            assertEquals("Forbidden: no prompts for you", forbidden.message)
            assertEquals(Json.parseToJsonElement("""{"rule":"prompts"}"""), forbidden.data)
            assertEquals(Line("prompts/list", null, OutcomeKind.REFUSED, null), heard())

            // A tool throwing ToolwireException.Protocol: that JSON-RPC error, not an isError result.
            val strict = assertThrows<McpError> { runBlocking { client.callTool("strict") } }
            assertEquals(-32042, strict.code)
            assertEquals(Line("tools/call", "strict", OutcomeKind.ERROR, -32042), heard())

            // From a prompt too.
            val prompt = assertThrows<McpError> { runBlocking { client.getPrompt("strict-prompt") } }
            assertEquals(-32043 to "not this prompt", prompt.code to prompt.message)
            assertEquals(Line("prompts/get", "strict-prompt", OutcomeKind.ERROR, -32043), heard())

            val unknown = assertThrows<McpError> { runBlocking { client.callTool("nope") } }
            assertEquals(-32602, unknown.code)
            assertEquals(Line("tools/call", "nope", OutcomeKind.ERROR, -32602), heard())
        }
        // `initialize` (and 2026-07-28's discovery) passes no middleware; the rest carry the era.
        assertFalse("initialize" in methods, "$methods")
        assertFalse("server/discover" in methods, "$methods")
        assertEquals(listOf("tools/call", "tools/call", "tools/call", "prompts/list", "tools/call", "prompts/get", "tools/call"), methods.toList())
        assertEquals(List(methods.size) { version }, versions.toList())
    }

    @Test
    fun `an allow-list and a rate limit by principal, over HTTP with bearer tokens, in both eras`() {
        val server = Server("tokens", "1.0")
        tools(server)
        val calls = HashMap<String, Int>()
        val principals = Collections.synchronizedList(ArrayList<String?>())
        server.middleware("allow-list") { request, next ->
            principals.add(request.principal)
            if (request.principal !in setOf("ada", "bob")) {
                throw ToolwireException.Protocol(-32001, "Forbidden: ${request.principal} is not on the list", null)
            }
            next()
        }
        server.middleware("rate-limit") { request, next ->
            if (request.method == "tools/call") {
                val key = request.principal ?: "anonymous"
                val count = synchronized(calls) { calls.merge(key, 1, Int::plus)!! }
                if (count > 2) throw ToolwireException.Protocol(-32029, "Too many requests from $key", null)
            }
            next()
        }
        val validator = object : BearerTokenValidator {
            override fun validate(token: String) = when (token) {
                "ada-token" -> TokenVerdict.Granted(TokenGrant("ada", listOf("mcp")))
                "bob-token" -> TokenVerdict.Granted(TokenGrant("bob", listOf("mcp")))
                "eve-token" -> TokenVerdict.Granted(TokenGrant("eve", listOf("mcp")))
                else -> TokenVerdict.Invalid
            }
        }
        val http = server.serveHttp("127.0.0.1", 0u, null, validator)
        try {
            // Ada: a 2025-11-25 session.
            val opened = post(http.url(), initialize, "authorization", "Bearer ada-token")
            assertEquals(200, opened.statusCode())
            val session = opened.headers().firstValue("mcp-session-id").orElseThrow()
            val ada = arrayOf("authorization", "Bearer ada-token", "mcp-session-id", session, "mcp-protocol-version", "2025-11-25")
            assertEquals(202, post(http.url(), """{"jsonrpc":"2.0","method":"notifications/initialized"}""", *ada).statusCode())
            for (id in 2..3) assertEquals("ada", message(post(http.url(), echo(id, "ada"), *ada)).getValue("result").jsonObject.text())
            val limited = message(post(http.url(), echo(4, "ada"), *ada)).getValue("error").jsonObject
            assertEquals(-32029, limited.getValue("code").jsonPrimitive.content.toInt())
            assertEquals("Too many requests from ada", limited.getValue("message").jsonPrimitive.content)
            // Ada's limit is not Bob's: Bob, in 2026-07-28 stateless requests, has his own two.
            val bob = arrayOf("authorization", "Bearer bob-token") + modern
            for (id in 5..6) assertEquals("bob", message(post(http.url(), modernEcho(id, "bob"), *bob)).getValue("result").jsonObject.text())
            val bobLimited = message(post(http.url(), modernEcho(7, "bob"), *bob)).getValue("error").jsonObject
            assertEquals("Too many requests from bob", bobLimited.getValue("message").jsonPrimitive.content)
            // Eve's token is valid, but she is not on the list (in either era).
            val eve = arrayOf("authorization", "Bearer eve-token") + modern
            val refused = message(post(http.url(), modernEcho(8, "eve"), *eve)).getValue("error").jsonObject
            assertEquals(-32001, refused.getValue("code").jsonPrimitive.content.toInt())
            assertEquals("Forbidden: eve is not on the list", refused.getValue("message").jsonPrimitive.content)
            // The list never saw initialize; it saw each principal's requests.
            assertEquals(listOf("ada", "ada", "ada", "bob", "bob", "bob", "eve"), principals.toList())
            assertNull(calls["eve"], "a refused request never reaches a later middleware")
        } finally {
            http.stop()
            http.waitBlocking()
            http.destroy()
        }
    }

    @Test
    fun `a middleware that throws or forgets next() refuses with -32603, is logged, and the server keeps serving`() = runBlocking {
        val server = Server("broken", "1.0")
        tools(server)
        server.middleware("faulty") { request, next ->
            if (request.name == "echo") throw IllegalStateException("the rule's database is down")
            next()
        }
        server.middleware("forgetful") { request, next ->
            if (request.method == "resources/list") return@middleware
            next()
        }
        server.middleware("picky") { request, next ->
            // A tool error for a method other than tools/call: a -32603 error with its text.
            if (request.method == "prompts/list") throw ToolwireException.Handler("no prompts today")
            next()
        }
        CapturedLogs.clear()
        server.testClient().use { client ->
            val failed = assertThrows<McpError> { runBlocking { client.callTool("echo", """{"text":"x"}""") } }
            assertEquals(-32603, failed.code)
            assertEquals("Internal error: middleware faulty failed", failed.message)
            val logged = CapturedLogs.await(10_000) { it.logger == "toolwire.middleware" && it.level == Level.ERROR }
            assertTrue(logged.message.contains("middleware faulty failed"), logged.message)

            val dropped = assertThrows<McpError> { runBlocking { client.listResources() } }
            assertEquals(-32603, dropped.code)
            assertEquals("Internal error: middleware forgetful returned without calling next()", dropped.message)

            val picky = assertThrows<McpError> { runBlocking { client.listPrompts() } }
            assertEquals(-32603, picky.code)
            assertEquals("no prompts today", picky.message)

            // The server keeps serving.
            assertEquals(JsonPrimitive(true), client.callTool("fail")["isError"])
            assertEquals(listOf("echo", "fail", "strict", "wipe"), client.listTools().map { it.getValue("name").jsonPrimitive.content })
        }
    }

    @Test
    fun `middlewares run in the order added, and an earlier one hears a later one's refusal`() = runBlocking {
        val server = Server("layers", "1.0")
        tools(server)
        val order = Collections.synchronizedList(ArrayList<String>())
        val heard = CompletableDeferred<Outcome>()
        val passed = Channel<Outcome>(Channel.UNLIMITED)
        server.middleware("first") { request, next ->
            order.add("first ${request.name}")
            val outcome = next()
            if (request.name == "wipe") heard.complete(outcome) else passed.send(outcome)
        }
        server.middleware("second") { request, next ->
            order.add("second ${request.name}")
            if (request.name == "wipe") throw ToolwireException.Protocol(-32001, "Forbidden", null)
            next()
        }
        server.middleware("third") { request, next ->
            order.add("third ${request.name}")
            next()
        }
        server.testClient().use { client ->
            assertEquals("a", client.callTool("echo", """{"text":"a"}""").text())
            assertEquals(OutcomeKind.RESULT, withTimeout(10_000) { passed.receive() }.kind)
            assertEquals(listOf("first echo", "second echo", "third echo"), order.toList())
            order.clear()
            val refused = assertThrows<McpError> { runBlocking { client.callTool("wipe") } }
            assertEquals(-32001, refused.code)
            val outcome = withTimeout(10_000) { heard.await() }
            assertEquals(OutcomeKind.REFUSED, outcome.kind)
            assertNull(outcome.code)
            assertTrue(outcome.elapsedMs >= 0.0)
            // The third never saw the refused request.
            assertEquals(listOf("first wipe", "second wipe"), order.toList())
        }
    }

    @Test
    fun `a middleware sees the request's arguments and id, and next() is called once`() = runBlocking {
        val server = Server("seen", "1.0")
        tools(server)
        val seen = CompletableDeferred<RequestInfo>()
        val twice = CompletableDeferred<Throwable>()
        server.middleware { request, next ->
            if (request.name == "echo") seen.complete(request)
            next()
            if (request.name == "echo") twice.complete(runCatching { next() }.exceptionOrNull() ?: AssertionError("no throw"))
        }
        server.testClient().use { client ->
            assertEquals("hello", client.callTool("echo", """{"text":"hello"}""").text())
            val request = withTimeout(10_000) { seen.await() }
            assertEquals("tools/call", request.method)
            assertEquals(Json.parseToJsonElement("""{"text":"hello"}"""), Json.parseToJsonElement(request.argumentsJson!!))
            assertNull(request.principal)
            assertTrue(request.requestId is RequestId.Number, "${request.requestId}")
            val second = withTimeout(10_000) { twice.await() }
            assertTrue(second is IllegalStateException && second.message!!.contains("once"), "$second")
        }
    }

    private val initialize = """{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"""

    private fun echo(id: Int, text: String) =
        """{"jsonrpc":"2.0","id":$id,"method":"tools/call","params":{"name":"echo","arguments":{"text":"$text"}}}"""

    private fun modernEcho(id: Int, text: String) =
        """{"jsonrpc":"2.0","id":$id,"method":"tools/call","params":{"name":"echo","arguments":{"text":"$text"},""" +
            """"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"""

    private val modern = arrayOf("mcp-protocol-version", "2026-07-28", "mcp-method", "tools/call", "mcp-name", "echo")
}
