// A client for tests: drives a Server in process through server.connect() (core's in-memory
// session), as a real client would, without JSON-RPC text in the test. The same client as
// Python's toolwire.testing and Node's toolwire/testing.
package dev.toolwire.testing

import dev.toolwire.Connection
import dev.toolwire.Lifespan
import dev.toolwire.Server
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.Job
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.cancel
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.sync.Mutex
import kotlinx.coroutines.sync.withLock
import kotlinx.coroutines.withTimeoutOrNull
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonNull
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.buildJsonObject
import kotlinx.serialization.json.contentOrNull
import kotlinx.serialization.json.doubleOrNull
import kotlinx.serialization.json.intOrNull
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import kotlinx.serialization.json.longOrNull
import java.util.Collections
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.TimeoutException
import java.util.concurrent.atomic.AtomicLong

/** The modern protocol era: stateless requests, `_meta` on each, input-required rounds. */
const val MODERN_PROTOCOL_VERSION = "2026-07-28"

/** More input-required rounds than any real tool needs: a loop, not a conversation. */
private const val MAX_ROUNDS = 16

/**
 * The server answered a request with a JSON-RPC error: its [code], [message] and [data]. Thrown
 * by a callback given to [TestClient.connect], it is the error the client answers with.
 */
class McpError(val code: Int, override val message: String, val data: JsonElement? = null) : Exception(message) {
    override fun toString() = "McpError($code): $message" + (data?.let { " data=$it" } ?: "")

    internal companion object {
        fun from(error: JsonObject) = McpError(
            (error["code"] as? JsonPrimitive)?.intOrNull ?: 0,
            (error["message"] as? JsonPrimitive)?.contentOrNull ?: "",
            error["data"],
        )
    }
}

/** Answers one of the server's questions (`elicitation/create`, `sampling/createMessage`) from its params. */
typealias Answer = suspend (params: JsonObject) -> JsonObject

/** A progress notification of a call: `progress`, `total` and `message` as the server sent them. */
typealias ProgressListener = (progress: Double, total: Double?, message: String?) -> Unit

/**
 * One client session over [Server.connect], for tests:
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
 * Thread-safe; the client reads on `Dispatchers.Default`, so its calls may come from any
 * coroutine (`runBlocking` in a JUnit test included).
 */
class TestClient private constructor(
    private val lifespan: Lifespan,
    private val connection: Connection,
    /** The protocol version this client speaks. */
    val protocolVersion: String,
    private val elicitation: Answer?,
    private val sampling: Answer?,
    private val roots: List<JsonObject>?,
    /** The capabilities it declares (the callbacks given add theirs). */
    val capabilities: JsonObject,
    /** The `clientInfo` it sends. */
    val clientInfo: JsonObject,
    private val timeoutMs: Long,
) : AutoCloseable {
    private val scope = CoroutineScope(SupervisorJob() + Dispatchers.Default)
    private val pending = ConcurrentHashMap<Long, CompletableDeferred<JsonObject>>()
    private val progress = ConcurrentHashMap<String, ProgressListener>()
    private val nextId = AtomicLong(1)
    private val closing = Mutex()

    @Volatile
    private var closed = false

    @Volatile
    private var closeStarted = false
    private lateinit var reader: Job

    /** Notifications received so far (progress ones included), in order. */
    val notifications: MutableList<JsonObject> = Collections.synchronizedList(ArrayList())

    /** The `initialize` (or, in 2026-07-28, `server/discover`) result. */
    var serverInfo: JsonObject = JsonObject(emptyMap())
        private set

    /** Whether this client speaks the 2026-07-28 era. */
    val modern: Boolean get() = protocolVersion == MODERN_PROTOCOL_VERSION

    /** The server's `{ name, version, … }`, from either era's answer. */
    val server: JsonObject
        get() = serverInfo["serverInfo"] as? JsonObject
            ?: (serverInfo["_meta"] as? JsonObject)?.get("io.modelcontextprotocol/serverInfo") as? JsonObject
            ?: JsonObject(emptyMap())

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
            val declared = LinkedHashMap<String, JsonElement>()
            if (elicitation != null) declared["elicitation"] = buildJsonObject { put("form", JsonObject(emptyMap())) }
            if (sampling != null) declared["sampling"] = JsonObject(emptyMap())
            if (roots != null) declared["roots"] = buildJsonObject { put("listChanged", JsonPrimitive(false)) }
            capabilities?.let { declared.putAll(it) }
            // The server's lifespan first: a failure to start is connect's exception.
            val lifespan = Lifespan.of(server)
            lifespan.acquire()
            val client = TestClient(
                lifespan,
                server.connect(),
                protocolVersion,
                elicitation,
                sampling,
                roots,
                JsonObject(declared),
                clientInfo ?: buildJsonObject {
                    put("name", JsonPrimitive("toolwire-test-client"))
                    put("version", JsonPrimitive("1.0"))
                },
                timeoutMs,
            )
            client.reader = client.scope.launch { client.read() }
            try {
                client.start()
            } catch (e: Throwable) {
                client.shutdown()
                throw e
            }
            return client
        }
    }

    private suspend fun start() {
        if (modern) {
            serverInfo = request("server/discover")
            return
        }
        serverInfo = request(
            "initialize",
            buildJsonObject {
                put("protocolVersion", JsonPrimitive(protocolVersion))
                put("capabilities", capabilities)
                put("clientInfo", clientInfo)
            },
        )
        send(buildJsonObject {
            put("jsonrpc", JsonPrimitive("2.0"))
            put("method", JsonPrimitive("notifications/initialized"))
        })
    }

    /**
     * Ends the session: calls in flight finish first (the server's questions are still answered
     * meanwhile), then requests still pending fail with [McpError]. Idempotent.
     */
    suspend fun shutdown() {
        closing.withLock {
            if (closed) return
            closeStarted = true
            connection.shutdown()
            // The reader ends when the session has sent its last message.
            reader.join()
            closed = true
            val error = McpError(-32000, "the session closed before the answer")
            for (waiting in pending.values) waiting.completeExceptionally(error)
            pending.clear()
            scope.cancel()
            connection.destroy()
            // The lifespan stops if no other serve holds it (after the calls in flight).
            lifespan.release()
        }
    }

    /** [shutdown], blocking: for `use { }` and JUnit's `@AfterEach`. */
    override fun close() = runBlocking { shutdown() }

    // --- the wire

    private fun send(message: JsonObject) = connection.handleFrame(message.toString())

    private suspend fun read() {
        while (true) {
            val text = connection.recv() ?: return
            val message = try {
                Json.parseToJsonElement(text).jsonObject
            } catch (e: IllegalArgumentException) {
                continue
            }
            dispatch(message)
        }
    }

    private fun dispatch(message: JsonObject) {
        if ("method" !in message) {
            val id = (message["id"] as? JsonPrimitive)?.longOrNull ?: return
            pending.remove(id)?.complete(message)
            return
        }
        if ("id" in message) {
            scope.launch { answerRequest(message) }
            return
        }
        notifications += message
        if ((message["method"] as? JsonPrimitive)?.content == "notifications/progress") {
            val params = message["params"] as? JsonObject ?: return
            val token = (params["progressToken"] as? JsonPrimitive)?.content ?: return
            progress[token]?.invoke(
                (params["progress"] as? JsonPrimitive)?.doubleOrNull ?: 0.0,
                (params["total"] as? JsonPrimitive)?.doubleOrNull,
                (params["message"] as? JsonPrimitive)?.contentOrNull,
            )
        }
    }

    private suspend fun answerRequest(message: JsonObject) {
        val method = message["method"]!!.jsonPrimitive.content
        val params = message["params"] as? JsonObject ?: JsonObject(emptyMap())
        val reply = buildJsonObject {
            put("jsonrpc", JsonPrimitive("2.0"))
            put("id", message["id"]!!)
            try {
                put("result", answer(method, params))
            } catch (e: McpError) {
                put("error", errorObject(e.code, e.message))
            } catch (e: Exception) {
                // A failing callback is told to the server: no call waits for an answer that never comes.
                put("error", errorObject(-32603, "the test client's callback failed: ${e.message ?: e.javaClass.simpleName}"))
            }
        }
        if (!closed) send(reply)
    }

    private fun errorObject(code: Int, message: String) = buildJsonObject {
        put("code", JsonPrimitive(code))
        put("message", JsonPrimitive(message))
    }

    /** What this client answers to a question of the server's. */
    private suspend fun answer(method: String, params: JsonObject): JsonObject {
        val handler = when (method) {
            "elicitation/create" -> elicitation
            "sampling/createMessage" -> sampling
            "roots/list" -> if (roots != null) return buildJsonObject { put("roots", JsonArray(roots)) } else null
            "ping" -> return JsonObject(emptyMap())
            else -> null
        }
        return handler?.invoke(params) ?: throw McpError(-32601, "Method not found: $method")
    }

    // --- requests

    /**
     * Sends [method] and returns its result; a JSON-RPC error is thrown as [McpError], no answer
     * within the client's timeout as a [TimeoutException]. In the 2026-07-28 era the request
     * carries the version, capabilities and client info in `_meta`.
     */
    suspend fun request(method: String, params: JsonObject = JsonObject(emptyMap())): JsonObject {
        if (closeStarted) throw McpError(-32000, "the test client is closed")
        val fields = LinkedHashMap<String, JsonElement>(params)
        if (modern) {
            val meta = LinkedHashMap<String, JsonElement>()
            meta["io.modelcontextprotocol/protocolVersion"] = JsonPrimitive(MODERN_PROTOCOL_VERSION)
            meta["io.modelcontextprotocol/clientCapabilities"] = capabilities
            meta["io.modelcontextprotocol/clientInfo"] = clientInfo
            (params["_meta"] as? JsonObject)?.let { meta.putAll(it) }
            fields["_meta"] = JsonObject(meta)
        }
        val id = nextId.getAndIncrement()
        val answer = CompletableDeferred<JsonObject>()
        pending[id] = answer
        send(buildJsonObject {
            put("jsonrpc", JsonPrimitive("2.0"))
            put("id", JsonPrimitive(id))
            put("method", JsonPrimitive(method))
            if (fields.isNotEmpty() || method != "ping") put("params", JsonObject(fields))
        })
        val message = withTimeoutOrNull(timeoutMs) { answer.await() }
        if (message == null) {
            pending.remove(id)
            throw TimeoutException("toolwire testing: $method got no answer within $timeoutMs ms")
        }
        (message["error"] as? JsonObject)?.let { throw McpError.from(it) }
        return message["result"] as? JsonObject ?: JsonObject(emptyMap())
    }

    /**
     * A request that may answer input-required (2026-07-28): the questions are answered by the
     * callbacks and the request sent again with the answers, until it completes.
     */
    private suspend fun rounds(method: String, first: JsonObject): JsonObject {
        var params = first
        repeat(MAX_ROUNDS) {
            val result = request(method, params)
            if ((result["resultType"] as? JsonPrimitive)?.content != "input_required") return result
            val answers = buildJsonObject {
                for ((key, question) in result["inputRequests"] as? JsonObject ?: JsonObject(emptyMap())) {
                    val asked = question.jsonObject
                    put(key, answer(asked["method"]!!.jsonPrimitive.content, asked["params"] as? JsonObject ?: JsonObject(emptyMap())))
                }
            }
            val next = LinkedHashMap<String, JsonElement>(params)
            next["inputResponses"] = answers
            val state = result["requestState"]
            if (state != null) next["requestState"] = state else next.remove("requestState")
            params = JsonObject(next)
        }
        throw McpError(-32603, "$method still asked for input after $MAX_ROUNDS rounds")
    }

    private suspend fun list(method: String, key: String): List<JsonObject> {
        val items = ArrayList<JsonObject>()
        var params = JsonObject(emptyMap())
        while (true) {
            val page = request(method, params)
            (page[key] as? JsonArray)?.forEach { items += it.jsonObject }
            val cursor = page["nextCursor"]
            if (cursor == null || cursor is JsonNull || (cursor as? JsonPrimitive)?.content.isNullOrEmpty()) return items
            params = buildJsonObject { put("cursor", cursor) }
        }
    }

    /** Every tool, all pages. */
    suspend fun listTools(): List<JsonObject> = list("tools/list", "tools")

    /**
     * The tool's `CallToolResult` (an `isError` one too). [onProgress] receives the call's
     * progress notifications (the request then carries a `progressToken`).
     */
    suspend fun callTool(
        name: String,
        arguments: JsonObject = JsonObject(emptyMap()),
        onProgress: ProgressListener? = null,
    ): JsonObject {
        val params = buildJsonObject {
            put("name", JsonPrimitive(name))
            put("arguments", arguments)
        }
        return progressing("tools/call", params, onProgress)
    }

    /** [rounds], with a `progressToken` whose notifications go to [onProgress] when one is given. */
    private suspend fun progressing(method: String, params: JsonObject, onProgress: ProgressListener?): JsonObject {
        if (onProgress == null) return rounds(method, params)
        val token = "progress-${nextId.getAndIncrement()}"
        val fields = LinkedHashMap<String, JsonElement>(params)
        fields["_meta"] = buildJsonObject {
            (params["_meta"] as? JsonObject)?.forEach { (key, value) -> put(key, value) }
            put("progressToken", JsonPrimitive(token))
        }
        progress[token] = onProgress
        try {
            return rounds(method, JsonObject(fields))
        } finally {
            progress.remove(token)
        }
    }

    /** [callTool] with the arguments as JSON text of an object. */
    suspend fun callTool(name: String, argumentsJson: String, onProgress: ProgressListener? = null): JsonObject =
        callTool(name, Json.parseToJsonElement(argumentsJson).jsonObject, onProgress)

    /** Every resource, all pages. */
    suspend fun listResources(): List<JsonObject> = list("resources/list", "resources")

    /** Every resource template, all pages. */
    suspend fun listResourceTemplates(): List<JsonObject> = list("resources/templates/list", "resourceTemplates")

    /** The `ReadResourceResult` (`contents`); [onProgress] receives the read's progress notifications. */
    suspend fun readResource(uri: String, onProgress: ProgressListener? = null): JsonObject =
        progressing("resources/read", buildJsonObject { put("uri", JsonPrimitive(uri)) }, onProgress)

    /** Every prompt, all pages. */
    suspend fun listPrompts(): List<JsonObject> = list("prompts/list", "prompts")

    /** The `GetPromptResult` (`messages`); [onProgress] receives the prompt's progress notifications. */
    suspend fun getPrompt(name: String, arguments: Map<String, String> = emptyMap(), onProgress: ProgressListener? = null): JsonObject =
        progressing(
            "prompts/get",
            buildJsonObject {
                put("name", JsonPrimitive(name))
                put("arguments", JsonObject(arguments.mapValues { JsonPrimitive(it.value) }))
            },
            onProgress,
        )

    /**
     * The `completion` of `completion/complete` (`values`, `hasMore`, `total`): [ref] is
     * [promptRef] or [templateRef], [context] the other arguments given so far.
     */
    suspend fun complete(ref: JsonObject, argument: String, value: String, context: Map<String, String>? = null): JsonObject {
        val params = buildJsonObject {
            put("ref", ref)
            put("argument", buildJsonObject {
                put("name", JsonPrimitive(argument))
                put("value", JsonPrimitive(value))
            })
            if (context != null) {
                put("context", buildJsonObject { put("arguments", JsonObject(context.mapValues { JsonPrimitive(it.value) })) })
            }
        }
        return request("completion/complete", params)["completion"] as? JsonObject ?: JsonObject(emptyMap())
    }

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
