// The conformance server's 2026-07-28 fixtures with Kotlin handlers: MRTR rounds written both
// ways (returning ToolResult.InputRequired, and `context.elicit(...)` that asks and comes
// back), the per-request capability and log level, the list-change triggers, and a tool whose
// argument is mirrored in an Mcp-Param-Region header.
package dev.toolwire.demo

import dev.toolwire.CallContext
import dev.toolwire.ContentBlock
import dev.toolwire.LogLevel
import dev.toolwire.PromptDefinition
import dev.toolwire.PromptMessageRecord
import dev.toolwire.PromptRendering
import dev.toolwire.PromptRole
import dev.toolwire.Server
import dev.toolwire.ToolDefinition
import dev.toolwire.ToolResult
import dev.toolwire.ToolwireException
import dev.toolwire.prompt
import dev.toolwire.tool
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.buildJsonObject
import kotlinx.serialization.json.contentOrNull
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import kotlinx.serialization.json.put

private const val NO_ARGS = """{"type":"object","properties":{}}"""

private fun Server.fixture(name: String, description: String, schema: String = NO_ARGS, body: suspend (CallContext, String) -> ToolResult) =
    tool(ToolDefinition(name = name, description = description, inputSchemaJson = schema), body)

private fun ask(message: String, field: String, type: String = "string") =
    """{"message":${JsonPrimitive(message)},"requestedSchema":{"type":"object","properties":{"$field":{"type":"$type"}},"required":["$field"]}}"""

private fun sampling(text: String, maxTokens: Int) =
    """{"messages":[{"role":"user","content":{"type":"text","text":${JsonPrimitive(text)}}}],"maxTokens":$maxTokens}"""

/** `{key: {method, params}}` as JSON text, from (key, method, params JSON) triples. */
private fun requests(vararg asked: Triple<String, String, String>) =
    asked.joinToString(",", "{", "}") { (key, method, params) -> "\"$key\":{\"method\":\"$method\",\"params\":$params}" }

private fun inputRequired(state: String? = null, vararg asked: Triple<String, String, String>) =
    ToolResult.InputRequired(inputRequestsJson = requests(*asked), requestState = state)

private fun responses(json: String): JsonObject = Json.parseToJsonElement(json).jsonObject

/** An accepted elicitation's content under [key], if there is one. */
private fun accepted(responses: JsonObject, key: String): JsonObject? = acceptedContent(responses[key] as? JsonObject)

/** An elicitation answer's content, if the user accepted. */
internal fun acceptedContent(answer: JsonObject?): JsonObject? {
    if (answer?.get("action")?.jsonPrimitive?.contentOrNull != "accept") return null
    return answer["content"] as? JsonObject ?: JsonObject(emptyMap())
}

private fun JsonObject?.text(key: String): String? = (this?.get(key) as? JsonPrimitive)?.takeIf { it.isString }?.content

fun addModernFixtures(server: Server) {
    server.fixture("test_missing_capability", "Needs the client's sampling capability") { context, _ ->
        if (responses(context.clientCapabilitiesJson()).containsKey("sampling")) {
            ToolResult.Text("Client declared sampling capability; proceeding.")
        } else {
            // Without it the engine answers -32021 (2026-07-28) or an error result.
            context.sample(sampling("Hello", 10))
            ToolResult.Text("unreachable")
        }
    }
    server.fixture("test_streaming_elicitation", "Asks for confirmation through the protocol of the request") { context, _ ->
        val answer = responses(context.elicit(ask("Please confirm", "confirmed", "boolean")))
        ToolResult.Text("confirmation: ${answer.text("action")}")
    }
    server.fixture("test_logging_tool", "Logs three messages at the level the request asked for") { context, _ ->
        context.log(LogLevel.DEBUG, "debug message", null)
        context.log(LogLevel.INFO, "info message", null)
        context.log(LogLevel.WARNING, "warning message", null)
        ToolResult.Text("Logging tool executed")
    }
    server.fixture(
        "test_x_mcp_header",
        "Echoes a region that is mirrored in the Mcp-Param-Region header",
        """{"type":"object","properties":{"region":{"type":"string","description":"Mirrored into the Mcp-Param-Region header","x-mcp-header":"Region"}}}""",
    ) { _, args -> ToolResult.Text("region=${responses(args).text("region") ?: "<none>"}") }
    server.fixture("test_input_required_result_elicitation", "Asks the user's name (MRTR)") { context, _ ->
        val name = accepted(responses(context.inputResponsesJson()), "user_name").text("name")
        if (name != null) ToolResult.Text("Hello, $name!")
        else inputRequired(null, Triple("user_name", "elicitation/create", ask("What is your name?", "name")))
    }
    server.fixture("test_input_required_result_sampling", "Asks the client's model (MRTR)") { context, _ ->
        val answer = responses(context.inputResponsesJson())["capital_question"] as? JsonObject
        if (answer != null) ToolResult.Text("Model said: ${(answer["content"] as? JsonObject).text("text") ?: ""}")
        else inputRequired(null, Triple("capital_question", "sampling/createMessage", sampling("What is the capital of France?", 100)))
    }
    server.fixture("test_input_required_result_list_roots", "Asks for the client's roots (MRTR)") { context, _ ->
        val roots = (responses(context.inputResponsesJson())["client_roots"] as? JsonObject)?.get("roots") as? JsonArray
        if (roots != null) ToolResult.Text("Client exposed ${roots.size} root(s).")
        else inputRequired(null, Triple("client_roots", "roots/list", "{}"))
    }
    server.fixture("test_input_required_result_request_state", "Carries state between rounds (MRTR)") { context, _ ->
        if (accepted(responses(context.inputResponsesJson()), "confirm") != null && context.requestState() == "awaiting-confirm") {
            ToolResult.Text("state-ok: confirmed")
        } else {
            inputRequired("awaiting-confirm", Triple("confirm", "elicitation/create", ask("Please confirm", "ok", "boolean")))
        }
    }
    server.fixture("test_input_required_result_multiple_inputs", "Asks three questions in one round (MRTR)") { context, _ ->
        val answered = responses(context.inputResponsesJson())
        if (listOf("user_name", "greeting", "client_roots").all { answered.containsKey(it) } && context.requestState() == "multi") {
            ToolResult.Text("All inputs received.")
        } else {
            inputRequired(
                "multi",
                Triple("user_name", "elicitation/create", ask("What is your name?", "name")),
                Triple("greeting", "sampling/createMessage", sampling("Generate a greeting", 50)),
                Triple("client_roots", "roots/list", "{}"),
            )
        }
    }
    server.fixture("test_input_required_result_multi_round", "Asks two questions, one per round (MRTR)") { context, _ ->
        val answered = responses(context.inputResponsesJson())
        val state = context.requestState()?.let { responses(it) }
        val color = accepted(answered, "step2").text("color")
        val earlier = state.text("name")
        val name = accepted(answered, "step1").text("name")
        when {
            earlier != null && color != null -> ToolResult.Text("$earlier likes $color.")
            name != null -> inputRequired(
                buildJsonObject { put("name", name) }.toString(),
                Triple("step2", "elicitation/create", ask("Step 2: What is your favorite color?", "color")),
            )
            else -> inputRequired("""{"step":1}""", Triple("step1", "elicitation/create", ask("Step 1: What is your name?", "name")))
        }
    }
    server.fixture("test_input_required_result_tampered_state", "Refuses a state that was altered (MRTR)") { context, _ ->
        if (accepted(responses(context.inputResponsesJson()), "confirm") != null && context.requestState() == "untampered") {
            ToolResult.Text("state verified")
        } else {
            inputRequired("untampered", Triple("confirm", "elicitation/create", ask("Please confirm", "ok", "boolean")))
        }
    }
    server.fixture("test_input_required_result_capabilities", "Asks only what the client can answer (MRTR)") { context, _ ->
        val answered = responses(context.inputResponsesJson())
        if (answered.containsKey("sample") || answered.containsKey("ask")) {
            ToolResult.Text("Answered.")
        } else {
            // The engine also leaves out kinds the request did not declare.
            inputRequired(
                null,
                Triple("sample", "sampling/createMessage", sampling("Say hello", 50)),
                Triple("ask", "elicitation/create", ask("Please confirm", "ok", "boolean")),
            )
        }
    }
    server.prompt(PromptDefinition("test_input_required_result_prompt", description = "A prompt that asks for context first (MRTR)")) {
        val context = accepted(responses(inputResponsesJson), "user_context").text("context")
            ?: throw ToolwireException.InputRequired(
                "the prompt needs context",
                requests(Triple("user_context", "elicitation/create", ask("What context should the prompt use?", "context"))),
                null,
            )
        PromptRendering(listOf(PromptMessageRecord(PromptRole.USER, ContentBlock.Text("Use the following context: $context"))))
    }
    // Not a harness fixture: the pool test updates a resource on one replica and listens on the others.
    server.fixture(
        "test_update_resource",
        "Announces that the resource `uri` changed: listeners hear notifications/resources/updated",
        """{"type":"object","properties":{"uri":{"type":"string"}},"required":["uri"]}""",
    ) { _, args ->
        val uri = Json.parseToJsonElement(args).jsonObject.getValue("uri").jsonPrimitive.content
        server.notifyResourceUpdated(uri)
        ToolResult.Text("updated $uri")
    }
    server.fixture("test_trigger_tool_change", "Adds and removes a tool: listeners hear tools/list_changed") { _, _ ->
        server.fixture("test_dynamic_tool", "Here for a moment") { _, _ -> ToolResult.Text("dynamic") }
        server.removeTool("test_dynamic_tool")
        ToolResult.Text("tool list changed")
    }
    server.fixture("test_trigger_prompt_change", "Adds and removes a prompt: listeners hear prompts/list_changed") { _, _ ->
        server.prompt(PromptDefinition("test_dynamic_prompt", description = "Here for a moment")) {
            PromptRendering(listOf(PromptMessageRecord(PromptRole.USER, ContentBlock.Text("dynamic"))))
        }
        server.removePrompt("test_dynamic_prompt")
        ToolResult.Text("prompt list changed")
    }
}
