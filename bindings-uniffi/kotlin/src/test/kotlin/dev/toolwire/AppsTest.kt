package dev.toolwire

import dev.toolwire.demo.GREETER_VIEW_URI
import dev.toolwire.demo.addGreeter
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows

/** MCP Apps (SEP-1865) from Kotlin: the greeter example (examples/apps) and what registration refuses. */
class AppsTest {
    private val renders = """{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}}"""

    private fun RawClient.request(id: Int, method: String, params: String): JsonObject {
        send("""{"jsonrpc":"2.0","id":$id,"method":"$method","params":$params}""")
        return recvObject()
    }

    private fun greeter() = Server("greeter", "1").also { addGreeter(it) }

    private fun JsonObject.toolNames() =
        getValue("result").jsonObject.getValue("tools").jsonArray.map { it.jsonObject.getValue("name").jsonPrimitive.content }

    @Test
    fun `a client that renders views gets the view and every tool`() {
        RawClient(greeter()).use { client ->
            client.initialize(capabilities = renders)
            val list = client.request(1, "tools/list", "{}")
            assertEquals(listOf("say_hello", "shout"), list.toolNames())
            val shout = list.getValue("result").jsonObject.getValue("tools").jsonArray[1].jsonObject
            assertEquals(
                Json.parseToJsonElement("""{"ui":{"resourceUri":"$GREETER_VIEW_URI","visibility":["app"]},"ui/resourceUri":"$GREETER_VIEW_URI"}"""),
                shout.getValue("_meta"),
            )
            val view = client.request(2, "resources/read", """{"uri":"$GREETER_VIEW_URI"}""")
                .getValue("result").jsonObject.getValue("contents").jsonArray[0].jsonObject
            assertEquals("text/html;profile=mcp-app", view.getValue("mimeType").jsonPrimitive.content)
            client.call(3, "say_hello", """{"name":"Ada"}""")
            assertEquals(
                Json.parseToJsonElement("""{"greeting":"Hello, Ada!","name":"Ada"}"""),
                client.recvObject().getValue("result").jsonObject.getValue("structuredContent"),
            )
            client.call(4, "shout", """{"text":"hi"}""")
            assertEquals(
                Json.parseToJsonElement("""{"shouted":"HI"}"""),
                client.recvObject().getValue("result").jsonObject.getValue("structuredContent"),
            )
        }
    }

    @Test
    fun `a client without views gets text and never the app-only tool`() {
        RawClient(greeter()).use { client ->
            client.initialize()
            assertEquals(listOf("say_hello"), client.request(1, "tools/list", "{}").toolNames())
            client.call(2, "shout", """{"text":"hi"}""")
            assertEquals(
                Json.parseToJsonElement("""{"code":-32602,"message":"Unknown tool: shout"}"""),
                client.recvObject().getValue("error"),
            )
        }
    }

    @Test
    fun `what the spec forbids is refused, naming it`() {
        val server = Server("apps", "1")
        val notUi = assertThrows<ToolwireException.Registration> {
            server.addUiResource(UiResourceDefinition(uri = "https://apps/view.html", name = "v", html = "<!DOCTYPE html>"))
        }
        assertTrue(notUi.message!!.contains("ui:// URI"), notUi.message)
        val orphan = assertThrows<ToolwireException.Registration> {
            server.tool(ToolDefinition(name = "orphan", uiResource = "ui://apps/missing.html")) { _, _ -> ToolResult.Text("x") }
        }
        assertTrue(orphan.message!!.contains("no view is registered"), orphan.message)
    }
}
