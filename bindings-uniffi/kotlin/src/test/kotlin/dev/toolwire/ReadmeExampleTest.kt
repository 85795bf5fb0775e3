package dev.toolwire

import dev.toolwire.ktor.mcp
import dev.toolwire.testing.McpError
import dev.toolwire.testing.TestClient
import io.ktor.server.cio.CIO
import io.ktor.server.engine.embeddedServer
import io.ktor.server.response.respondText
import io.ktor.server.routing.get
import io.ktor.server.routing.routing
import kotlinx.coroutines.runBlocking
import kotlinx.serialization.Serializable
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows
import org.slf4j.LoggerFactory
import java.io.File

/** The server of docs/languages/kotlin-swift.md's generated-API example, up to `runStdio()`. */
private fun readmeServer(): Server {
    val server = Server("weather", "1.0.0", "Ask for one city at a time.")
    server.tool(
        ToolDefinition(
            name = "forecast",
            description = "Forecast for a city.",
            inputSchemaJson = """{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}""",
            timeoutMs = 10_000u,
        ),
    ) { context, argumentsJson ->
        // argumentsJson was checked against the schema; parse it with any JSON library.
        context.progress(1.0, 2.0, "fetching")   // sent only if the client asked for progress
        kotlinx.coroutines.delay(100)              // cancelled with the call
        ToolResult.Structured("""{"city":"Paris","temperatures":[20,21]}""")
    }
    server.blockingTool(ToolDefinition(name = "shout")) { _, args ->
        ToolResult.Text(args.uppercase())          // runs on Dispatchers.IO: may block
    }
    return server
}

/**
 * The example of docs/languages/kotlin-swift.md (the README's "Kotlin and Swift" section before), up to `runStdio()` (in an
 * object: its classes' names are taken in this package by TypedToolsTest).
 */
internal object TopReadme {
    @Serializable
    data class ForecastArgs(@Description("City name") val city: String, @Minimum(1.0) @Maximum(7.0) val days: Int = 3)
    @Serializable
    data class Forecast(val city: String, val temperatures: List<Double>)

    fun server(): Server {
        val server = Server("weather", "1.0.0", "Ask for one city at a time.")
        server.tool("forecast", description = "Daily forecast for a city.") { context, args: ForecastArgs ->
            context.progress(1.0, args.days.toDouble(), "fetching")   // a suspending lambda; a throw is an isError result
            Forecast(args.city, List(args.days) { 20.0 + it })       // structuredContent, described by an outputSchema
        }
        return server
    }

    /** The README's middleware example, as written there, around [server]. */
    fun guarded(server: Server): Server {
        val audit = LoggerFactory.getLogger("audit")
        server.middleware("staff-only") { request, next ->
            if (request.principal !in setOf("ada", "grace")) {
                throw ToolwireException.Protocol(-32001, "Forbidden", null)   // this JSON-RPC error instead
            }
            val outcome = next()                                              // handled here; returns once answered
            audit.info("{} {}: {} in {} ms", request.method, request.name, outcome.kind, outcome.elapsedMs)
        }
        return server
    }

    /** The page's resources, prompts and completion example, as written there. */
    fun catalog(server: Server): Server {
        server.resource(ResourceDefinition("notes://day/{date}", "notes", mimeType = "text/plain")) { uri, variables ->
            val date = variables.getValue("date")
            if (date != "2026-11-22") throw ToolwireException.NotFound("no notes on $date")   // -32002
            progress(1.0, 1.0, "found")                        // `this` is the read's context, as a tool's
            listOf(ResourceContent(uri, text = "busy, for ${clientInfo()?.name}"))
        }
        server.prompt(PromptDefinition("summarize", arguments = listOf(PromptArgumentDefinition("topic", required = true)))) { args ->
            PromptRendering(listOf(PromptMessageRecord(PromptRole.USER, ContentBlock.Text("Summarize ${args["topic"]}."))))
        }
        server.promptCompletion("summarize") { _, value, _ -> listOf("rust", "mcp").filter { it.startsWith(value) } }
        server.notifyResourceUpdated("notes://day/2026-11-22")   // subscribers get notifications/resources/updated
        return server
    }

    /** What the page's lifespan example opens: weather stations. */
    class Stations : AutoCloseable {
        var closed = false
        fun near(city: String) = if (city == "Oslo") "Blindern" else "none"
        fun names() = "Blindern, Bygdøy"
        override fun close() { closed = true }

        companion object {
            fun open() = Stations()
        }
    }

    /** The page's lifespan example, as written there. */
    fun stations(server: Server): Server {
        server.lifespan(start = { Stations.open() }, stop = { stations -> stations.close() })
        server.tool(ToolDefinition("station")) { context, _ -> ToolResult.Text(context.lifespanContext<Stations>().near("Oslo")) }
        server.resource(ResourceDefinition("weather://stations", "stations")) { uri, _ ->
            listOf(ResourceContent(uri, text = lifespanContext<Stations>().names()))
        }
        return server
    }

    /**
     * The README's Ktor example, as written there (compiled, not run: it serves port 8080 until
     * the JVM ends; `ktor.KtorMountTest` runs the same route on a free port).
     */
    fun ktorApp(server: Server) {
        embeddedServer(CIO, port = 8080) {
            routing {
                get("/health") { call.respondText("ok") }
                mcp("/mcp", server, HttpEndpointOptions(allowedHosts = listOf("api.example.com")))
            }
        }.start(wait = true)
    }
}

class ReadmeExampleTest {
    /** The server the README's test example tests. */
    private val server = TopReadme.server()

    // The top-level README's test example, as written there.
    @Test
    fun forecast() = runBlocking {
        TestClient.connect(server).use { client ->
            val result = client.callTool("forecast", """{"city":"Oslo","days":2}""")
            assertEquals(Json.parseToJsonElement("""{"city":"Oslo","temperatures":[20.0,21.0]}"""), result["structuredContent"])
        }
    }

    // The README's middleware: a test client has no principal, so it is refused.
    @Test
    fun `the README middleware refuses a caller not on the list`() = runBlocking {
        TestClient.connect(TopReadme.guarded(TopReadme.server())).use { client ->
            val refused = assertThrows<McpError> { runBlocking { client.callTool("forecast", """{"city":"Oslo"}""") } }
            assertEquals(-32001, refused.code)
            assertEquals("Forbidden", refused.message)
        }
    }

    /**
     * The examples above are copies of the READMEs' Kotlin blocks (up to `server.runStdio()`,
     * inside `fun main()` if there is one): each block's paragraphs (split at blank lines) must
     * appear here line by line, in order, indentation aside.
     */
    @Test
    fun `the copies here are the READMEs' text`() {
        val root = File(System.getProperty("toolwire.root") ?: "../..")
        val blocks = kotlinBlocks(File(root, "docs/languages/kotlin-swift.md").readText())
        assertEquals(
            7,
            blocks.size,
            "the Kotlin page's typed server, its test, middleware, Ktor app, generated-API server, resources and lifespan",
        )
        val here = lines(File(root, "bindings-uniffi/kotlin/src/test/kotlin/dev/toolwire/ReadmeExampleTest.kt").readText())
        for (block in blocks) {
            var body = block.lines()
            body.indexOfFirst { it.startsWith("fun main()") }.takeIf { it >= 0 }?.let { body = body.drop(it + 1) }
            body = body.takeWhile { !it.trim().startsWith("server.runStdio()") }
            for (paragraph in body.joinToString("\n").split(Regex("\n\\s*\n")).map(::lines).filter { it.isNotEmpty() }) {
                assertTrue(
                    here.windowed(paragraph.size).any { it == paragraph },
                    "not copied in ReadmeExampleTest.kt as written in the README:\n${paragraph.joinToString("\n")}",
                )
            }
        }
    }

    private fun kotlinBlocks(markdown: String) = Regex("```kotlin\n([\\s\\S]*?)```").findAll(markdown).map { it.groupValues[1] }.toList()

    private fun lines(text: String) = text.lines().map { it.trim() }.filter { it.isNotEmpty() }

    @Test
    fun `the page's resources, prompt and completion answer`() = runBlocking {
        TestClient.connect(TopReadme.catalog(Server("notes", "1"))).use { client ->
            val read = client.readResource("notes://day/2026-11-22")

            assertEquals("busy, for ${client.clientInfo["name"]!!.jsonPrimitive.content}", read["contents"]!!.jsonArray[0].jsonObject["text"]!!.jsonPrimitive.content)
            val missing = assertThrows<McpError> { runBlocking { client.readResource("notes://day/2026-11-23") } }
            assertEquals(-32002, missing.code)
            val prompt = client.getPrompt("summarize", mapOf("topic" to "tests"))
            assertEquals("Summarize tests.", prompt["messages"]!!.jsonArray[0].jsonObject["content"]!!.jsonObject["text"]!!.jsonPrimitive.content)
            val completion = client.complete(client.promptRef("summarize"), "topic", "r")
            assertEquals(listOf("rust"), completion["values"]!!.jsonArray.map { it.jsonPrimitive.content })
        }
    }

    @Test
    fun `the page's lifespan reaches a tool and a resource`() = runBlocking {
        TestClient.connect(TopReadme.stations(Server("stations", "1"))).use { client ->
            val station = client.callTool("station", "{}")
            assertEquals("Blindern", station["content"]!!.jsonArray[0].jsonObject["text"]!!.jsonPrimitive.content)
            val names = client.readResource("weather://stations")
            assertEquals("Blindern, Bygdøy", names["contents"]!!.jsonArray[0].jsonObject["text"]!!.jsonPrimitive.content)
        }
    }

    @Test
    fun `the generated-API example serves`() {
        RawClient(readmeServer()).use { client ->
            client.initialize()
            client.call(1, "forecast", """{"city":"Paris"}""", meta = """{"progressToken":1}""")
            val progress = client.recvObject()
            assertEquals("notifications/progress", progress.getValue("method").jsonPrimitive.content)
            val answer = client.recvObject().getValue("result").jsonObject
            assertEquals("Paris", answer.getValue("structuredContent").jsonObject.getValue("city").jsonPrimitive.content)
            client.call(2, "shout", """{"text":"hi"}""")
            val shout = client.recvObject().getValue("result").jsonObject.getValue("content").jsonArray[0].jsonObject
            assertEquals("""{"TEXT":"HI"}""", shout.getValue("text").jsonPrimitive.content)
        }
    }
}
