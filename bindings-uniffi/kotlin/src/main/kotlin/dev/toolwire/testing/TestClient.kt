// A client for tests: drives a Server in process as a real client would, without JSON-RPC text
// in the test. The client is core's (toolwire::client, through the binding's `Server.client`),
// the same as Python's toolwire.testing; this file converts its JSON text to JsonObject and
// its errors to McpError, and runs the callbacks.
package dev.toolwire.testing

import dev.toolwire.ClientAnswerer
import dev.toolwire.ClientOptions
import dev.toolwire.ClientProgress
import dev.toolwire.Lifespan
import dev.toolwire.LifespanHold
import dev.toolwire.Server
import dev.toolwire.ToolwireException
import dev.toolwire.letGo
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.sync.Mutex
import kotlinx.coroutines.sync.withLock
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.buildJsonObject
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import java.util.concurrent.TimeoutException
import kotlin.coroutines.cancellation.CancellationException
import dev.toolwire.Client as NativeClient

/** The modern protocol era: stateless requests, `_meta` on each, input-required rounds. */
const val MODERN_PROTOCOL_VERSION = "2026-07-28"

/**
 * The server answered a request with a JSON-RPC error: its [code], [message] and [data]. Thrown
 * by a callback given to [TestClient.connect], it is the error the client answers with.
 */
class McpError(val code: Int, override val message: String, val data: JsonElement? = null) : Exception(message) {
    override fun toString() = "McpError($code): $message" + (data?.let { " data=$it" } ?: "")
}

/** Answers one of the server's questions (`elicitation/create`, `sampling/createMessage`) from its params. */
typealias Answer = suspend (params: JsonObject) -> JsonObject

/** A progress notification of a call: `progress`, `total` and `message` as the server sent them. */
typealias ProgressListener = (progress: Double, total: Double?, message: String?) -> Unit

/**
 * One client session with a server of this process, for tests:
 *
 * ```kotlin
 * TestClient.connect(server).use { client ->
 *     val result = client.callTool("forecast", buildJsonObject { put("city", "Oslo") })
 * }
 * ```
 *
 * Both protocol eras: `protocolVersion = "2025-11-25"` (the default) initializes a session;
 * [MODERN_PROTOCOL_VERSION] (`"2026-07-28"`) sends every request stand-alone with its `_meta`
 * (`io.modelcontextprotocol/protocolVersion`, `…/clientCapabilities`, `…/clientInfo`) and
 * answers the server's input-required rounds itself, with the same callbacks. Questions the
 * server asks (elicitation, sampling, roots) go to the callbacks given to [connect], in either
 * era. Results are the JSON objects of the spec; a JSON-RPC error is thrown as [McpError].
 * Thread-safe: its calls may come from any coroutine (`runBlocking` in a JUnit test included).
 * The callbacks run on `Dispatchers.Default`; a [ProgressListener] on an engine thread, one
 * notification after the other and all before the call's result (it should return promptly: the
 * call's result waits for it).
 */
class TestClient private constructor(
    /** Its hold on the server's lifespan, let go of at [shutdown]. */
    private val lifespan: LifespanHold,
    private val native: NativeClient,
    /** The protocol version this client speaks. */
    val protocolVersion: String,
) : AutoCloseable {
    private val closing = Mutex()

    @Volatile
    private var closed = false

    /** The capabilities it declares (the callbacks given add theirs). */
    val capabilities: JsonObject = native.capabilitiesJson().toObject()

    /** The `clientInfo` it sends. */
    val clientInfo: JsonObject = native.clientInfoJson().toObject()

    /** Notifications received so far (progress ones included), in order: a copy taken at each read. */
    val notifications: MutableList<JsonObject>
        get() = Json.parseToJsonElement(native.notificationsJson()).jsonArray.mapTo(ArrayList()) { it.jsonObject }

    /** The `initialize` (or, in 2026-07-28, `server/discover`) result. */
    var serverInfo: JsonObject = native.serverInfoJson().toObject()
        private set

    /** Whether this client speaks the 2026-07-28 era. */
    val modern: Boolean get() = native.isModern()

    /** The server's `{ name, version, … }`, from either era's answer. */
    val server: JsonObject get() = native.serverJson().toObject()

    companion object {
        /**
         * A connected client: the session is opened (`initialize`, or `server/discover` in
         * 2026-07-28) before it returns. [elicitation] and [sampling] answer the server's
         * `elicitation/create` and `sampling/createMessage` (throw [McpError] to answer with an
         * error); [roots] is what `roots/list` returns. Each one given is declared in the
         * capabilities (merged under [capabilities]). [timeoutMs] bounds each request. The
         * server's lifespan ([dev.toolwire.lifespan]) starts first (its failure is thrown here)
         * and is let go of at [shutdown].
         */
        suspend fun connect(
            server: Server,
            protocolVersion: String = "2025-11-25",
            elicitation: Answer? = null,
            sampling: Answer? = null,
            roots: List<JsonObject>? = null,
            capabilities: JsonObject? = null,
            clientInfo: JsonObject? = null,
            timeoutMs: Long = 30_000,
        ): TestClient {
            val options = ClientOptions(
                protocolVersion = protocolVersion,
                capabilitiesJson = capabilities?.toString(),
                clientInfoJson = (clientInfo ?: defaultClientInfo).toString(),
                elicitation = elicitation != null,
                sampling = sampling != null,
                rootsJson = roots?.let { JsonArray(it).toString() },
                requestTimeoutMs = timeoutMs.coerceAtLeast(0).toULong(),
            )
            val answerer = if (elicitation != null || sampling != null) Callbacks(elicitation, sampling) else null
            // The server's lifespan first, held as a serve holds it (the session of
            // `server.client` holds nothing): a failure to start is connect's exception.
            val lifespan = Lifespan.of(server).hold(server)
            val native = try {
                thrownAsMcp { server.client(options, answerer) }
            } catch (e: Throwable) {
                lifespan.letGo()
                throw e
            }
            return TestClient(lifespan, native, protocolVersion)
        }

        private val defaultClientInfo = buildJsonObject {
            put("name", JsonPrimitive("toolwire-test-client"))
            put("version", JsonPrimitive("1.0"))
        }
    }

    /**
     * Ends the session: calls in flight finish first (the server's questions are still answered
     * meanwhile), then requests still pending fail with [McpError]. Idempotent.
     */
    suspend fun shutdown() {
        closing.withLock {
            if (closed) return
            native.shutdown()
            closed = true
            // The lifespan stops if no other serve holds it (after the calls in flight).
            lifespan.letGo()
        }
    }

    /** [shutdown], blocking: for `use { }` and JUnit's `@AfterEach`. */
    override fun close() = runBlocking { shutdown() }

    // --- requests (each one core's)

    /**
     * Sends [method] and returns its result; a JSON-RPC error is thrown as [McpError], no answer
     * within the client's timeout as a [TimeoutException]. In the 2026-07-28 era the request
     * carries the version, capabilities and client info in `_meta`.
     */
    suspend fun request(method: String, params: JsonObject = JsonObject(emptyMap())): JsonObject =
        thrownAsMcp { native.request(method, params.toString()) }.toObject()

    /** Every tool, all pages. */
    suspend fun listTools(): List<JsonObject> = thrownAsMcp { native.listTools() }.toObjects()

    /**
     * The tool's `CallToolResult` (an `isError` one too). [onProgress] receives the call's
     * progress notifications (the request then carries a `progressToken`).
     */
    suspend fun callTool(
        name: String,
        arguments: JsonObject = JsonObject(emptyMap()),
        onProgress: ProgressListener? = null,
    ): JsonObject = thrownAsMcp { native.callTool(name, arguments.toString(), onProgress?.let(::Heard)) }.toObject()

    /** [callTool] with the arguments as JSON text of an object. */
    suspend fun callTool(name: String, argumentsJson: String, onProgress: ProgressListener? = null): JsonObject =
        callTool(name, Json.parseToJsonElement(argumentsJson).jsonObject, onProgress)

    /** Every resource, all pages. */
    suspend fun listResources(): List<JsonObject> = thrownAsMcp { native.listResources() }.toObjects()

    /** Every resource template, all pages. */
    suspend fun listResourceTemplates(): List<JsonObject> = thrownAsMcp { native.listResourceTemplates() }.toObjects()

    /** The `ReadResourceResult` (`contents`); [onProgress] receives the read's progress notifications. */
    suspend fun readResource(uri: String, onProgress: ProgressListener? = null): JsonObject =
        thrownAsMcp { native.readResource(uri, onProgress?.let(::Heard)) }.toObject()

    /** Every prompt, all pages. */
    suspend fun listPrompts(): List<JsonObject> = thrownAsMcp { native.listPrompts() }.toObjects()

    /** The `GetPromptResult` (`messages`); [onProgress] receives the prompt's progress notifications. */
    suspend fun getPrompt(name: String, arguments: Map<String, String> = emptyMap(), onProgress: ProgressListener? = null): JsonObject =
        thrownAsMcp { native.getPrompt(name, arguments, onProgress?.let(::Heard)) }.toObject()

    /**
     * The `completion` of `completion/complete` (`values`, `hasMore`, `total`): [ref] is
     * [promptRef] or [templateRef], [context] the other arguments given so far.
     */
    suspend fun complete(ref: JsonObject, argument: String, value: String, context: Map<String, String>? = null): JsonObject =
        thrownAsMcp { native.complete(ref.toString(), argument, value, context) }.toObject()

    /** `{"type": "ref/prompt", "name": …}` for [complete]. */
    fun promptRef(name: String) = buildJsonObject {
        put("type", JsonPrimitive("ref/prompt"))
        put("name", JsonPrimitive(name))
    }

    /** `{"type": "ref/resource", "uri": …}` for [complete]. */
    fun templateRef(uriTemplate: String) = buildJsonObject {
        put("type", JsonPrimitive("ref/resource"))
        put("uri", JsonPrimitive(uriTemplate))
    }
}

/** [TestClient.connect] to this server. */
suspend fun Server.testClient(
    protocolVersion: String = "2025-11-25",
    elicitation: Answer? = null,
    sampling: Answer? = null,
    roots: List<JsonObject>? = null,
    capabilities: JsonObject? = null,
    clientInfo: JsonObject? = null,
    timeoutMs: Long = 30_000,
): TestClient = TestClient.connect(this, protocolVersion, elicitation, sampling, roots, capabilities, clientInfo, timeoutMs)

// --- conversions

/** [block], core's JSON-RPC error thrown as [McpError] and its "no answer in time" as [TimeoutException]. */
private inline fun <T> thrownAsMcp(block: () -> T): T = try {
    block()
} catch (e: ToolwireException.Rpc) {
    throw McpError(e.code, e.detail, e.dataJson?.let(Json::parseToJsonElement))
} catch (e: ToolwireException.Timeout) {
    throw TimeoutException("toolwire testing: ${e.detail}")
}

/** A result: the spec's object (`{}` for a `null` one, as a missing `completion`). */
private fun String.toObject(): JsonObject = Json.parseToJsonElement(this) as? JsonObject ?: JsonObject(emptyMap())

private fun String.toObjects(): List<JsonObject> = Json.parseToJsonElement(this).jsonArray.map { it.jsonObject }

/** The callbacks given to [TestClient.connect], as core asks them (only for what they declared). */
private class Callbacks(private val elicitation: Answer?, private val sampling: Answer?) : ClientAnswerer {
    override suspend fun answer(method: String, paramsJson: String): String {
        val callback = when (method) {
            "elicitation/create" -> elicitation
            "sampling/createMessage" -> sampling
            else -> null
        } ?: throw ToolwireException.Rpc(-32601, "Method not found: $method", null)
        val params = Json.parseToJsonElement(paramsJson) as? JsonObject ?: JsonObject(emptyMap())
        return try {
            callback(params).toString()
        } catch (e: McpError) {
            throw ToolwireException.Rpc(e.code, e.message, e.data?.toString())
        } catch (e: CancellationException) {
            throw e
        } catch (e: Exception) {
            // Core answers -32603 "the test client's callback failed: …": no call waits for ever.
            throw ToolwireException.Handler(e.message ?: e.javaClass.simpleName)
        }
    }
}

/** A [ProgressListener] as core calls it. */
private class Heard(private val listener: ProgressListener) : ClientProgress {
    override fun heard(progress: Double, total: Double?, message: String?) = listener(progress, total, message)
}
