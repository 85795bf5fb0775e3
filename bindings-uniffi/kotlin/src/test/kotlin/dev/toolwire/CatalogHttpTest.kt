package dev.toolwire

import kotlinx.coroutines.delay
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.int
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows
import java.net.URI
import java.net.http.HttpClient
import java.net.http.HttpRequest
import java.net.http.HttpResponse

/** Resources, templates, prompts, completion and Streamable HTTP from Kotlin. */
class CatalogHttpTest {
    private fun json(text: String) = Json.parseToJsonElement(text)

    private fun catalogServer(): Server {
        val server = Server("catalog", "1")
        server.resource(ResourceDefinition("memo://readme", "readme", description = "The read-me.", mimeType = "text/plain")) { uri, _ ->
            listOf(ResourceContent(uri, text = "read me"))
        }
        server.resource(ResourceDefinition("memo://notes/{day}", "notes", mimeType = "text/plain")) { uri, variables ->
            delay(5)
            val day = variables.getValue("day")
            if (day == "never") throw ToolwireException.NotFound("no notes for $day")
            listOf(ResourceContent(uri, text = "notes of $day"))
        }
        server.resource(ResourceDefinition("memo://broken", "broken")) { _, _ -> throw IllegalStateException("disk on fire") }
        server.prompt(
            PromptDefinition("greet", description = "Greets", arguments = listOf(PromptArgumentDefinition("name", required = true))),
        ) { args ->
            PromptRendering(listOf(PromptMessageRecord(PromptRole.USER, ContentBlock.Text("Hello ${args["name"]}"))))
        }
        server.promptCompletion("greet") { _, value, _ -> listOf("ada", "alan", "grace").filter { it.startsWith(value) } }
        server.tool(ToolDefinition("shout", inputSchemaJson = """{"type":"object","properties":{"text":{"type":"string"}}}""")) { context, args ->
            context.progress(1.0, 2.0, null)
            delay(5)
            ToolResult.Text(Json.parseToJsonElement(args).jsonObject.getValue("text").jsonPrimitive.content.uppercase())
        }
        return server
    }

    private fun RawClient.request(id: Int, method: String, params: String = "{}"): JsonObject {
        send("""{"jsonrpc":"2.0","id":$id,"method":"$method","params":$params}""")
        return recvObject()
    }

    @Test
    fun `resources read, missing ones are -32002, failures -32603`() {
        RawClient(catalogServer()).use { client ->
            val caps = client.initialize().getValue("capabilities").jsonObject
            assertEquals(json("""{"subscribe":true,"listChanged":true}"""), caps.getValue("resources"))
            assertEquals("{}", caps.getValue("completions").toString())
            val listed = client.request(1, "resources/list").getValue("result").jsonObject.getValue("resources").jsonArray
            assertEquals(listOf("memo://broken", "memo://readme"), listed.map { it.jsonObject.getValue("uri").jsonPrimitive.content })
            val readme = client.request(2, "resources/read", """{"uri":"memo://readme"}""")
            assertEquals(
                json("""[{"uri":"memo://readme","mimeType":"text/plain","text":"read me"}]"""),
                readme.getValue("result").jsonObject.getValue("contents"),
            )
            val notes = client.request(3, "resources/read", """{"uri":"memo://notes/monday"}""")
            assertEquals("notes of monday", notes.getValue("result").jsonObject.getValue("contents").jsonArray[0].jsonObject.getValue("text").jsonPrimitive.content)
            for ((id, uri) in listOf(4 to "memo://nothing", 5 to "memo://notes/never")) {
                val error = client.request(id, "resources/read", """{"uri":"$uri"}""").getValue("error").jsonObject
                assertEquals(-32002, error.getValue("code").jsonPrimitive.int)
            }
            val broken = client.request(6, "resources/read", """{"uri":"memo://broken"}""").getValue("error").jsonObject
            assertEquals(-32603, broken.getValue("code").jsonPrimitive.int)
            assertTrue(broken.getValue("message").jsonPrimitive.content.contains("disk on fire"))
        }
    }

    @Test
    fun `prompts render, check arguments and complete`() {
        RawClient(catalogServer()).use { client ->
            client.initialize()
            val got = client.request(1, "prompts/get", """{"name":"greet","arguments":{"name":"Ada"}}""")
            assertEquals(
                json("""[{"role":"user","content":{"type":"text","text":"Hello Ada"}}]"""),
                got.getValue("result").jsonObject.getValue("messages"),
            )
            val missing = client.request(2, "prompts/get", """{"name":"greet","arguments":{}}""")
            assertEquals(-32602, missing.getValue("error").jsonObject.getValue("code").jsonPrimitive.int)
            val completed = client.request(
                3,
                "completion/complete",
                """{"ref":{"type":"ref/prompt","name":"greet"},"argument":{"name":"name","value":"a"}}""",
            )
            assertEquals(json("""{"values":["ada","alan"],"hasMore":false}"""), completed.getValue("result").jsonObject.getValue("completion"))
        }
    }

    @Test
    fun `registration errors`() {
        val server = catalogServer()
        // Every refused definition is a Registration error, as a refused tool is.
        val duplicate = assertThrows<ToolwireException.Registration> {
            server.resource(ResourceDefinition("memo://readme", "again")) { _, _ -> emptyList() }
        }
        assertTrue(duplicate.detail.contains("already registered"), duplicate.detail)
        assertThrows<ToolwireException.Registration> {
            server.resource(ResourceDefinition("memo://{a}{b}", "bad")) { _, _ -> emptyList() }
        }
        assertThrows<ToolwireException.Registration> { server.promptCompletion("nope") { _, _, _ -> emptyList() } }
    }

    private val init = """{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"""

    @Test
    fun `serveHttp with sessions, queued tools, resources and stop`() {
        val http = catalogServer().serveHttp("127.0.0.1", 0u)
        try {
            assertTrue(http.url().matches(Regex("http://127\\.0\\.0\\.1:\\d+/mcp")), http.url())
            val opened = post(http.url(), init)
            assertEquals(200, opened.statusCode())
            val session = opened.headers().firstValue("mcp-session-id").orElseThrow()
            val shout = post(
                http.url(),
                """{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"shout","arguments":{"text":"hi"}}}""",
                "mcp-session-id", session, "mcp-protocol-version", "2025-11-25",
            )
            assertEquals("HI", message(shout).getValue("result").jsonObject.getValue("content").jsonArray[0].jsonObject.getValue("text").jsonPrimitive.content)
            val notes = post(http.url(), """{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"memo://notes/friday"}}""", "mcp-session-id", session)
            assertTrue(notes.body().contains("notes of friday"))
            assertEquals(403, post(http.url(), init, "origin", "http://evil.example.com").statusCode())
            assertEquals(404, post(http.url(), init.replace("initialize", "ping"), "mcp-session-id", "0123").statusCode())
        } finally {
            http.stop()
            http.waitBlocking()
            http.destroy()
        }
    }

    @Test
    fun `serveHttp with a token validator, stateless`() {
        val validator = object : BearerTokenValidator {
            override fun validate(token: String) = when (token) {
                "good" -> TokenVerdict.Granted(TokenGrant("ada", listOf("mcp")))
                "narrow" -> TokenVerdict.InsufficientScope("mcp:write")
                else -> TokenVerdict.Invalid
            }
        }
        val http = catalogServer().serveHttp(
            "127.0.0.1",
            0u,
            HttpServerOptions(stateless = true, authorizationServers = listOf("https://auth.example")),
            validator,
        )
        try {
            val missing = post(http.url(), init)
            assertEquals(401, missing.statusCode())
            assertTrue(missing.headers().firstValue("www-authenticate").orElse("").contains("resource_metadata="))
            assertEquals(401, post(http.url(), init, "authorization", "Bearer bad").statusCode())
            val narrow = post(http.url(), init, "authorization", "Bearer narrow")
            assertEquals(403, narrow.statusCode())
            assertTrue(narrow.headers().firstValue("www-authenticate").orElse("").contains("insufficient_scope"))
            val ok = post(
                http.url(),
                """{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"shout","arguments":{"text":"x"}}}""",
                "authorization", "Bearer good",
            )
            assertEquals(200, ok.statusCode())
            assertNull(ok.headers().firstValue("mcp-session-id").orElse(null))
            assertEquals("X", message(ok).getValue("result").jsonObject.getValue("content").jsonArray[0].jsonObject.getValue("text").jsonPrimitive.content)
            val port = URI(http.url()).port
            assertThrows<ToolwireException.Transport> { catalogServer().serveHttp("127.0.0.1", port.toUShort()) }
        } finally {
            http.stop()
            http.waitBlocking()
            http.destroy()
        }
    }

    @Test
    fun `serveHttp answers in the response mode asked for`() {
        val call = """{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"shout","arguments":{"text":"x"}}}"""
        // Auto answers in JSON only when the answer is ready as the request is read; a queued
        // Kotlin tool runs on its own thread, so either is right there.
        val modes = listOf(
            HttpServerOptions(stateless = true) to setOf("application/json", "text/event-stream"),
            HttpServerOptions(stateless = true, jsonResponse = true) to setOf("application/json"),
            HttpServerOptions(stateless = true, responseMode = HttpResponseMode.JSON) to setOf("application/json"),
            HttpServerOptions(stateless = true, responseMode = HttpResponseMode.SSE) to setOf("text/event-stream"),
        )
        for ((options, contentTypes) in modes) {
            val http = catalogServer().serveHttp("127.0.0.1", 0u, options)
            try {
                val reply = post(http.url(), call)
                assertEquals(200, reply.statusCode())
                val contentType = reply.headers().firstValue("content-type").orElse("")
                assertTrue(contentType in contentTypes, "$contentType for $options")
                assertEquals("X", message(reply).getValue("result").jsonObject.getValue("content").jsonArray[0].jsonObject.getValue("text").jsonPrimitive.content)
            } finally {
                http.stop()
                http.waitBlocking()
                http.destroy()
            }
        }
        val both = HttpServerOptions(responseMode = HttpResponseMode.SSE, jsonResponse = true)
        val refused = assertThrows<ToolwireException.InvalidArgument> { catalogServer().serveHttp("127.0.0.1", 0u, both) }
        assertTrue(refused.detail.contains("JSON answers asked for beside the \"sse\""), refused.detail)
    }

    @Test
    fun `serveHttp cuts off a trickled head and caps connections`() {
        val slow = catalogServer().serveHttp("127.0.0.1", 0u, HttpServerOptions(headerReadTimeoutMs = 200uL))
        try {
            java.net.Socket("127.0.0.1", URI(slow.url()).port).use { trickling ->
                trickling.soTimeout = 10_000
                trickling.getOutputStream().write("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ".toByteArray())
                // Closed at the limit: the read ends with nothing.
                assertEquals(-1, trickling.getInputStream().read())
            }
        } finally {
            slow.stop()
            slow.waitBlocking()
            slow.destroy()
        }
        val capped = catalogServer().serveHttp("127.0.0.1", 0u, HttpServerOptions(maxConnections = 1u))
        try {
            val client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build()
            val request = HttpRequest.newBuilder(URI(capped.url()))
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream")
                .POST(HttpRequest.BodyPublishers.ofString(init))
                .build()
            // Served and kept alive by the client's pool: the one connection allowed is taken.
            assertEquals(200, client.send(request, HttpResponse.BodyHandlers.ofString()).statusCode())
            java.net.Socket("127.0.0.1", URI(capped.url()).port).use { extra ->
                extra.soTimeout = 10_000
                val refused = extra.getInputStream().readAllBytes().decodeToString()
                assertTrue(refused.startsWith("HTTP/1.1 503"), refused)
                assertTrue(refused.contains("too many open connections"), refused)
            }
        } finally {
            capped.stop()
            capped.waitBlocking()
            capped.destroy()
        }
        val refused = assertThrows<ToolwireException.InvalidArgument> {
            catalogServer().serveHttp("127.0.0.1", 0u, HttpServerOptions(maxConnections = 0u))
        }
        assertTrue(refused.detail.contains("max_connections"), refused.detail)
    }

    @Test
    fun `one client holds at most maxSessionsPerClient sessions, its idle one making room`() {
        val http = catalogServer().serveHttp("127.0.0.1", 0u, HttpServerOptions(maxSessionsPerClient = 1u))
        try {
            val client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build()
            fun post(body: String, session: String? = null): HttpResponse<String> {
                val request = HttpRequest.newBuilder(URI(http.url()))
                    .header("content-type", "application/json")
                    .header("accept", "application/json, text/event-stream")
                if (session != null) {
                    request.header("mcp-session-id", session).header("mcp-protocol-version", "2025-11-25")
                }
                return client.send(request.POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString())
            }
            val ping = """{"jsonrpc":"2.0","id":2,"method":"ping"}"""
            val first = post(init).headers().firstValue("mcp-session-id").orElseThrow()
            assertEquals(200, post(ping, first).statusCode())
            // The same client (address) opens another: its idle first session makes room.
            val second = post(init).headers().firstValue("mcp-session-id").orElseThrow()
            assertEquals(404, post(ping, first).statusCode())
            assertEquals(200, post(ping, second).statusCode())
        } finally {
            http.stop()
            http.waitBlocking()
            http.destroy()
        }
        val refused = assertThrows<ToolwireException.InvalidArgument> {
            catalogServer().serveHttp("127.0.0.1", 0u, HttpServerOptions(maxSessionsPerClient = 0u))
        }
        assertTrue(refused.detail.contains("max_sessions_per_client"), refused.detail)
        // The slow-reader bound reaches the engine (which checks it); its behaviour is core's test.
        val noBuffer = assertThrows<ToolwireException.InvalidArgument> {
            catalogServer().serveHttp("127.0.0.1", 0u, HttpServerOptions(maxSseBufferedBytes = 0u))
        }
        assertTrue(noBuffer.detail.contains("max_sse_buffered_bytes"), noBuffer.detail)
    }
}
