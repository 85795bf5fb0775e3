// The Kotlin server of docs/guides/middleware.md (which includes the part between the markers;
// GuideMiddlewareTest.kt tests it).
// --8<-- [start:server]
import dev.toolwire.Server
import dev.toolwire.ToolDefinition
import dev.toolwire.ToolResult
import dev.toolwire.ToolwireException
import dev.toolwire.middleware
import dev.toolwire.runStdio
import dev.toolwire.tool
import java.util.Collections

fun guardedServer(audit: MutableList<String> = Collections.synchronizedList(mutableListOf())): Server {
    val server = Server("guarded", "1.0.0")
    server.tool(ToolDefinition("ping")) { _, _ -> ToolResult.Text("pong") }
    server.tool(ToolDefinition("wipe")) { _, _ -> ToolResult.Text("wiped") }
    server.middleware("staff-only") { request, next ->
        // Before next(): decide. request.principal is the bearer token's subject over HTTP.
        if (request.name == "wipe" && request.principal !in setOf("ada", "grace")) {
            throw ToolwireException.Protocol(-32001, "Forbidden", null) // this JSON-RPC error instead
        }
        val outcome = next() // handled here; returns once the answer is sent
        audit += "${request.method} ${request.name}: ${outcome.kind}"
    }
    return server
}

fun main() = guardedServer().runStdio()
// --8<-- [end:server]
