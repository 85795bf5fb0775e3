// The conformance server's tasks-extension fixtures with Kotlin handlers (the alpha harness's
// tasks-* scenarios). Nothing in them knows about tasks: each is marked with how it may run,
// the engine decides when a call becomes a task, and inside one `context.elicit(...)` waits
// for the client's tasks/update.
package dev.toolwire.demo

import dev.toolwire.CallContext
import dev.toolwire.Question
import dev.toolwire.Server
import dev.toolwire.TaskSupport
import dev.toolwire.ToolDefinition
import dev.toolwire.ToolResult
import dev.toolwire.tool
import kotlinx.coroutines.delay
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.booleanOrNull
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.longOrNull

private const val NO_ARGUMENTS = """{"type":"object","properties":{}}"""

private fun Server.taskFixture(
    name: String,
    description: String,
    support: TaskSupport,
    schema: String = NO_ARGUMENTS,
    body: suspend (CallContext, String) -> ToolResult,
) = tool(ToolDefinition(name = name, description = description, inputSchemaJson = schema, taskSupport = support), body)

private fun form(message: String, properties: String, required: String = "[]") =
    """{"mode":"form","message":${JsonPrimitive(message)},"requestedSchema":{"type":"object","properties":$properties,"required":$required}}"""

private fun json(text: String): JsonObject = Json.parseToJsonElement(text).jsonObject

private fun JsonObject?.string(key: String): String? = (this?.get(key) as? JsonPrimitive)?.takeIf { it.isString }?.content

fun addTaskFixtures(server: Server) {
    server.taskFixture(
        "greet",
        "Greets by name",
        TaskSupport.NEVER,
        """{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}""",
    ) { _, args -> ToolResult.Text("Hello, ${json(args).string("name")}!") }
    server.taskFixture(
        "slow_compute",
        "Computes for the given number of seconds",
        TaskSupport.OPTIONAL,
        """{"type":"object","properties":{"seconds":{"type":"integer","minimum":0},"label":{"type":"string"}}}""",
    ) { _, args ->
        val arguments = json(args)
        val seconds = (arguments["seconds"] as? JsonPrimitive)?.longOrNull ?: 0L
        val label = arguments.string("label") ?: "default"
        delay(seconds * 1000)
        ToolResult.Text("Computation \"$label\" completed after ${seconds}s")
    }
    server.taskFixture("failing_job", "Runs a second, then fails (a tool error: the task completes)", TaskSupport.REQUIRED) { _, _ ->
        delay(1000)
        ToolResult.Error("failing_job always fails")
    }
    server.taskFixture("protocol_error_job", "Fails with a JSON-RPC error (the task fails)", TaskSupport.REQUIRED) { _, _ ->
        ToolResult.ProtocolError(-32603, "protocol_error_job: internal failure")
    }
    server.taskFixture(
        "confirm_delete",
        "Asks for confirmation before deleting a file",
        TaskSupport.OPTIONAL,
        """{"type":"object","properties":{"filename":{"type":"string"}},"required":["filename"]}""",
    ) { context, args ->
        val filename = json(args).string("filename")
        val answer = json(context.elicit(form("Delete $filename?", """{"confirm":{"type":"boolean"}}""", """["confirm"]""")))
        val confirmed = (acceptedContent(answer)?.get("confirm") as? JsonPrimitive)?.booleanOrNull == true
        ToolResult.Text(if (confirmed) "Deleted $filename" else "Kept $filename")
    }
    server.taskFixture("multi_input", "Asks two questions at once", TaskSupport.OPTIONAL) { context, _ ->
        val answers = context.askAll(
            listOf(
                Question("elicitation/create", form("Your name?", """{"name":{"type":"string"}}""")),
                Question("elicitation/create", form("Proceed?", """{"confirm":{"type":"boolean"}}""")),
            ),
        )
        ToolResult.Text("Got both answers (${acceptedContent(json(answers[0])).string("name") ?: "?"})")
    }
    server.taskFixture("test_tool_with_task", "Asks for a name (an MRTR round), then greets as a task", TaskSupport.REQUIRED) { context, _ ->
        val name = acceptedContent(json(context.inputResponsesJson())["user_name"] as? JsonObject).string("name")
        if (name != null) {
            ToolResult.Text("Hello, $name!")
        } else {
            val question = form("What is your name?", """{"name":{"type":"string"}}""", """["name"]""")
            ToolResult.InputRequired(
                inputRequestsJson = """{"user_name":{"method":"elicitation/create","params":$question}}""",
                requestState = null,
            )
        }
    }
}
