// The conformance server with Kotlin handlers: the tools, resources and prompts the official MCP
// conformance suite (@modelcontextprotocol/conformance) exercises, with the answers it expects.
// Run it with `examples/run-demo kotlin --conformance --http PORT`.
package dev.toolwire.demo

import dev.toolwire.CallContext
import dev.toolwire.ContentBlock
import dev.toolwire.PromptArgumentDefinition
import dev.toolwire.PromptDefinition
import dev.toolwire.PromptMessageRecord
import dev.toolwire.PromptRendering
import dev.toolwire.PromptRole
import dev.toolwire.ResourceContent
import dev.toolwire.ResourceDefinition
import dev.toolwire.Server
import dev.toolwire.ServerConfig
import dev.toolwire.ToolDefinition
import dev.toolwire.ToolResult
import dev.toolwire.prompt
import dev.toolwire.promptCompletion
import dev.toolwire.resource
import dev.toolwire.tool
import kotlinx.coroutines.delay
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive

const val RED_PIXEL_PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"
const val SILENT_WAV = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQIAAAAAAA=="

private const val NO_ARGS = """{"type":"object","properties":{}}"""

private fun strings(vararg names: String): String {
    val properties = names.joinToString(",") { "\"$it\":{\"type\":\"string\"}" }
    val required = names.joinToString(",") { "\"$it\"" }
    return """{"type":"object","properties":{$properties},"required":[$required]}"""
}

private fun Server.simple(name: String, description: String, schema: String = NO_ARGS, body: suspend (CallContext, String) -> ToolResult) =
    tool(ToolDefinition(name = name, description = description, inputSchemaJson = schema), body)

private fun embedded(uri: String, mimeType: String, text: String) = ContentBlock.Json(
    """{"type":"resource","resource":{"uri":${JsonPrimitive(uri)},"mimeType":"$mimeType","text":${JsonPrimitive(text)}}}""",
)

private suspend fun elicitAndReport(context: CallContext, paramsJson: String, prefix: String): ToolResult {
    val answer = Json.parseToJsonElement(context.elicit(paramsJson)).jsonObject
    val action = answer["action"]?.jsonPrimitive?.content
    return ToolResult.Text("${prefix}action=$action, content=${answer["content"] ?: "null"}")
}

private fun argument(argsJson: String, name: String) =
    Json.parseToJsonElement(argsJson).jsonObject.getValue(name).jsonPrimitive.content

/** The conformance server; [config] carries a replica's `redis` and `requestStateKeys`. */
fun buildConformanceServer(config: ServerConfig = ServerConfig()): Server {
    val server = Server("toolwire-conformance", "0.1.0", null, config)
    server.simple("test_simple_text", "Returns simple text") { _, _ ->
        ToolResult.Text("This is a simple text response for testing.")
    }
    server.simple("test_image_content", "Returns an image") { _, _ ->
        ToolResult.Content(listOf(ContentBlock.Image(RED_PIXEL_PNG, "image/png")), null)
    }
    server.simple("test_audio_content", "Returns audio") { _, _ ->
        ToolResult.Content(listOf(ContentBlock.Audio(SILENT_WAV, "audio/wav")), null)
    }
    server.simple("test_embedded_resource", "Returns an embedded resource") { _, _ ->
        ToolResult.Content(listOf(embedded("test://embedded-resource", "text/plain", "This is an embedded resource content.")), null)
    }
    server.simple("test_multiple_content_types", "Returns text, an image and a resource") { _, _ ->
        ToolResult.Content(
            listOf(
                ContentBlock.Text("Multiple content types test:"),
                ContentBlock.Image(RED_PIXEL_PNG, "image/png"),
                embedded("test://mixed-content-resource", "application/json", """{"test":"data","value":123}"""),
            ),
            null,
        )
    }
    server.simple("test_tool_with_logging", "Logs three messages while it runs") { context, _ ->
        context.log(dev.toolwire.LogLevel.INFO, "Tool execution started", null)
        delay(50)
        context.log(dev.toolwire.LogLevel.INFO, "Tool processing data", null)
        delay(50)
        context.log(dev.toolwire.LogLevel.INFO, "Tool execution completed", null)
        ToolResult.Text("Tool with logging executed successfully")
    }
    server.simple("test_error_handling", "Always fails") { _, _ ->
        throw IllegalStateException("This tool intentionally returns an error for testing")
    }
    server.simple("test_tool_with_progress", "Reports progress 0, 50, 100 of 100") { context, _ ->
        for (done in listOf(0.0, 50.0, 100.0)) {
            context.progress(done, 100.0, null)
            if (done < 100.0) delay(50)
        }
        ToolResult.Text("Tool with progress executed successfully")
    }
    server.simple("test_sampling", "Asks the client's model", strings("prompt")) { context, args ->
        val prompt = JsonPrimitive(argument(args, "prompt"))
        val answer = context.sample("""{"messages":[{"role":"user","content":{"type":"text","text":$prompt}}],"maxTokens":100}""")
        val text = Json.parseToJsonElement(answer).jsonObject["content"]?.jsonObject?.get("text")?.jsonPrimitive?.content ?: ""
        ToolResult.Text("LLM response: $text")
    }
    server.simple("test_elicitation", "Asks the user", strings("message")) { context, args ->
        val message = JsonPrimitive(argument(args, "message"))
        elicitAndReport(
            context,
            """{"message":$message,"requestedSchema":{"type":"object","properties":{"username":{"type":"string","description":"User's response"},"email":{"type":"string","description":"User's email address"}},"required":["username","email"]}}""",
            "User response: ",
        )
    }
    server.simple("test_elicitation_sep1034_defaults", "Elicitation with defaults") { context, _ ->
        elicitAndReport(
            context,
            """{"message":"Please review and update the form fields with defaults","requestedSchema":{"type":"object","properties":{
              "name":{"type":"string","description":"User name","default":"John Doe"},
              "age":{"type":"integer","description":"User age","default":30},
              "score":{"type":"number","description":"User score","default":95.5},
              "status":{"type":"string","description":"User status","enum":["active","inactive","pending"],"default":"active"},
              "verified":{"type":"boolean","description":"Verified","default":true}}}}""",
            "Elicitation completed: ",
        )
    }
    server.simple("test_elicitation_sep1330_enums", "Elicitation with every enum form") { context, _ ->
        elicitAndReport(
            context,
            """{"message":"Please select options from the enum fields","requestedSchema":{"type":"object","properties":{
              "untitledSingle":{"type":"string","enum":["option1","option2","option3"]},
              "titledSingle":{"type":"string","oneOf":[{"const":"value1","title":"First Option"},{"const":"value2","title":"Second Option"},{"const":"value3","title":"Third Option"}]},
              "legacyEnum":{"type":"string","enum":["opt1","opt2","opt3"],"enumNames":["Option One","Option Two","Option Three"]},
              "untitledMulti":{"type":"array","items":{"type":"string","enum":["option1","option2","option3"]}},
              "titledMulti":{"type":"array","items":{"anyOf":[{"const":"value1","title":"First Choice"},{"const":"value2","title":"Second Choice"},{"const":"value3","title":"Third Choice"}]}}}}}""",
            "Elicitation completed: ",
        )
    }
    server.simple(
        "json_schema_2020_12_tool",
        "Tool with JSON Schema 2020-12 features",
        """{"${'$'}schema":"https://json-schema.org/draft/2020-12/schema","type":"object",
           "${'$'}defs":{"address":{"${'$'}anchor":"addressDef","type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}}}},
           "properties":{"name":{"type":"string"},"address":{"${'$'}ref":"#/${'$'}defs/address"},
             "contactMethod":{"type":"string","enum":["phone","email"]},"phone":{"type":"string"},"email":{"type":"string"}},
           "allOf":[{"anyOf":[{"required":["phone"]},{"required":["email"]}]}],
           "if":{"properties":{"contactMethod":{"const":"phone"}},"required":["contactMethod"]},
           "then":{"required":["phone"]},"else":{"required":["email"]},
           "additionalProperties":false}""",
    ) { _, args -> ToolResult.Text(args) }
    server.simple("test_reconnection", "Closes its SSE stream mid-call; the answer comes on resumption") { context, _ ->
        delay(50)
        context.closeSseStream()
        delay(200)
        ToolResult.Text("Reconnection test completed")
    }

    server.resource(ResourceDefinition("test://static-text", "Static text", description = "A static text resource", mimeType = "text/plain")) { uri, _ ->
        listOf(ResourceContent(uri, text = "This is the content of the static text resource."))
    }
    server.resource(ResourceDefinition("test://static-binary", "Static binary", description = "A static PNG", mimeType = "image/png")) { uri, _ ->
        listOf(ResourceContent(uri, blobBase64 = RED_PIXEL_PNG))
    }
    server.resource(ResourceDefinition("test://watched-resource", "Watched", description = "A resource to subscribe to", mimeType = "text/plain")) { uri, _ ->
        listOf(ResourceContent(uri, text = "Watched resource content"))
    }
    server.resource(ResourceDefinition("test://template/{id}/data", "Template data", description = "Data for an id", mimeType = "application/json")) { uri, variables ->
        val id = variables.getValue("id")
        listOf(ResourceContent(uri, text = """{"id":${JsonPrimitive(id)},"templateTest":true,"data":${JsonPrimitive("Data for ID: $id")}}"""))
    }

    fun user(block: ContentBlock) = PromptMessageRecord(PromptRole.USER, block)
    server.prompt(PromptDefinition("test_simple_prompt", description = "A prompt without arguments")) {
        PromptRendering(listOf(user(ContentBlock.Text("This is a simple prompt for testing."))))
    }
    server.prompt(
        PromptDefinition(
            "test_prompt_with_arguments",
            description = "A prompt with two arguments",
            arguments = listOf(
                PromptArgumentDefinition("arg1", "First test argument", true),
                PromptArgumentDefinition("arg2", "Second test argument", true),
            ),
        ),
    ) { args ->
        PromptRendering(listOf(user(ContentBlock.Text("Prompt with arguments: arg1='${args["arg1"]}', arg2='${args["arg2"]}'"))))
    }
    server.prompt(
        PromptDefinition(
            "test_prompt_with_embedded_resource",
            description = "A prompt embedding a resource",
            arguments = listOf(PromptArgumentDefinition("resourceUri", "URI of the resource to embed", true)),
        ),
    ) { args ->
        PromptRendering(
            listOf(
                user(embedded(args.getValue("resourceUri"), "text/plain", "Embedded resource content for testing.")),
                user(ContentBlock.Text("Please process the embedded resource above.")),
            ),
        )
    }
    server.prompt(PromptDefinition("test_prompt_with_image", description = "A prompt with an image")) {
        PromptRendering(
            listOf(
                user(ContentBlock.Image(RED_PIXEL_PNG, "image/png")),
                user(ContentBlock.Text("Please analyze the image above.")),
            ),
        )
    }
    server.promptCompletion("test_prompt_with_arguments") { _, value, _ ->
        listOf("paris", "park", "party", "test", "testing").filter { it.startsWith(value) }
    }
    // The Skills extension's scenarios read the example skills.
    server.loadSkills(exampleSkillsDir().toString())
    // MCP Apps: the greeter example (examples/apps), for the browser test.
    addGreeter(server)
    addModernFixtures(server)
    addTaskFixtures(server)
    return server
}

/** A class of the demo's own: where its jar or classes folder is. */
private object SkillsAnchor

/** examples/skills, or where TOOLWIRE_SKILLS_DIR says. */
fun exampleSkillsDir(): java.nio.file.Path =
    System.getenv("TOOLWIRE_SKILLS_DIR")?.let { java.nio.file.Path.of(it) } ?: exampleDir("skills")

/**
 * examples/[name], found above this class's jar (or classes folder) or the working directory,
 * whichever is in a checkout.
 */
fun exampleDir(name: String): java.nio.file.Path {
    val starts = listOfNotNull(
        runCatching { java.nio.file.Path.of(SkillsAnchor::class.java.protectionDomain.codeSource.location.toURI()) }.getOrNull(),
        runCatching { java.nio.file.Path.of("").toAbsolutePath() }.getOrNull(),
    )
    for (start in starts) {
        var at: java.nio.file.Path? = start
        while (at != null) {
            val found = at.resolve("examples").resolve(name)
            if (java.nio.file.Files.isDirectory(found)) return found
            at = at.parent
        }
    }
    error("examples/$name not found above ${starts.joinToString()}")
}
