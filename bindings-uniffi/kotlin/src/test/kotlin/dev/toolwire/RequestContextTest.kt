package dev.toolwire

import dev.toolwire.testing.MODERN_PROTOCOL_VERSION
import dev.toolwire.testing.TestClient
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.buildJsonObject
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import kotlinx.serialization.json.put
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import java.util.Collections

/**
 * Resource, template, prompt and completion handlers get their request's context, a
 * [CallContext] as a tool's (issue #28): client info, lifespan, progress, cancellation, the
 * 2026-07-28 request's own round.
 */
class RequestContextTest {
    private fun clientInfo(name: String) = buildJsonObject {
        put("name", name)
        put("version", "2.0")
    }

    private fun JsonObject.contentsText() = getValue("contents").jsonArray[0].jsonObject.getValue("text").jsonPrimitive.content

    private fun JsonObject.messageText() =
        getValue("messages").jsonArray[0].jsonObject.getValue("content").jsonObject.getValue("text").jsonPrimitive.content

    private fun text(value: String) = PromptRendering(listOf(PromptMessageRecord(PromptRole.USER, ContentBlock.Text(value))))

    private fun server(): Server {
        val server = Server("weather", "1.0.0")
        server.lifespan(start = { Stations(mapOf("oslo" to "Blindern", "bergen" to "Florida")) })
        // A template: the handler's receiver is its request's context.
        server.resource(ResourceDefinition("weather://{city}/station", "station", mimeType = "text/plain")) { uri, variables ->
            val context: CallContext = this
            val station = context.lifespanContext<Stations>().names[variables.getValue("city")]
                ?: throw ToolwireException.NotFound("no station in ${variables["city"]}")
            val client = clientInfo()
            listOf(ResourceContent(uri, text = "$station for ${client?.name} ${client?.version} (${protocolVersion()}, ${toolName()})"))
        }
        server.prompt(
            PromptDefinition("brief", arguments = listOf(PromptArgumentDefinition("topic", required = true), PromptArgumentDefinition("audience"))),
        ) { args ->
            val wanted = wantsProgress()
            progress(1.0, 2.0, "drafting")
            progress(2.0, 2.0, "done")
            text("brief on ${args["topic"]} (progress wanted: $wanted)")
        }
        server.promptCompletion("brief") { argument, value, others ->
            listOf("$argument=$value", "name=${toolName()}", "client=${clientInfo()?.name}", "others=$others", "id=${requestId() is RequestId.Number}")
        }
        server.templateCompletion("weather://{city}/station") { _, value, _ ->
            lifespanContext<Stations>().names.keys.filter { it.startsWith(value) }.sorted()
        }
        return server
    }

    @Test
    fun `a resource template reads the client's info and the lifespan through its context`() = runBlocking {
        TestClient.connect(server(), clientInfo = clientInfo("station-reader")).use { client ->
            assertEquals(
                "Blindern for station-reader 2.0 (2025-11-25, weather://oslo/station)",
                client.readResource("weather://oslo/station").contentsText(),
            )
        }
    }

    @Test
    fun `a prompt's progress reaches the client`() = runBlocking {
        TestClient.connect(server()).use { client ->
            val seen = Collections.synchronizedList(ArrayList<Triple<Double, Double?, String?>>())
            val result = client.getPrompt("brief", mapOf("topic" to "rain")) { progress, total, message -> seen += Triple(progress, total, message) }
            assertEquals("brief on rain (progress wanted: true)", result.messageText())
            assertEquals(listOf(Triple(1.0, 2.0, "drafting"), Triple(2.0, 2.0, "done")), seen.toList())
            // Without a progress token nothing is sent.
            assertEquals("brief on fog (progress wanted: false)", client.getPrompt("brief", mapOf("topic" to "fog")).messageText())
            assertTrue(client.notifications.none { it["method"]?.jsonPrimitive?.content == "notifications/progress" && "fog" in it.toString() })
        }
    }

    @Test
    fun `completions see their context`() = runBlocking {
        TestClient.connect(server(), clientInfo = clientInfo("completer")).use { client ->
            val prompt = client.complete(client.promptRef("brief"), "audience", "ki", mapOf("topic" to "rain"))
            assertEquals(
                listOf("audience=ki", "name=audience", "client=completer", "others={topic=rain}", "id=true"),
                prompt.getValue("values").jsonArray.map { it.jsonPrimitive.content },
            )
            val template = client.complete(client.templateRef("weather://{city}/station"), "city", "b")
            assertEquals(listOf("bergen"), template.getValue("values").jsonArray.map { it.jsonPrimitive.content })
        }
    }

    @Test
    fun `a cancelled resource read is not answered and the server keeps serving`() {
        val started = CompletableDeferred<Unit>()
        val stopped = CompletableDeferred<Boolean>()
        val server = server()
        server.resource(ResourceDefinition("slow://report", "report")) { _, _ ->
            started.complete(Unit)
            try {
                awaitCancellation()
            } finally {
                // The engine dropped the read: its coroutine is cancelled, its context says so.
                stopped.complete(isCancelled())
            }
        }
        RawClient(server).use { client ->
            client.initialize()
            client.send("""{"jsonrpc":"2.0","id":7,"method":"resources/read","params":{"uri":"slow://report"}}""")
            runBlocking { withTimeout(10_000) { started.await() } }
            client.send("""{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"no longer needed"}}""")
            assertTrue(runBlocking { withTimeout(10_000) { stopped.await() } }, "the handler saw its cancellation")
            client.send("""{"jsonrpc":"2.0","id":8,"method":"resources/read","params":{"uri":"weather://bergen/station"}}""")
            val answer = client.recvObject()
            assertEquals("8", answer["id"].toString(), "the next answer is the next request's: $answer")
            assertTrue(answer.getValue("result").jsonObject.contentsText().startsWith("Florida for kotlin-test"))
            val rest = client.finish()
            assertFalse(rest.any { (it as? JsonObject)?.get("id")?.toString() == "7" }, "the cancelled read got an answer: $rest")
        }
    }

    @Test
    fun `in 2026-07-28 the request's own client info reaches a resource handler`() = runBlocking {
        val info = clientInfo("modern-reader")
        TestClient.connect(server(), protocolVersion = MODERN_PROTOCOL_VERSION, clientInfo = info).use { client ->
            assertEquals(
                "Florida for modern-reader 2.0 (2026-07-28, weather://bergen/station)",
                client.readResource("weather://bergen/station").contentsText(),
            )
        }
    }

    @Test
    fun `a prompt asks the user through its context, in both eras`() = runBlocking {
        val server = server()
        server.prompt(PromptDefinition("confirm")) {
            val answer = elicit("""{"message":"Go?","requestedSchema":{"type":"object","properties":{"ok":{"type":"boolean"}}}}""")
            text("answer: $answer")
        }
        for (version in listOf("2025-11-25", MODERN_PROTOCOL_VERSION)) {
            val elicitation: suspend (JsonObject) -> JsonObject = {
                buildJsonObject {
                    put("action", "accept")
                    put("content", buildJsonObject { put("ok", JsonPrimitive(true)) })
                }
            }
            TestClient.connect(server, protocolVersion = version, elicitation = elicitation).use { client ->
                val text = client.getPrompt("confirm").messageText()
                assertTrue(text.startsWith("answer: ") && "\"accept\"" in text && "\"ok\":true" in text, "$version: $text")
            }
        }
    }
}
