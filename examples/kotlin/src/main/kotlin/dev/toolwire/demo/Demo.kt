// The demo server of the shared contract, with Kotlin handlers: echo, add, sleep, fail.
//
// Run it with `examples/run-demo kotlin [--extra-tools N] [--http PORT]` (`--conformance`: the
// conformance suite's server, Conformance.kt; `--bench-tools`: the tools of bench/payloads,
// BenchTools.kt; `--redis URL` and `--request-state-key SECRET`,
// repeatable, make it one replica of several behind a load balancer). The schemas are spelled out as JSON
// Schema text so that every language's demo lists exactly the same tools.
package dev.toolwire.demo

import dev.toolwire.Server
import dev.toolwire.ServerConfig
import dev.toolwire.ToolDefinition
import dev.toolwire.ToolResult
import dev.toolwire.ToolwireException
import dev.toolwire.detail
import dev.toolwire.HttpResponseMode
import dev.toolwire.HttpServerOptions
import dev.toolwire.runHttp
import dev.toolwire.runStdio
import dev.toolwire.tool
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.delay
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.buildJsonObject
import kotlinx.serialization.json.double
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import kotlinx.serialization.json.long
import kotlinx.serialization.json.put
import kotlin.math.abs
import kotlin.math.min
import kotlin.system.exitProcess

const val INSTRUCTIONS = "Demo server: echo text, add two numbers, sleep with progress, or fail on purpose."

private fun objectSchema(properties: String, required: String) =
    """{"type":"object","properties":$properties,"required":$required,"additionalProperties":false}"""

private fun arguments(json: String): JsonObject = Json.parseToJsonElement(json).jsonObject

private fun JsonObject.string(key: String) = getValue(key).jsonPrimitive.content

/** The demo server; [config] carries the vector runner's limits (page size, frame size, depth). */
fun buildDemoServer(extraTools: Int = 0, config: ServerConfig = ServerConfig()): Server {
    val server = Server(
        "toolwire-demo",
        "0.1.0",
        INSTRUCTIONS,
        config.copy(title = config.title ?: "toolwire demo (Kotlin)"),
    )

    server.tool(
        ToolDefinition(
            name = "echo",
            description = "Returns the text it is given.",
            inputSchemaJson = objectSchema("""{"text":{"type":"string"}}""", """["text"]"""),
        ),
    ) { _, args -> ToolResult.Text(arguments(args).string("text")) }

    server.tool(
        ToolDefinition(
            name = "add",
            description = "Adds two numbers.",
            inputSchemaJson = objectSchema("""{"a":{"type":"number"},"b":{"type":"number"}}""", """["a","b"]"""),
            outputSchemaJson = """{"type":"object","properties":{"sum":{"type":"number"}},"required":["sum"]}""",
        ),
    ) { _, args ->
        val input = arguments(args)
        val sum = input.getValue("a").jsonPrimitive.double + input.getValue("b").jsonPrimitive.double
        // Whole sums are written as integers (3, not 3.0), as JSON numbers are in every demo.
        val result = buildJsonObject {
            if (sum % 1.0 == 0.0 && abs(sum) < 9.007199254740992E15) put("sum", sum.toLong()) else put("sum", sum)
        }
        ToolResult.Structured(result.toString())
    }

    server.tool(
        ToolDefinition(
            name = "sleep",
            description = "Waits ms milliseconds, reporting progress every 100 ms when asked.",
            inputSchemaJson = objectSchema("""{"ms":{"type":"integer","minimum":0,"maximum":60000}}""", """["ms"]"""),
        ),
    ) { context, args ->
        val ms = arguments(args).getValue("ms").jsonPrimitive.long
        val start = System.nanoTime()
        val end = start + ms * 1_000_000
        // Progress counts 100 ms steps (not wall time), so every language reports the same values.
        var step = 1L
        while (true) {
            val tick = start + step * 100_000_000
            if (tick >= end) {
                delay(maxOf(0L, (end - System.nanoTime()) / 1_000_000))
                break
            }
            delay(maxOf(0L, (tick - System.nanoTime()) / 1_000_000))
            context.progress(min(step * 100, ms).toDouble(), ms.toDouble())
            step++
        }
        ToolResult.Text("slept $ms ms")
    }

    server.tool(
        ToolDefinition(
            name = "fail",
            description = "Fails with the given message.",
            inputSchemaJson = objectSchema("""{"message":{"type":"string"}}""", """["message"]"""),
        ),
    ) { _, args -> throw IllegalStateException(arguments(args).string("message")) }

    for (i in 0 until extraTools) {
        server.tool(
            ToolDefinition(
                name = "tool_%03d".format(i),
                description = "Extra tool number $i (benchmarks tools/list).",
                inputSchemaJson = """{"type":"object","properties":{"q":{"type":"string"},"n":{"type":"integer","minimum":0}},"required":["q"]}""",
            ),
        ) { _, args -> ToolResult.Text(arguments(args).string("q")) }
    }
    return server
}

/** The tools that misbehave on purpose, as in every language's demo (`--fault-tools`). */
fun addFaultTools(server: Server) {
    server.tool(ToolDefinition(name = "crash", description = "Throws a plain runtime error (a fault injected on purpose).")) { _, _ ->
        val missing: String? = System.getProperty("toolwire.demo.never.set")
        ToolResult.Text(missing!!)
    }
    server.tool(ToolDefinition(name = "hang", description = "Never returns; its timeout ends the call.", timeoutMs = 200uL)) { _, _ ->
        awaitCancellation()
    }
    server.tool(
        ToolDefinition(
            name = "malformed",
            description = "Returns a result its output schema refuses.",
            outputSchemaJson = """{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}""",
        ),
    ) { _, _ -> ToolResult.Structured("""{"n":"not a number"}""") }
}

fun main(args: Array<String>) {
    var extraTools = 0
    var faultTools = false
    var benchTools = false
    var httpPort: Int? = null
    var conformance = false
    var stateless = false
    var json = false
    var responseMode: HttpResponseMode? = null
    // `--redis`: tasks and changes shared with the other replicas; `--request-state-key`
    // (repeatable): the MRTR `requestState` secrets, the first sealing, the same on every replica.
    var redis: String? = null
    val requestStateKeys = mutableListOf<String>()
    var i = 0
    while (i < args.size) {
        when (args[i]) {
            "--extra-tools" -> extraTools = number(args, ++i) ?: usage("--extra-tools needs a number")
            "--http" -> httpPort = number(args, ++i) ?: usage("--http needs a port (0 picks one)")
            "--conformance" -> conformance = true
            "--fault-tools" -> faultTools = true
            "--bench-tools" -> benchTools = true
            "--stateless" -> stateless = true
            "--json" -> json = true
            "--sse" -> responseMode = HttpResponseMode.SSE
            "--redis" -> redis = value(args, ++i) ?: usage("--redis needs a URL")
            "--request-state-key" -> requestStateKeys += value(args, ++i) ?: usage("--request-state-key needs a secret")
            else -> usage("unknown argument \"${args[i]}\"")
        }
        i++
    }
    val shared = ServerConfig(redis = redis, requestStateKeys = requestStateKeys)
    val server = try {
        if (conformance) buildConformanceServer(shared) else buildDemoServer(extraTools, shared).also { if (faultTools) addFaultTools(it); if (benchTools) addBenchTools(it) }
    } catch (e: ToolwireException) {
        // An unreachable Redis, a short secret: said once, not as a stack trace.
        System.err.println("toolwire-demo: ${e.detail}")
        exitProcess(1)
    }
    val port = httpPort
    if (port == null) {
        server.runStdio()
    } else {
        server.runHttp("127.0.0.1", port.toUShort(), HttpServerOptions(stateless = stateless, responseMode = responseMode, jsonResponse = json)) { url ->
            // The one line a launcher waits for: where to connect.
            System.err.println("toolwire-demo: listening on $url")
        }
    }
    // Coroutine threads must not keep the process alive once serving has ended.
    exitProcess(0)
}

// Plain index and parse: `getOrNull`/`toIntOrNull` would load kotlin-stdlib's two largest
// facades (ArraysKt, StringsKt) for two arguments, about 25 ms of a JVM start that nothing else
// in a stdio server needs.
private fun value(args: Array<String>, at: Int): String? = if (at < args.size) args[at] else null

private fun number(args: Array<String>, at: Int): Int? =
    value(args, at)?.let {
        try {
            Integer.parseInt(it)
        } catch (_: NumberFormatException) {
            null
        }
    }

private fun usage(problem: String): Nothing {
    System.err.println("toolwire-demo: $problem\nusage: demo [--extra-tools N [--fault-tools] [--bench-tools] | --conformance] [--redis URL] [--request-state-key SECRET]... [--http PORT [--stateless] [--json | --sse]]")
    exitProcess(2)
}
