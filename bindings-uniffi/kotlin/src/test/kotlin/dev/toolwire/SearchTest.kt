package dev.toolwire

import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertThrows
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

/** `Server.toolSearch`: a large catalog offered through `search_tools` and `call_tool`. */
class SearchTest {
    // --8<-- [start:server]
    private fun bigServer(): Server {
        val server = Server("big", "1")
        server.tool(ToolDefinition(name = "help", description = "What this server can do.")) { _, _ ->
            ToolResult.Text("search for a tool, then call it")
        }
        server.tool(
            ToolDefinition(
                name = "send_email",
                title = "Send an email",
                description = "Sends a message to one recipient.",
                inputSchemaJson = """{"type":"object","properties":{"to":{"type":"string"}},"required":["to"]}""",
            ),
        ) { _, args -> ToolResult.Text("sent to ${Json.parseToJsonElement(args).jsonObject.getValue("to").jsonPrimitive.content}") }
        server.tool(ToolDefinition(name = "payroll_export", description = "Exports the payroll as CSV.", requiredScopes = listOf("hr"))) { _, _ ->
            ToolResult.Text("name,salary")
        }
        for (n in 0 until 300) {
            server.tool(ToolDefinition(name = "metric_$n", description = "Reads metric number $n.")) { _, _ -> ToolResult.Text("metric $n is 42") }
        }
        // Lists `help`, `search_tools` and `call_tool`; finds any of the others.
        server.toolSearch(ToolSearch(pinned = listOf("help"), maxResults = 3u))
        return server
    }
    // --8<-- [end:server]

    private fun names(tools: JsonObject?, list: String = "tools") =
        tools!!.getValue(list).jsonArray.map { it.jsonObject.getValue("name").jsonPrimitive.content }

    private fun RawClient.answer(id: Int): JsonObject {
        while (true) {
            val frame = recvObject()
            if (frame["id"]?.jsonPrimitive?.content == id.toString()) return frame
        }
    }

    private fun RawClient.result(id: Int, name: String, args: String): JsonObject {
        call(id, name, args)
        return answer(id).getValue("result").jsonObject
    }

    @Test
    fun `the listing offers the search, which finds and calls`() {
        RawClient(bigServer()).use { client ->
            client.initialize()
            client.send("""{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}""")
            assertEquals(listOf("call_tool", "help", "search_tools"), names(client.answer(1).getValue("result").jsonObject))
            val found = client.result(2, "search_tools", """{"query":"email someone"}""")
            assertEquals("send_email", names(found["structuredContent"]?.jsonObject).first())
            val exact = client.result(3, "search_tools", """{"query":"metric_42","limit":1}""")
            assertEquals(listOf("metric_42"), names(exact["structuredContent"]?.jsonObject))
            val called = client.result(4, "call_tool", """{"name":"send_email","arguments":{"to":"ada"}}""")
            assertEquals("sent to ada", called.getValue("content").jsonArray[0].jsonObject.getValue("text").jsonPrimitive.content)
            // What the client may not see is not found, and not called.
            val hidden = client.result(5, "search_tools", """{"query":"payroll"}""")
            assertEquals(listOf<String>(), names(hidden["structuredContent"]?.jsonObject))
            client.call(6, "call_tool", """{"name":"payroll_export"}""")
            val unknown = client.answer(6).getValue("error").jsonObject.getValue("message").jsonPrimitive.content
            assertEquals("Unknown tool: payroll_export", unknown)
        }
    }

    @Test
    fun `the search can be turned off, and bad settings are refused`() {
        val server = bigServer()
        val tooMany = assertThrows(ToolwireException.Registration::class.java) { server.toolSearch(ToolSearch(maxResults = 51u)) }
        assertTrue(tooMany.message!!.contains("max_results"), tooMany.message)
        server.toolSearch(null)
        RawClient(server).use { client ->
            client.initialize()
            client.send("""{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}""")
            // Every tool but payroll_export, which this client may not see.
            assertEquals(302, names(client.answer(1).getValue("result").jsonObject).size)
        }
        server.tool(ToolDefinition(name = "call_tool")) { _, _ -> ToolResult.Text("mine") }
        assertThrows(ToolwireException.Registration::class.java) { server.toolSearch(ToolSearch()) }
        server.toolSearch(ToolSearch(callToolName = "invoke"))
    }
}
