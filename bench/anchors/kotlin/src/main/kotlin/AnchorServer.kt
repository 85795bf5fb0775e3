// Benchmark anchor: the official Kotlin SDK's Server on stdio.
// Tools: echo, sleep (the slow tool), and tool_000..tool_099, as in toolwire's demo.
import io.modelcontextprotocol.kotlin.sdk.server.Server
import io.modelcontextprotocol.kotlin.sdk.server.ServerOptions
import io.modelcontextprotocol.kotlin.sdk.server.StdioServerTransport
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
import kotlinx.serialization.json.buildJsonObject
import kotlinx.serialization.json.jsonPrimitive
import kotlinx.serialization.json.long
import kotlinx.serialization.json.put
import kotlinx.serialization.json.putJsonObject
import kotlin.system.exitProcess

fun main() {
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

    val transport = StdioServerTransport(System.`in`.asSource().buffered(), System.out.asSink().buffered())
    runBlocking {
        val session = server.createSession(transport)
        val done = Job()
        session.onClose { done.complete() }
        done.join()
    }
    exitProcess(0)
}
