package dev.toolwire

import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNotEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

/**
 * 2026-07-28 from Kotlin: a tool returns [ToolResult.InputRequired] or asks with
 * `context.elicit(...)` (replayed each round, [InputRequiredException] meanwhile), a prompt throws
 * [ToolwireException.InputRequired] and reads its [Round], and the request's own state and trace
 * context reach the tool.
 */
class ModernTest {
    private val meta = """{"io.modelcontextprotocol/protocolVersion":"2026-07-28",""" +
        """"io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"sampling":{}}"""

    private fun server(signals: MutableList<Throwable> = mutableListOf()): Server {
        val server = Server("modern", "1")
        val definition = { name: String -> ToolDefinition(name = name, inputSchemaJson = """{"type":"object"}""") }
        server.tool(definition("stateful")) { context, _ ->
            if (context.requestState() == "step-1" && context.inputResponsesJson().contains("\"ok\"")) {
                ToolResult.Text("done")
            } else {
                ToolResult.InputRequired("""{"ok":{"method":"elicitation/create","params":{"message":"OK?"}}}""", "step-1")
            }
        }
        server.tool(definition("greet")) { context, _ ->
            val answer = try {
                context.elicit("""{"message":"Name?"}""")
            } catch (e: InputRequiredException) {
                signals.add(e)
                throw e
            }
            ToolResult.Text("hello " + kotlinx.serialization.json.Json.parseToJsonElement(answer).jsonObject["content"]!!.jsonObject["name"]!!.jsonPrimitive.content)
        }
        server.tool(definition("pair")) { context, _ ->
            val (name, sampled) = context.askAll(
                listOf(
                    Question("elicitation/create", """{"message":"Name?"}"""),
                    Question("sampling/createMessage", """{"messages":[],"maxTokens":5}"""),
                ),
            ).map { kotlinx.serialization.json.Json.parseToJsonElement(it).jsonObject }
            ToolResult.Text(
                name["content"]!!.jsonObject["name"]!!.jsonPrimitive.content + " / " +
                    sampled["content"]!!.jsonObject["text"]!!.jsonPrimitive.content,
            )
        }
        server.tool(definition("trace")) { context, _ -> ToolResult.Text(context.traceContext().traceparent ?: "none") }
        server.prompt(PromptDefinition("ask")) {
            if (!inputResponsesJson.contains("\"ctx\"")) {
                throw ToolwireException.InputRequired("asks", """{"ctx":{"method":"elicitation/create","params":{"message":"Context?"}}}""", null)
            }
            PromptRendering(listOf(PromptMessageRecord(PromptRole.USER, ContentBlock.Text("answered"))))
        }
        return server
    }

    private fun RawClient.modernCall(id: Int, name: String, extra: String = "", metaJson: String = "$meta}"): JsonObject {
        send("""{"jsonrpc":"2.0","id":$id,"method":"tools/call","params":{"name":"$name","arguments":{},"_meta":$metaJson$extra}}""")
        return recvObject()
    }

    @Test
    fun `a tool returns InputRequired and reads its verified state`() = RawClient(server()).use { client ->
        val first = client.modernCall(1, "stateful").getValue("result").jsonObject
        assertEquals("input_required", first["resultType"]!!.jsonPrimitive.content)
        val state = first["requestState"]!!.jsonPrimitive.content
        assertNotEquals("step-1", state, "sealed")
        val done = client.modernCall(2, "stateful", ""","inputResponses":{"ok":{"action":"accept"}},"requestState":"$state"""")
        assertEquals("done", done["result"]!!.jsonObject["content"]!!.jsonArray[0].jsonObject["text"]!!.jsonPrimitive.content)
        val tampered = client.modernCall(3, "stateful", ""","inputResponses":{"ok":{"action":"accept"}},"requestState":"${state}x"""")
        assertEquals("-32602", tampered["error"]!!.jsonObject["code"].toString())
    }

    @Test
    fun `elicit is replayed each round and signals with a CancellationException`() {
        val signals = mutableListOf<Throwable>()
        RawClient(server(signals)).use { client ->
            val first = client.modernCall(1, "greet").getValue("result").jsonObject
            assertEquals("input_required", first["resultType"]!!.jsonPrimitive.content)
            assertTrue(signals.single() is kotlin.coroutines.cancellation.CancellationException)
            val key = first["inputRequests"]!!.jsonObject.keys.single()
            val second = client.modernCall(2, "greet", ""","inputResponses":{"$key":{"action":"accept","content":{"name":"Ann"}}}""")
            assertEquals("hello Ann", second["result"]!!.jsonObject["content"]!!.jsonArray[0].jsonObject["text"]!!.jsonPrimitive.content)
        }
    }

    private val sampled = """{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m"}"""

    @Test
    fun `askAll asks every question in one round`() = RawClient(server()).use { client ->
        val asked = client.modernCall(1, "pair").getValue("result").jsonObject["inputRequests"]!!.jsonObject
        val methods = asked.mapValues { it.value.jsonObject["method"]!!.jsonPrimitive.content }
        assertEquals(listOf("elicitation/create", "sampling/createMessage"), methods.values.sorted())
        val answers = methods.entries.joinToString(",") { (key, method) ->
            val answer = if (method == "elicitation/create") """{"action":"accept","content":{"name":"Ann"}}""" else sampled
            "\"$key\":$answer"
        }
        val done = client.modernCall(2, "pair", ""","inputResponses":{$answers}""")
        assertEquals("Ann / hi", done["result"]!!.jsonObject["content"]!!.jsonArray[0].jsonObject["text"]!!.jsonPrimitive.content)
    }

    @Test
    fun `askAll sends one question after the other in a session`() = RawClient(server()).use { client ->
        client.initialize(capabilities = """{"elicitation":{},"sampling":{}}""")
        client.call(1, "pair", "{}")
        val first = client.recvObject()
        assertEquals("elicitation/create", first["method"]!!.jsonPrimitive.content)
        client.send("""{"jsonrpc":"2.0","id":${first["id"]},"result":{"action":"accept","content":{"name":"Bo"}}}""")
        val second = client.recvObject()
        assertEquals("sampling/createMessage", second["method"]!!.jsonPrimitive.content)
        client.send("""{"jsonrpc":"2.0","id":${second["id"]},"result":$sampled}""")
        val done = client.recvObject()
        assertEquals("Bo / hi", done["result"]!!.jsonObject["content"]!!.jsonArray[0].jsonObject["text"]!!.jsonPrimitive.content)
    }

    @Test
    fun `a prompt throws InputRequired and reads its round`() = RawClient(server()).use { client ->
        client.send("""{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"ask","_meta":$meta}}}""")
        val first = client.recvObject().getValue("result").jsonObject
        assertEquals("elicitation/create", first["inputRequests"]!!.jsonObject["ctx"]!!.jsonObject["method"]!!.jsonPrimitive.content)
        client.send("""{"jsonrpc":"2.0","id":2,"method":"prompts/get","params":{"name":"ask","_meta":$meta},"inputResponses":{"ctx":{"action":"accept"}}}}""")
        val second = client.recvObject().getValue("result").jsonObject
        assertEquals("answered", second["messages"]!!.jsonArray[0].jsonObject["content"]!!.jsonObject["text"]!!.jsonPrimitive.content)
    }

    @Test
    fun `the trace context reaches the tool`() = RawClient(server()).use { client ->
        val traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
        val answer = client.modernCall(1, "trace", metaJson = """$meta,"traceparent":"$traceparent"}""")
        assertEquals(traceparent, answer["result"]!!.jsonObject["content"]!!.jsonArray[0].jsonObject["text"]!!.jsonPrimitive.content)
    }
}
