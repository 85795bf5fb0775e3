// The tools of bench/payloads, as in every language's demo (`--bench-tools`):
// - `take_text {text}`: answers the text's length in characters (code points);
// - `give_text {bytes}`: answers a text block of that many ASCII bytes;
// - `give_structured {bytes}`: answers `{"items": [...]}` of `bytes / 64` items as structured
//   content, checked against its output schema (the engine adds its JSON text as a text block);
// - `validate_big`: the large input schema of bench/schemas/big.json; answers `lines=N`;
// - `validate_small {text}`: a trivial schema (other properties allowed); parses its arguments
//   as `validate_big` does, answers `ok`.
package dev.toolwire.demo

import dev.toolwire.Server
import dev.toolwire.ToolDefinition
import dev.toolwire.ToolResult
import dev.toolwire.tool
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.add
import kotlinx.serialization.json.addJsonObject
import kotlinx.serialization.json.buildJsonObject
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import kotlinx.serialization.json.long
import kotlinx.serialization.json.put
import kotlinx.serialization.json.putJsonArray
import java.io.File

private const val ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"
private const val ITEM_BYTES = 64L
private const val MAX_BYTES = 64L * 1024 * 1024

/**
 * bench/schemas/big.json, the one file every server reads: found from where this class was
 * loaded (examples/kotlin/target/toolwire-demo-0.1.0.jar, or target/classes), four levels
 * below the repository's root either way.
 */
private fun bigSchemaFile(): File {
    val loadedFrom = File(BenchToolsMarker::class.java.protectionDomain.codeSource.location.toURI())
    val root = loadedFrom.parentFile?.parentFile?.parentFile?.parentFile
    return File(root, "bench/schemas/big.json")
}

private object BenchToolsMarker

private fun arguments(json: String): JsonObject = Json.parseToJsonElement(json).jsonObject

private fun bytesSchema() =
    """{"type":"object","properties":{"bytes":{"type":"integer","minimum":0,"maximum":$MAX_BYTES}},""" +
        """"required":["bytes"],"additionalProperties":false}"""

/** Adds the five tools of bench/payloads to [server]. */
fun addBenchTools(server: Server) {
    val bytes = bytesSchema()
    server.tool(
        ToolDefinition(
            name = "take_text",
            description = "Answers the length in characters of the text it is given.",
            inputSchemaJson = """{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}""",
        ),
    ) { _, args ->
        val text = arguments(args).getValue("text").jsonPrimitive.content
        ToolResult.Text(text.codePointCount(0, text.length).toString())
    }

    server.tool(
        ToolDefinition(name = "give_text", description = "Answers a text of that many ASCII bytes.", inputSchemaJson = bytes),
    ) { _, args ->
        val count = arguments(args).getValue("bytes").jsonPrimitive.long.toInt()
        ToolResult.Text(ALPHABET.repeat(count / ALPHABET.length + 1).substring(0, count))
    }

    val item = """{"type":"object","properties":{"id":{"type":"integer"},"name":{"type":"string"},""" +
        """"tags":{"type":"array","items":{"type":"string"}}},"required":["id","name","tags"]}"""
    server.tool(
        ToolDefinition(
            name = "give_structured",
            description = "Answers structured content of about that many bytes.",
            inputSchemaJson = bytes,
            outputSchemaJson = """{"type":"object","properties":{"items":{"type":"array","items":$item}},"required":["items"]}""",
        ),
    ) { _, args ->
        val count = arguments(args).getValue("bytes").jsonPrimitive.long / ITEM_BYTES
        val result = buildJsonObject {
            putJsonArray("items") {
                for (n in 0 until count) {
                    addJsonObject {
                        put("id", n)
                        put("name", "item-" + n.toString().padStart(6, '0'))
                        putJsonArray("tags") {
                            add("alpha")
                            add("beta")
                            add("gamma")
                        }
                    }
                }
            }
        }
        ToolResult.Structured(result.toString())
    }

    server.tool(
        ToolDefinition(
            name = "validate_big",
            description = "Checks an order against a large schema; answers its line count.",
            inputSchemaJson = bigSchemaFile().readText(),
        ),
    ) { _, args ->
        val lines = arguments(args).getValue("order").jsonObject.getValue("lines").jsonArray.size
        ToolResult.Text("lines=$lines")
    }

    server.tool(
        ToolDefinition(
            name = "validate_small",
            description = "A trivial schema; answers ok.",
            inputSchemaJson = """{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}""",
        ),
    ) { _, args ->
        // Parsed as validate_big's are (a Kotlin handler gets its arguments as JSON text), so
        // that the two tools' difference is the schema check, not the handler's parse.
        arguments(args)
        ToolResult.Text("ok")
    }
}
