package dev.toolwire

import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import java.util.concurrent.CopyOnWriteArrayList

/** Who sees what, from Kotlin: requirements matched against the token's scopes and tags, and a rule. */
class VisibilityTest {
    private val tokens = mapOf(
        "guest" to TokenGrant("gus", listOf()),
        "admin" to TokenGrant("ada", listOf("admin"), listOf("hr", "staff")),
    )

    // --8<-- [start:server]
    private fun notesServer(): Server {
        val server = Server("notes", "1")
        server.tool(ToolDefinition(name = "search")) { _, _ -> ToolResult.Text("found") }
        server.tool(ToolDefinition(name = "admin_reset", requiredScopes = listOf("admin"))) { _, _ -> ToolResult.Text("reset") }
        server.resource(ResourceDefinition("memo://payroll", "payroll", requiredTags = listOf("hr"))) { uri, _ ->
            listOf(ResourceContent(uri, text = "salaries"))
        }
        server.prompt(PromptDefinition("review", requiredTags = listOf("staff"))) { _ ->
            PromptRendering(listOf(PromptMessageRecord(PromptRole.USER, ContentBlock.Text("Review it"))))
        }
        return server
    }
    // --8<-- [end:server]

    private fun names(answer: JsonObject, list: String, field: String) =
        answer.getValue("result").jsonObject.getValue(list).jsonArray.map { it.jsonObject.getValue(field).jsonPrimitive.content }

    @Test
    fun `each token sees what its scopes and tags allow, and a hidden item answers as a missing one`() {
        val validator = object : BearerTokenValidator {
            override fun validate(token: String) = tokens[token]?.let { TokenVerdict.Granted(it) } ?: TokenVerdict.Invalid
        }
        val http = notesServer().serveHttp("127.0.0.1", 0u, HttpServerOptions(stateless = true), validator)
        try {
            fun ask(token: String, method: String, params: String = "{}") = message(
                post(
                    http.url(),
                    """{"jsonrpc":"2.0","id":1,"method":"$method","params":$params}""",
                    "authorization", "Bearer $token", "mcp-protocol-version", "2025-11-25",
                ),
            )
            assertEquals(listOf("search"), names(ask("guest", "tools/list"), "tools", "name"))
            assertEquals(listOf("admin_reset", "search"), names(ask("admin", "tools/list"), "tools", "name"))
            assertEquals(listOf<String>(), names(ask("guest", "prompts/list"), "prompts", "name"))
            assertEquals(listOf("review"), names(ask("admin", "prompts/list"), "prompts", "name"))
            assertEquals(listOf("memo://payroll"), names(ask("admin", "resources/list"), "resources", "uri"))
            val hidden = ask("guest", "tools/call", """{"name":"admin_reset","arguments":{}}""").getValue("error").jsonObject
            val missing = ask("guest", "tools/call", """{"name":"nope","arguments":{}}""").getValue("error").jsonObject
            assertEquals(
                missing.getValue("message").jsonPrimitive.content.replace("nope", "X"),
                hidden.getValue("message").jsonPrimitive.content.replace("admin_reset", "X"),
            )
            val read = ask("guest", "resources/read", """{"uri":"memo://payroll"}""").getValue("error").jsonObject
            assertEquals(-32002, read.getValue("code").jsonPrimitive.content.toInt())
        } finally {
            http.stop()
            http.waitBlocking()
            http.destroy()
        }
    }

    @Test
    fun `a rule decides per request and sees the item and the client`() {
        val server = notesServer()
        server.tool(ToolDefinition(name = "beta_summarize")) { _, _ -> ToolResult.Text("summary") }
        val asked = CopyOnWriteArrayList<Pair<CatalogItem, Viewer>>()
        // --8<-- [start:rule]
        server.visibleWhen { item, viewer ->
            asked.add(item to viewer)
            !item.name.startsWith("beta_") || "beta" in viewer.tags
        }
        // --8<-- [end:rule]
        RawClient(server).use { client ->
            client.initialize()
            client.send("""{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}""")
            assertEquals(listOf("search"), names(client.recvObject(), "tools", "name"))
            val (item, viewer) = asked.first { it.first.name == "beta_summarize" }
            assertEquals(CatalogItem(ItemKind.TOOL, "beta_summarize", listOf(), listOf()), item)
            assertEquals("2025-11-25", viewer.protocolVersion)
            assertTrue(viewer.clientInfo != null && viewer.subject == null, viewer.toString())
            assertTrue(asked.none { it.first.name == "admin_reset" }, "not asked about what the requirements hid")
            client.call(2, "beta_summarize", "{}")
            assertEquals(
                "Unknown tool: beta_summarize",
                client.recvObject().getValue("error").jsonObject.getValue("message").jsonPrimitive.content,
            )
        }
    }

    @Test
    fun `a rule that throws hides what it was asked about, and the server keeps serving`() {
        val server = notesServer()
        server.visibleWhen { _, _ -> throw IllegalStateException("the feature-flag service is down") }
        RawClient(server).use { client ->
            client.initialize()
            client.send("""{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}""")
            assertEquals(listOf<String>(), names(client.recvObject(), "tools", "name"))
            client.send("""{"jsonrpc":"2.0","id":2,"method":"ping"}""")
            assertEquals("2", client.recvObject().getValue("id").jsonPrimitive.content)
        }
    }

    @Test
    fun `a view that requires a tag is neither listed nor read without it`() {
        val server = notesServer()
        server.addUiResource(
            UiResourceDefinition(
                uri = "ui://admin/panel.html",
                name = "panel",
                html = "<!DOCTYPE html><html><body>panel</body></html>",
                requiredTags = listOf("staff"),
            ),
        )
        RawClient(server).use { client ->
            client.initialize()
            client.send("""{"jsonrpc":"2.0","id":1,"method":"resources/list","params":{}}""")
            assertEquals(listOf<String>(), names(client.recvObject(), "resources", "uri"))
            client.send("""{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"ui://admin/panel.html"}}""")
            val error = client.recvObject().getValue("error").jsonObject
            assertEquals(-32002, error.getValue("code").jsonPrimitive.content.toInt())
        }
    }
}
