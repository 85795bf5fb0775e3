// MCP Apps: a greeting shown in an interactive view (examples/apps/greeter.html), every language's
// example of the extension (its conformance server serves it too). `say_hello` links to the view;
// the view calls `shout` back through the host, a tool only the view may call, so clients that
// render no views never see it.
package dev.toolwire.demo

import dev.toolwire.ContentBlock
import dev.toolwire.Server
import dev.toolwire.ToolDefinition
import dev.toolwire.ToolResult
import dev.toolwire.UiResourceDefinition
import dev.toolwire.Visibility
import dev.toolwire.tool
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.buildJsonObject
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import java.nio.file.Files

const val GREETER_VIEW_URI = "ui://greeter/view.html"

/** The greeter's view and its two tools, on [server]. */
fun addGreeter(server: Server) {
    server.addUiResource(
        UiResourceDefinition(
            uri = GREETER_VIEW_URI,
            name = "greeter-view",
            html = Files.readString(exampleDir("apps").resolve("greeter.html")),
            description = "Shows a greeting, and shouts it on a click",
            uiMetaJson = """{"prefersBorder":true}""",
        ),
    )
    server.tool(
        ToolDefinition(
            name = "say_hello",
            description = "Greets someone by name (in a view, where the client shows them)",
            inputSchemaJson = """{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}""",
            uiResource = GREETER_VIEW_URI,
        ),
    ) { context, argumentsJson ->
        val name = Json.parseToJsonElement(argumentsJson).jsonObject.getValue("name").jsonPrimitive.content
        val greeting = "Hello, $name!"
        // The text is for the model and for clients without views; the view reads the structure.
        if (!context.clientRendersApps()) {
            ToolResult.Text(greeting)
        } else {
            val structured = buildJsonObject {
                put("greeting", JsonPrimitive(greeting))
                put("name", JsonPrimitive(name))
            }
            ToolResult.Content(listOf(ContentBlock.Text(greeting)), structured.toString())
        }
    }
    server.tool(
        ToolDefinition(
            name = "shout",
            description = "The text in capitals (called by the greeter's view)",
            inputSchemaJson = """{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}""",
            uiResource = GREETER_VIEW_URI,
            visibility = listOf(Visibility.APP),
        ),
    ) { _, argumentsJson ->
        val shouted = Json.parseToJsonElement(argumentsJson).jsonObject.getValue("text").jsonPrimitive.content.uppercase()
        ToolResult.Content(listOf(ContentBlock.Text(shouted)), buildJsonObject { put("shouted", JsonPrimitive(shouted)) }.toString())
    }
}
