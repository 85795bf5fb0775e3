// A weather server written with the official Kotlin SDK (io.modelcontextprotocol:kotlin-sdk-server).
import io.modelcontextprotocol.kotlin.sdk.server.Server
import io.modelcontextprotocol.kotlin.sdk.server.ServerOptions
import io.modelcontextprotocol.kotlin.sdk.server.StdioServerTransport
import io.modelcontextprotocol.kotlin.sdk.types.CallToolResult
import io.modelcontextprotocol.kotlin.sdk.types.Implementation
import io.modelcontextprotocol.kotlin.sdk.types.ServerCapabilities
import io.modelcontextprotocol.kotlin.sdk.types.TextContent
import io.modelcontextprotocol.kotlin.sdk.types.ToolSchema
import kotlinx.coroutines.Job
import kotlinx.coroutines.runBlocking
import kotlinx.io.asSink
import kotlinx.io.asSource
import kotlinx.io.buffered
import kotlinx.serialization.json.add
import kotlinx.serialization.json.buildJsonObject
import kotlinx.serialization.json.int
import kotlinx.serialization.json.jsonPrimitive
import kotlinx.serialization.json.put
import kotlinx.serialization.json.putJsonArray
import kotlinx.serialization.json.putJsonObject

fun main() {
    val server = Server(
        Implementation(name = "weather", version = "1.0.0"),
        ServerOptions(capabilities = ServerCapabilities(tools = ServerCapabilities.Tools(listChanged = true))),
    )
    server.addTool(
        name = "forecast",
        description = "Daily forecast for a city.",
        inputSchema = ToolSchema(
            properties = buildJsonObject {
                putJsonObject("city") {
                    put("type", "string")
                    put("description", "City name")
                }
                putJsonObject("days") {
                    put("type", "integer")
                    put("minimum", 1)
                    put("maximum", 7)
                }
            },
            required = listOf("city"),
        ),
    ) { request ->
        val city = request.params.arguments?.get("city")?.jsonPrimitive?.content ?: ""
        val days = request.params.arguments?.get("days")?.jsonPrimitive?.int ?: 3
        val forecast = buildJsonObject {
            put("city", city)
            putJsonArray("temperatures") { repeat(days) { add(20.0 + it) } }
        }
        CallToolResult(content = listOf(TextContent(forecast.toString())), structuredContent = forecast)
    }
    val transport = StdioServerTransport(System.`in`.asSource().buffered(), System.out.asSink().buffered())
    runBlocking {
        val session = server.createSession(transport)
        val done = Job()
        session.onClose { done.complete() }
        done.join()
    }
}
