// Benchmark anchor: the official Kotlin SDK's Server on stdio.
// Tools: echo, sleep (the slow tool), and tool_000..tool_099, as in toolwire's demo.
// `--bench-tools` adds the tools of bench/payloads (as toolwire's demos do). The SDK has no
// JSON Schema validator: it lists each tool's schema and hands the handler the arguments
// unchecked, so this anchor validates nothing. Its ToolSchema holds `$schema`, `properties`,
// `required` and `$defs` only: validate_big lists bench/schemas/big.json without the top
// level's `description` and `additionalProperties: false` (everything below is kept as is).
import io.modelcontextprotocol.kotlin.sdk.server.Server
import io.modelcontextprotocol.kotlin.sdk.server.ServerOptions
import io.modelcontextprotocol.kotlin.sdk.server.StdioServerTransport
import io.modelcontextprotocol.kotlin.sdk.types.CallToolRequest
import io.modelcontextprotocol.kotlin.sdk.types.CallToolResult
import io.modelcontextprotocol.kotlin.sdk.types.Implementation
import io.modelcontextprotocol.kotlin.sdk.types.ServerCapabilities
import io.modelcontextprotocol.kotlin.sdk.types.TextContent
import io.modelcontextprotocol.kotlin.sdk.types.ToolSchema
import kotlinx.coroutines.Job
import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking
import kotlinx.io.asSink
import kotlinx.io.asSource
import kotlinx.io.buffered
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.add
import kotlinx.serialization.json.addJsonObject
import kotlinx.serialization.json.buildJsonObject
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import kotlinx.serialization.json.long
import kotlinx.serialization.json.longOrNull
import kotlinx.serialization.json.put
import kotlinx.serialization.json.putJsonArray
import kotlinx.serialization.json.putJsonObject
import java.io.File
import kotlin.system.exitProcess

fun main(args: Array<String>) {
    val server = Server(
        Implementation(name = "anchor-kotlin", version = "1.0.0"),
        ServerOptions(capabilities = ServerCapabilities(tools = ServerCapabilities.Tools(listChanged = true))),
    )

    server.addTool(
        name = "echo",
        description = "Returns the text it is given.",
        inputSchema = ToolSchema(
            properties = buildJsonObject { putJsonObject("text") { put("type", "string") } },
            required = listOf("text"),
        ),
    ) { request ->
        val text = request.params.arguments?.get("text")?.jsonPrimitive?.content ?: ""
        CallToolResult(content = listOf(TextContent(text)))
    }

    server.addTool(
        name = "sleep",
        description = "Waits ms milliseconds.",
        inputSchema = ToolSchema(
            properties = buildJsonObject {
                putJsonObject("ms") {
                    put("type", "integer")
                    put("minimum", 0)
                    put("maximum", 60000)
                }
            },
            required = listOf("ms"),
        ),
    ) { request ->
        val ms = request.params.arguments?.get("ms")?.jsonPrimitive?.long ?: 0L
        delay(ms)
        CallToolResult(content = listOf(TextContent("slept $ms ms")))
    }

    for (i in 0 until 100) {
        server.addTool(
            name = "tool_%03d".format(i),
            description = "Extra tool number $i (benchmarks tools/list).",
            inputSchema = ToolSchema(
                properties = buildJsonObject {
                    putJsonObject("q") { put("type", "string") }
                    putJsonObject("n") {
                        put("type", "integer")
                        put("minimum", 0)
                    }
                },
                required = listOf("q"),
            ),
        ) { request ->
            CallToolResult(content = listOf(TextContent(request.params.arguments?.get("q")?.jsonPrimitive?.content ?: "")))
        }
    }

    if ("--bench-tools" in args) addBenchTools(server)

    val transport = StdioServerTransport(System.`in`.asSource().buffered(), System.out.asSink().buffered())
    runBlocking {
        val session = server.createSession(transport)
        val done = Job()
        session.onClose { done.complete() }
        done.join()
    }
    exitProcess(0)
}

// The tools of bench/payloads (`--bench-tools`), as in toolwire's demos.
private const val ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"
private const val ITEM_BYTES = 64L
private const val MAX_BYTES = 64L * 1024 * 1024

private object BenchToolsMarker

/**
 * bench/schemas/big.json, the one file every server reads: found from where this class was
 * loaded (bench/anchors/kotlin/target/anchor-kotlin-sdk-0.1.0.jar, or target/classes).
 */
private fun bigSchema(): JsonObject {
    val loadedFrom = File(BenchToolsMarker::class.java.protectionDomain.codeSource.location.toURI())
    val bench = loadedFrom.parentFile?.parentFile?.parentFile?.parentFile
    return Json.parseToJsonElement(File(bench, "schemas/big.json").readText()).jsonObject
}

private fun answer(text: String) = CallToolResult(content = listOf(TextContent(text)))

/** `bytes`, or null when it is not an integer 0..64 MiB (nothing checked it before). */
private fun bytesArg(request: CallToolRequest): Long? =
    request.params.arguments?.get("bytes")?.jsonPrimitive?.longOrNull?.takeIf { it in 0..MAX_BYTES }

private val badBytes = CallToolResult(content = listOf(TextContent("bytes must be an integer 0..64 MiB")), isError = true)

fun addBenchTools(server: Server) {
    val bytes = ToolSchema(
        properties = buildJsonObject {
            putJsonObject("bytes") {
                put("type", "integer")
                put("minimum", 0)
                put("maximum", MAX_BYTES)
            }
        },
        required = listOf("bytes"),
    )
    server.addTool(
        name = "take_text",
        description = "Answers the length in characters of the text it is given.",
        inputSchema = ToolSchema(
            properties = buildJsonObject { putJsonObject("text") { put("type", "string") } },
            required = listOf("text"),
        ),
    ) { request ->
        val text = request.params.arguments?.get("text")?.jsonPrimitive?.content ?: ""
        answer(text.codePointCount(0, text.length).toString())
    }

    server.addTool(name = "give_text", description = "Answers a text of that many ASCII bytes.", inputSchema = bytes) { request ->
        val count = bytesArg(request)?.toInt() ?: return@addTool badBytes
        answer(ALPHABET.repeat(count / ALPHABET.length + 1).substring(0, count))
    }

    server.addTool(
        name = "give_structured",
        description = "Answers structured content of about that many bytes.",
        inputSchema = bytes,
        outputSchema = ToolSchema(
            properties = buildJsonObject {
                putJsonObject("items") {
                    put("type", "array")
                    putJsonObject("items") {
                        put("type", "object")
                        putJsonObject("properties") {
                            putJsonObject("id") { put("type", "integer") }
                            putJsonObject("name") { put("type", "string") }
                            putJsonObject("tags") {
                                put("type", "array")
                                putJsonObject("items") { put("type", "string") }
                            }
                        }
                        putJsonArray("required") {
                            add("id")
                            add("name")
                            add("tags")
                        }
                    }
                }
            },
            required = listOf("items"),
        ),
    ) { request ->
        val count = (bytesArg(request) ?: return@addTool badBytes) / ITEM_BYTES
        val structured = buildJsonObject {
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
        // The SDK adds no text block for older clients: written here, as the spec asks.
        CallToolResult(content = listOf(TextContent(structured.toString())), structuredContent = structured)
    }

    val big = bigSchema()
    server.addTool(
        name = "validate_big",
        description = "Checks an order against a large schema; answers its line count.",
        inputSchema = ToolSchema(
            schema = big["\$schema"]?.jsonPrimitive?.content,
            properties = big["properties"]?.jsonObject,
            required = big["required"]?.jsonArray?.map { it.jsonPrimitive.content },
            defs = big["\$defs"]?.jsonObject,
        ),
    ) { request ->
        val lines = (request.params.arguments?.get("order") as? JsonObject)?.get("lines") as? JsonArray
        answer("lines=${lines?.size ?: 0}")
    }

    server.addTool(
        name = "validate_small",
        description = "A trivial schema; answers ok.",
        inputSchema = ToolSchema(
            properties = buildJsonObject { putJsonObject("text") { put("type", "string") } },
            required = listOf("text"),
        ),
    ) { answer("ok") }
}
