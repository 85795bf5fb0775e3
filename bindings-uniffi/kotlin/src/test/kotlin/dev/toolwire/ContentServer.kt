package dev.toolwire

import kotlin.system.exitProcess

/** A stdio server for StdioTest: results that take the fast path's general route (content blocks). */
fun main() {
    val server = Server("content-server", "1.0")
    server.tool(ToolDefinition(name = "blocks")) { _, _ ->
        ToolResult.Content(listOf(ContentBlock.Text("one"), ContentBlock.Image("aGk=", "image/png")), """{"n":2}""")
    }
    server.tool(ToolDefinition(name = "text")) { _, _ -> ToolResult.Text("plain") }
    server.runStdio()
    exitProcess(0)
}
