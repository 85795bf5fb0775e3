package dev.toolwire.ktor

import dev.toolwire.BearerTokenValidator
import dev.toolwire.HttpEndpointOptions
import dev.toolwire.Server
import dev.toolwire.ServerConfig
import dev.toolwire.ToolDefinition
import dev.toolwire.TokenGrant
import dev.toolwire.TokenVerdict
import dev.toolwire.ToolResult
import dev.toolwire.blockingTool
import dev.toolwire.lifespan
import dev.toolwire.lifespanContext
import dev.toolwire.tool
import io.ktor.client.HttpClient
import io.ktor.client.request.delete
import io.ktor.client.request.get
import io.ktor.client.request.header
import io.ktor.client.request.post
import io.ktor.client.request.setBody
import io.ktor.client.statement.HttpResponse
import io.ktor.client.statement.bodyAsText
import io.ktor.http.ContentType
import io.ktor.http.contentType
import io.ktor.server.cio.CIO
import io.ktor.server.engine.embeddedServer
import io.ktor.server.response.respondText
import io.ktor.server.routing.get
import io.ktor.server.routing.routing
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeout
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.params.ParameterizedTest
import org.junit.jupiter.params.provider.ValueSource
import java.net.Socket
import kotlin.coroutines.cancellation.CancellationException
import io.ktor.client.engine.cio.CIO as ClientCIO

/** `routing { mcp("/mcp", server) }` in an embedded Ktor (CIO) app with a route of its own. */
class KtorMountTest {
    private class Events {
        val lifespanStarted = CompletableDeferred<Unit>()
        val lifespanStopped = CompletableDeferred<Unit>()
        val waiting = CompletableDeferred<Unit>()
        val cancelled = CompletableDeferred<Unit>()
    }

    private fun weatherServer(events: Events, config: ServerConfig? = null): Server {
        val server = Server("weather", "1.0", config = config)
        server.lifespan(
            start = {
                events.lifespanStarted.complete(Unit)
                "Blindern"
            },
            stop = { events.lifespanStopped.complete(Unit) },
        )
        server.tool(
            ToolDefinition(
                "forecast",
                inputSchemaJson = """{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}""",
            ),
        ) { context, args ->
            context.progress(1.0, 2.0, "fetching")
            val city = Json.parseToJsonElement(args).jsonObject.getValue("city").jsonPrimitive.content
            ToolResult.Text("$city: sunny (station ${context.lifespanContext<String>()})")
        }
        server.tool(ToolDefinition("slow")) { context, _ ->
            context.progress(1.0, 2.0, "started") // the answer becomes a stream
            delay(300) // work that outlasts the request's reading
            ToolResult.Text("done")
        }
        server.tool(
            ToolDefinition("wait_forever", inputSchemaJson = """{"type":"object","properties":{"report":{"type":"boolean"}}}"""),
        ) { context, args ->
            if (Json.parseToJsonElement(args).jsonObject["report"]?.jsonPrimitive?.content == "true") {
                context.progress(1.0, null, "started") // the answer becomes a stream
            }
            events.waiting.complete(Unit)
            try {
                awaitCancellation()
            } catch (e: CancellationException) {
                events.cancelled.complete(Unit)
                throw e
            }
        }
        return server
    }

    /** [server] mounted at /mcp of a Ktor app on 127.0.0.1, beside its own /health route. */
    private fun served(server: Server, options: HttpEndpointOptions? = null, block: suspend (port: Int) -> Unit) {
        val app = embeddedServer(CIO, port = 0, host = "127.0.0.1") {
            routing {
                get("/health") { call.respondText("ok") }
                mcp("/mcp", server, options)
            }
        }
        app.start(wait = false)
        try {
            val port = runBlocking { app.engine.resolvedConnectors().first().port }
            runBlocking { withTimeout(30_000) { block(port) } }
        } finally {
            app.stop(100, 5_000)
        }
    }

    private val initialize =
        """{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"""

    private suspend fun HttpClient.mcpPost(port: Int, body: String, vararg headers: Pair<String, String>): HttpResponse =
        post("http://127.0.0.1:$port/mcp") {
            contentType(ContentType.Application.Json)
            header("accept", "application/json, text/event-stream")
            for ((name, value) in headers) header(name, value)
            setBody(body)
        }

    /** The messages of an SSE body, or the one of a JSON body. */
    private suspend fun messages(response: HttpResponse): List<JsonObject> {
        val text = response.bodyAsText()
        return if (response.headers["content-type"] == "text/event-stream") {
            text.lines().filter { it.startsWith("data: ") && it.length > 6 }.map { Json.parseToJsonElement(it.removePrefix("data: ")).jsonObject }
        } else {
            listOf(Json.parseToJsonElement(text).jsonObject)
        }
    }

    @Test
    fun `a legacy session through the Ktor route, with progress on SSE, beside the app's own route`() {
        val events = Events()
        val server = weatherServer(events)
        served(server) { port ->
            HttpClient(ClientCIO).use { http ->
                assertEquals("ok", http.get("http://127.0.0.1:$port/health").bodyAsText())
                assertTrue(!events.lifespanStarted.isCompleted, "the lifespan starts with the first MCP request")

                val opened = http.mcpPost(port, initialize)
                assertEquals(200, opened.status.value)
                val session = opened.headers["mcp-session-id"]!!
                assertEquals("weather", messages(opened).single().getValue("result").jsonObject.getValue("serverInfo").jsonObject.getValue("name").jsonPrimitive.content)
                events.lifespanStarted.await()

                val ids = arrayOf("mcp-session-id" to session, "mcp-protocol-version" to "2025-11-25")
                val initialized = http.mcpPost(port, """{"jsonrpc":"2.0","method":"notifications/initialized"}""", *ids)
                assertEquals(202, initialized.status.value)

                val call = http.mcpPost(
                    port,
                    """{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"forecast","arguments":{"city":"Oslo"},"_meta":{"progressToken":"p"}}}""",
                    *ids,
                )
                assertEquals(200, call.status.value)
                assertEquals("text/event-stream", call.headers["content-type"])
                val streamed = messages(call)
                val progress = streamed.first()
                assertEquals("notifications/progress", progress.getValue("method").jsonPrimitive.content)
                assertEquals("fetching", progress.getValue("params").jsonObject.getValue("message").jsonPrimitive.content)
                val result = streamed.last().getValue("result").jsonObject
                assertEquals("Oslo: sunny (station Blindern)", result.getValue("content").jsonArray[0].jsonObject.getValue("text").jsonPrimitive.content)

                val ended = http.delete("http://127.0.0.1:$port/mcp") {
                    for ((name, value) in ids) header(name, value)
                }
                assertEquals(200, ended.status.value)
                assertEquals(404, http.mcpPost(port, """{"jsonrpc":"2.0","id":3,"method":"ping"}""", *ids).status.value)
                assertEquals("ok", http.get("http://127.0.0.1:$port/health").bodyAsText())
            }
        }
        // The application's stop ended the endpoint, then the server's lifespan.
        assertTrue(events.lifespanStopped.isCompleted, "the app's stop ended the lifespan")
    }

    @Test
    fun `a handler that answers at once runs on the app's thread, answered as JSON in one piece`() {
        val server = Server("threads", "1.0")
        server.tool(ToolDefinition("where")) { _, _ -> ToolResult.Text(Thread.currentThread().name) }
        server.blockingTool(ToolDefinition("where_blocking")) { _, _ -> ToolResult.Text(Thread.currentThread().name) }
        server.tool(ToolDefinition("later")) { _, _ ->
            delay(1) // suspends: the call goes on after the request's first step
            ToolResult.Text("later")
        }
        server.tool(ToolDefinition("fails")) { _, _ -> error("no weather today") }
        server.tool(ToolDefinition("big")) { _, _ -> ToolResult.Text("x".repeat(1_500_000)) }
        served(server) { port ->
            HttpClient(ClientCIO).use { http ->
                val opened = http.mcpPost(port, initialize)
                val ids = arrayOf("mcp-session-id" to opened.headers["mcp-session-id"]!!, "mcp-protocol-version" to "2025-11-25")
                assertEquals(202, http.mcpPost(port, """{"jsonrpc":"2.0","method":"notifications/initialized"}""", *ids).status.value)
                fun call(id: Int, name: String) = """{"jsonrpc":"2.0","id":$id,"method":"tools/call","params":{"name":"$name","arguments":{}}}"""
                suspend fun text(response: HttpResponse) =
                    messages(response).last().getValue("result").jsonObject.getValue("content").jsonArray[0].jsonObject.getValue("text").jsonPrimitive.content

                // Head and body in one write, so the body is whole when the route reads the
                // head: the handler starts on the web server's thread inside the engine, not the
                // dispatcher's, and has finished before the answer began, so it is JSON.
                val here = rawPost(port, call(2, "where"), "127.0.0.1:$port", *ids.map { (name, value) -> "$name: $value" }.toTypedArray())
                assertEquals(200, here.status)
                assertTrue(here.head.contains("\r\ncontent-type: application/json", ignoreCase = true), here.head)
                val thread = Json.parseToJsonElement(here.body).jsonObject.getValue("result").jsonObject
                    .getValue("content").jsonArray[0].jsonObject.getValue("text").jsonPrimitive.content
                assertTrue(thread != "toolwire-dispatch", "ran on $thread")
                // Blocking handlers still go to the IO threads, never the web server's.
                val blocking = text(http.mcpPost(port, call(3, "where_blocking"), *ids))
                assertTrue(blocking.startsWith("DefaultDispatcher-worker"), "ran on $blocking")
                // One that suspends goes on, and is answered when it finishes.
                assertEquals("later", text(http.mcpPost(port, call(4, "later"), *ids)))
                // A failure thrown at once is the call's isError result, and the app goes on.
                val failed = messages(http.mcpPost(port, call(5, "fails"), *ids)).last().getValue("result").jsonObject
                assertEquals("true", failed.getValue("isError").jsonPrimitive.content)
                assertTrue(failed.toString().contains("no weather today"), failed.toString())
                // An answer (and a result) larger than the route's buffers and past the 1 MiB
                // they are kept up to comes whole, twice: a buffer not kept is not reused.
                repeat(2) { assertEquals(1_500_000, text(http.mcpPost(port, call(6 + it, "big"), *ids)).length) }
                assertEquals("ok", http.get("http://127.0.0.1:$port/health").bodyAsText())
            }
        }
    }

    @Test
    fun `the Host guard admits loopback names only, unless allowedHosts names the app's`() {
        val host = "mcp.example.com"
        served(weatherServer(Events())) { port ->
            assertEquals(403, rawPost(port, initialize, host).status)
            assertEquals(200, rawPost(port, initialize, "localhost:$port").status)
        }
        served(weatherServer(Events()), HttpEndpointOptions(allowedHosts = listOf(host))) { port ->
            val accepted = rawPost(port, initialize, host)
            assertEquals(200, accepted.status)
            assertTrue(accepted.body.contains("\"serverInfo\""), accepted.body)
        }
    }

    @Test
    fun `a connection's last request (Connection - close) is answered in full`() {
        // Ktor's CIO engine reports such a connection closed as soon as the request is read:
        // that must not be taken for the client hanging up.
        val call = """{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{},""" +
            """"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"progressToken":"p"}}}"""
        served(weatherServer(Events())) { port ->
            val answer = rawPost(
                port,
                call,
                "127.0.0.1:$port",
                "mcp-protocol-version: 2026-07-28",
                "mcp-method: tools/call",
                "mcp-name: slow",
            )
            assertEquals(200, answer.status)
            assertTrue(answer.body.contains("notifications/progress"), answer.body)
            assertTrue(answer.body.contains("\"text\":\"done\""), answer.body)
        }
    }

    @Test
    fun `a body over the limit is 413, and the app goes on`() {
        val server = weatherServer(Events(), ServerConfig(maxFrameBytes = 1024uL))
        served(server) { port ->
            HttpClient(ClientCIO).use { http ->
                val padding = "x".repeat(256 * 1024)
                val tooLarge = initialize.replace("\"name\":\"t\"", "\"name\":\"$padding\"")
                assertEquals(413, http.mcpPost(port, tooLarge).status.value)
                assertEquals(200, http.mcpPost(port, initialize).status.value)
                assertEquals("ok", http.get("http://127.0.0.1:$port/health").bodyAsText())
            }
        }
    }

    @Test
    fun `with a validator, tokens are required and the metadata is at the app's root`() {
        val validator = object : BearerTokenValidator {
            override fun validate(token: String) =
                if (token == "good") TokenVerdict.Granted(TokenGrant("ada", listOf("mcp"))) else TokenVerdict.Invalid
        }
        val server = weatherServer(Events())
        val app = embeddedServer(CIO, port = 0, host = "127.0.0.1") {
            routing {
                mcp("/mcp", server, HttpEndpointOptions(authorizationServers = listOf("https://auth.example")), validator)
            }
        }
        app.start(wait = false)
        try {
            runBlocking {
                val port = app.engine.resolvedConnectors().first().port
                HttpClient(ClientCIO).use { http ->
                    val missing = http.mcpPost(port, initialize)
                    assertEquals(401, missing.status.value)
                    val challenge = missing.headers["www-authenticate"].orEmpty()
                    assertTrue(challenge.contains("/.well-known/oauth-protected-resource/mcp"), challenge)
                    val metadata = http.get("http://127.0.0.1:$port/.well-known/oauth-protected-resource/mcp")
                    assertEquals(200, metadata.status.value)
                    val document = Json.parseToJsonElement(metadata.bodyAsText()).jsonObject
                    assertEquals("http://127.0.0.1:$port/mcp", document.getValue("resource").jsonPrimitive.content)
                    assertEquals("https://auth.example", document.getValue("authorization_servers").jsonArray[0].jsonPrimitive.content)
                    assertEquals(401, http.mcpPost(port, initialize, "authorization" to "Bearer bad").status.value)
                    assertEquals(200, http.mcpPost(port, initialize, "authorization" to "Bearer good").status.value)
                }
            }
        } finally {
            app.stop(100, 5_000)
        }
    }

    @ParameterizedTest(name = "hanging up {0}")
    @ValueSource(strings = ["mid-stream", "before the head"])
    fun `a 2026-07-28 client hanging up cancels its call`(whence: String) {
        val events = Events()
        val streaming = whence == "mid-stream"
        val call = """{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"wait_forever","arguments":{"report":$streaming},""" +
            """"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"progressToken":"p"}}}"""
        served(weatherServer(events)) { port ->
            withContext(Dispatchers.IO) {
                Socket("127.0.0.1", port).use { socket ->
                    socket.getOutputStream().write(
                        request(
                            port,
                            call,
                            "mcp-protocol-version: 2026-07-28",
                            "mcp-method: tools/call",
                            "mcp-name: wait_forever",
                        ),
                    )
                    events.waiting.await()
                    if (streaming) {
                        // The head and the progress event arrive; then the client goes.
                        val input = socket.getInputStream().bufferedReader(Charsets.ISO_8859_1)
                        assertTrue(input.readLine().startsWith("HTTP/1.1 200"))
                        while (true) {
                            val line = input.readLine() ?: error("the stream ended before its progress event")
                            if (line.contains("notifications/progress")) break
                        }
                    }
                }
            }
            events.cancelled.await()
            HttpClient(ClientCIO).use { http -> assertEquals("ok", http.get("http://127.0.0.1:$port/health").bodyAsText()) }
        }
    }

    private class RawResponse(val status: Int, val head: String, val body: String)

    private fun request(port: Int, body: String, vararg headers: String, host: String = "127.0.0.1:$port"): ByteArray {
        val bytes = body.toByteArray()
        val head = buildString {
            append("POST /mcp HTTP/1.1\r\nHost: $host\r\nContent-Type: application/json\r\n")
            append("Accept: application/json, text/event-stream\r\nContent-Length: ${bytes.size}\r\n")
            for (header in headers) append(header).append("\r\n")
            append("\r\n")
        }
        return head.toByteArray() + bytes
    }

    /** A POST with the `Host` header given (HTTP clients set their own); the connection closes after. */
    private suspend fun rawPost(port: Int, body: String, host: String, vararg headers: String): RawResponse = withContext(Dispatchers.IO) {
        Socket("127.0.0.1", port).use { socket ->
            socket.getOutputStream().write(request(port, body, "Connection: close", *headers, host = host))
            val text = socket.getInputStream().readBytes().toString(Charsets.UTF_8)
            assertTrue(text.startsWith("HTTP/1.1 "), "no response: '$text'")
            val status = text.substringAfter(' ').substringBefore(' ').toInt()
            RawResponse(status, text.substringBefore("\r\n\r\n"), text.substringAfter("\r\n\r\n"))
        }
    }
}
