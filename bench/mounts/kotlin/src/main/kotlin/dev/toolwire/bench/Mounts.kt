// The Kotlin demo's tools over Streamable HTTP, served by toolwire's own listener or mounted in
// a Ktor app on CIO: bench/mounts' Kotlin servers.
//
//   java -cp target/toolwire-bench-mounts-0.1.0.jar:target/lib/'*' dev.toolwire.bench.MountsKt \
//     --port P --serve builtin|ktor|ktor-bare
//
// ktor-bare: no toolwire in Ktor: a route answering the load generator's four requests itself
// (bareRoute), which is what Ktor alone costs per request.
package dev.toolwire.bench

import dev.toolwire.HttpServerOptions
import dev.toolwire.demo.buildDemoServer
import dev.toolwire.ktor.mcp
import dev.toolwire.runHttp
import io.ktor.http.ContentType
import io.ktor.http.HttpMethod
import io.ktor.http.HttpStatusCode
import io.ktor.server.application.ApplicationCall
import io.ktor.server.cio.CIO
import io.ktor.server.engine.embeddedServer
import io.ktor.server.request.httpMethod
import io.ktor.server.request.receiveText
import io.ktor.server.response.respondText
import io.ktor.server.routing.route
import io.ktor.server.routing.routing
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.addJsonObject
import kotlinx.serialization.json.buildJsonObject
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import kotlinx.serialization.json.put
import kotlinx.serialization.json.putJsonArray
import kotlinx.serialization.json.putJsonObject
import java.util.concurrent.atomic.AtomicLong
import kotlin.system.exitProcess

private const val USAGE = "usage: Mounts --port P --serve builtin|ktor|ktor-bare"

fun main(args: Array<String>) {
    var port: Int? = null
    var serve: String? = null
    var i = 0
    while (i < args.size) {
        val value = args.getOrNull(i + 1)
        when (args[i]) {
            "--port" -> port = value?.toIntOrNull()
            "--serve" -> serve = value
            else -> fail("unknown argument \"${args[i]}\"")
        }
        i += 2
    }
    val listen = port ?: fail("--port needs a number")
    when (serve) {
        "ktor-bare" -> embeddedServer(CIO, port = listen, host = "127.0.0.1") {
            routing { route("/mcp") { handle { bareRoute(call) } } }
        }.start(wait = true)
        else -> serveDemo(serve, listen)
    }
    exitProcess(0)
}

private fun serveDemo(serve: String?, listen: Int) {
    val server = buildDemoServer(100)
    when (serve) {
        "builtin" -> server.runHttp("127.0.0.1", listen.toUShort(), HttpServerOptions()) { url ->
            System.err.println("mounts: listening on $url")
        }
        "ktor" -> embeddedServer(CIO, port = listen, host = "127.0.0.1") {
            routing { mcp("/mcp", server) }
        }.start(wait = true)
        else -> fail("--serve builtin|ktor|ktor-bare")
    }
}

private val sessions = AtomicLong()

/** The load generator's four requests answered by a few lines of Kotlin, no MCP engine. */
private suspend fun bareRoute(call: ApplicationCall) {
    if (call.request.httpMethod == HttpMethod.Delete) {
        call.respondText("", ContentType.Application.Json)
        return
    }
    val request = Json.parseToJsonElement(call.receiveText()).jsonObject
    val id = request["id"]
    if (id == null) {
        call.respondText("", ContentType.Application.Json, HttpStatusCode.Accepted)
        return
    }
    val result = if (request["method"]?.jsonPrimitive?.content == "initialize") {
        call.response.headers.append("mcp-session-id", "s${sessions.incrementAndGet()}")
        buildJsonObject {
            put("protocolVersion", "2025-11-25")
            putJsonObject("capabilities") { putJsonObject("tools") {} }
            putJsonObject("serverInfo") { put("name", "bare"); put("version", "1") }
        }
    } else {
        val text = request["params"]!!.jsonObject["arguments"]!!.jsonObject["text"]!!.jsonPrimitive.content
        buildJsonObject { putJsonArray("content") { addJsonObject { put("type", "text"); put("text", text) } } }
    }
    val answer = buildJsonObject { put("jsonrpc", "2.0"); put("id", id); put("result", result) }
    call.respondText(answer.toString(), ContentType.Application.Json)
}

private fun fail(message: String): Nothing {
    System.err.println("mounts: $message\n$USAGE")
    exitProcess(2)
}
