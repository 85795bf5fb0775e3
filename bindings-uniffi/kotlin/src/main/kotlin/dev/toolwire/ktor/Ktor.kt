// The server's Streamable HTTP endpoint inside a Ktor 3 app: `routing { mcp("/mcp", server) }`.
//
// The engine answers every request (sessions, SSE, resumption, the 2026-07-28 exchanges, the
// Host and Origin guard, tokens, limits); this file only moves Ktor's request head and body
// chunks to it, and the response head and body chunks back, and tells it when the client hung
// up. Ktor is an optional dependency of the toolwire jar: only an app that calls this needs it.
package dev.toolwire.ktor

import dev.toolwire.BearerTokenValidator
import dev.toolwire.EngineLogs
import dev.toolwire.HttpEndpoint
import dev.toolwire.HttpEndpointOptions
import dev.toolwire.HttpExchange
import dev.toolwire.HttpHeader
import dev.toolwire.HttpResponseHead
import dev.toolwire.Lifespan
import dev.toolwire.LifespanHold
import dev.toolwire.NativeLink
import dev.toolwire.Server
import dev.toolwire.ToolwireException
import dev.toolwire.detail
import dev.toolwire.letGo
import io.ktor.http.ContentType
import io.ktor.http.HttpHeaders
import io.ktor.http.HttpStatusCode
import io.ktor.server.application.ApplicationCall
import io.ktor.server.application.ApplicationStopPreparing
import io.ktor.server.application.ApplicationStopped
import io.ktor.server.http.HttpRequestCloseHandlerKey
import io.ktor.server.plugins.origin
import io.ktor.server.request.httpMethod
import io.ktor.server.request.httpVersion
import io.ktor.server.request.receiveChannel
import io.ktor.server.request.uri
import io.ktor.server.response.respondBytes
import io.ktor.server.response.respondBytesWriter
import io.ktor.server.response.respondText
import io.ktor.server.routing.Route
import io.ktor.server.routing.application
import io.ktor.server.routing.route
import io.ktor.server.routing.routing
import io.ktor.utils.io.ByteReadChannel
import io.ktor.utils.io.InternalAPI
import io.ktor.utils.io.availableForRead
import io.ktor.utils.io.readAvailable
import io.ktor.utils.io.writeFully
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.sync.Mutex
import kotlinx.coroutines.sync.withLock
import kotlin.coroutines.cancellation.CancellationException

/**
 * Answers MCP's Streamable HTTP at [path] of this route, as the official Kotlin SDK's `mcp`:
 *
 * ```kotlin
 * embeddedServer(CIO, port = 8080) {
 *     routing {
 *         get("/health") { call.respondText("ok") }
 *         mcp("/mcp", server, HttpEndpointOptions(allowedHosts = listOf("api.example.com")))
 *     }
 * }.start(wait = true)
 * ```
 *
 * Every method at [path] goes to the engine (POST, GET and DELETE; others get its 405). The
 * options are [dev.toolwire.Server.serveHttp]'s less the listener's (connections and head
 * timeouts are Ktor's); unless `allowedHosts` names the app's host names (with their port, as
 * the `Host` header carries it, or without it for any port), only loopback `Host` values pass,
 * so the endpoint is never open to DNS rebinding by default. With a [validator] every request
 * needs a bearer token it accepts, and the protected-resource metadata its 401 points to is
 * answered at the app's root, `/.well-known/oauth-protected-resource` + the endpoint's path (the
 * options' `path`: by default [path], so set it to the full path when this route is nested under
 * a prefix). Browsers' `Origin` is checked too: set `allowedOrigins` for the app's own pages.
 * The client's address is `call.request.origin.remoteAddress`
 * (behind a proxy, install Ktor's `XForwardedHeaders` to make it the client's).
 *
 * A client that hangs up ends its response: the engine (Ktor 3.4 or later) tells the route
 * when the connection closes, as it tells Ktor's `HttpRequestLifecycle` plugin; a 2026-07-28
 * request is then cancelled; an earlier era's call goes on and the client may resume its stream.
 * On a connection whose request is its last (`Connection: close`, HTTP/1.0), Ktor's CIO engine
 * reports the close as soon as the request is read, so there the hang-up is noticed at the next
 * write instead (at most the SSE keep-alive's 15 s); the plugin's `cancelCallOnClose` would
 * cancel such requests at once, so this route does not use it.
 *
 * It starts on the first request: the server's [dev.toolwire.lifespan] starts then (its failure
 * is that request's 500). It ends when the application stops (at `ApplicationStopPreparing`, so
 * open SSE streams do not hold up a graceful stop, and again at `ApplicationStopped`), or with
 * the returned [McpRoute.close]: the sessions end after their calls in flight, then the
 * lifespan. Tools registered with `server.tool { }` run as they do for `runHttp`.
 */
fun Route.mcp(
    path: String,
    server: Server,
    options: HttpEndpointOptions? = null,
    validator: BearerTokenValidator? = null,
): McpRoute {
    // The path the engine names in its protected-resource metadata: this route's, unless set.
    val endpointPath = options?.path ?: if (path.startsWith("/")) path else "/$path"
    val mount = McpRoute(server, (options ?: HttpEndpointOptions()).copy(path = endpointPath), validator)
    val monitor = application.monitor
    monitor.subscribe(ApplicationStopPreparing) { runBlocking { mount.close() } }
    monitor.subscribe(ApplicationStopped) { runBlocking { mount.close() } }
    route(path) {
        handle { mount.answer(call) }
    }
    if (validator != null) {
        // Where clients look for the metadata a 401 points to (RFC 9728): at the app's root.
        application.routing {
            route("/.well-known/oauth-protected-resource$endpointPath") {
                handle { mount.answer(call) }
            }
        }
    }
    return mount
}

/** The MCP endpoint [mcp] mounted: [close] ends it before the application stops. */
class McpRoute internal constructor(
    private val server: Server,
    private val options: HttpEndpointOptions?,
    private val validator: BearerTokenValidator?,
) {
    private val starting = Mutex()

    /**
     * The open endpoint with its id for the whole-body path ([NativeLink.answerWhole]), and
     * the route's hold on the server's lifespan: one volatile value, so a request never sees
     * an endpoint with another one's id.
     */
    @Volatile
    private var open: Open? = null

    private class Open(val endpoint: HttpEndpoint, val id: Long, val lifespan: LifespanHold)

    /**
     * Ends every session (their calls in flight finish first, each within the server's drain
     * time), then this route's hold on the server's lifespan. A request after it starts the
     * endpoint again, with new sessions.
     */
    suspend fun close() {
        val ending = starting.withLock {
            val ending = open ?: return
            open = null
            ending
        }
        ending.endpoint.shutdown()
        // After the shutdown: a request that took the endpoint before `close` is still
        // answered (by the engine's refusal at worst), never by an unknown id.
        NativeLink.forgetEndpoint(ending.id)
        ending.lifespan.letGo()
    }

    /** Bodies up to this size may be read whole before the engine sees the request (its rule). */
    @Volatile
    private var wholeBodyBytes = 0L

    private suspend fun start(): Open {
        open?.let { return it }
        return starting.withLock {
            open ?: run {
                EngineLogs.start()
                // A mounted endpoint holds nothing itself: the route holds it, as a serve.
                val held = Lifespan.of(server).hold(server)
                val endpoint = try {
                    server.httpEndpoint(options, validator)
                } catch (e: Throwable) {
                    held.letGo()
                    throw e
                }
                val id = try {
                    NativeLink.keepEndpoint(endpoint)
                } catch (e: Throwable) {
                    endpoint.shutdown()
                    held.letGo()
                    throw e
                }
                wholeBodyBytes = endpoint.wholeBodyBytes().toLong()
                val started = Open(endpoint, id, held)
                open = started
                started
            }
        }
    }

    @OptIn(InternalAPI::class)
    internal suspend fun answer(call: ApplicationCall) {
        val open = start()
        val request = call.request
        val headers = ArrayList<Pair<String, String>>()
        request.headers.forEach { name, values -> values.forEach { headers.add(name to it) } }
        // The engine calls this when the connection closes (from its own thread, maybe after
        // the answer is over, or before the exchange exists: a handler may start, and its client
        // go, while `answer` runs). Not for a connection's last request: CIO reports that one
        // closed once it is read.
        val watch = HangUpWatch()
        if (!lastOnItsConnection(call)) call.attributes.put(HttpRequestCloseHandlerKey) { watch.closed() }
        val body = call.receiveChannel()
        // A body here in whole already (any small one the engine read with the head, or none)
        // is answered in one step, on this thread as far as it can (a tool's handler starts
        // here): complete at once when nothing had to wait. Otherwise it is fed as it comes
        // (the engine bounds it and times it out).
        val whole = wholeBody(call, body)
        val exchange = try {
            if (whole != null) {
                val method = request.httpMethod.value
                when (val answer = NativeLink.answerWhole(open.id, method, request.uri, headers, whole, request.origin.remoteAddress)) {
                    is NativeLink.WholeAnswer.Complete -> {
                        call.attributes.remove(HttpRequestCloseHandlerKey)
                        respondWhole(call, answer.status, answer.headers, answer.body)
                        return
                    }
                    is NativeLink.WholeAnswer.GoesOn -> answer.exchange
                }
            } else {
                val fields = headers.map { (name, value) -> HttpHeader(name, value) }
                open.endpoint.exchange(request.httpMethod.value, request.uri, fields, request.origin.remoteAddress)
            }
        } catch (e: ToolwireException.InvalidArgument) {
            call.attributes.remove(HttpRequestCloseHandlerKey)
            call.respondText(e.detail, status = HttpStatusCode.BadRequest)
            return
        }
        watch.watch(exchange)
        try {
            coroutineScope {
                val feeding = if (whole == null) launch { feed(body, exchange) } else null
                try {
                    // Null: the client hung up before the answer began.
                    val head = exchange.response() ?: return@coroutineScope
                    val complete = head.body
                    if (complete != null) respondWhole(call, head.status.toInt(), head.headers, complete) else respond(call, exchange, head)
                } finally {
                    // The answer is complete (or refused the rest of the body, e.g. 413).
                    feeding?.cancel()
                }
            }
        } finally {
            call.attributes.remove(HttpRequestCloseHandlerKey)
            // A finished answer loses nothing; one still streaming is the client hanging up
            // (the write failed or the call was cancelled).
            exchange.hangUp()
            exchange.close()
        }
    }

    /**
     * The request body when it is all here already: none (no length, not chunked), or a small
     * one whose bytes have all arrived. Null: it is still coming (then fed chunk by chunk).
     */
    private suspend fun wholeBody(call: ApplicationCall, body: ByteReadChannel): ByteArray? {
        val request = call.request
        // Without a length, HTTP/1 has no body unless it is chunked; HTTP/2 may have one.
        val length = request.headers[HttpHeaders.ContentLength]?.toLongOrNull()
            ?: return if (request.headers[HttpHeaders.TransferEncoding] == null && request.httpVersion.startsWith("HTTP/1")) ByteArray(0) else null
        if (length < 0 || length > wholeBodyBytes || body.availableForRead < length) return null
        val bytes = ByteArray(length.toInt())
        var read = 0
        // All available: no read here waits.
        while (read < bytes.size) {
            val got = body.readAvailable(bytes, read, bytes.size - read)
            if (got < 0) return null
            read += got
        }
        return bytes
    }

    /** A response whose body came whole. */
    private suspend fun respondWhole(call: ApplicationCall, status: Int, headers: List<HttpHeader>, body: ByteArray) {
        var contentType: ContentType? = null
        for (field in headers) {
            when (field.name.lowercase()) {
                // Ktor sets these itself, from the arguments of respondBytes.
                "content-type" -> contentType = ContentType.parse(field.value)
                "content-length", "transfer-encoding" -> {}
                else -> call.response.headers.append(field.name, field.value, safeOnly = false)
            }
        }
        call.respondBytes(body, contentType, HttpStatusCode.fromValue(status))
    }

    private fun lastOnItsConnection(call: ApplicationCall): Boolean {
        val options = call.request.headers.getAll(HttpHeaders.Connection).orEmpty()
            .flatMap { it.split(',') }.map { it.trim().lowercase() }
        return "close" in options || (call.request.httpVersion == "HTTP/1.0" && "keep-alive" !in options)
    }

    /** The request body, chunk by chunk; suspends while the engine has not taken the last. */
    private suspend fun feed(body: ByteReadChannel, exchange: HttpExchange) {
        try {
            val buffer = ByteArray(CHUNK_BYTES)
            while (true) {
                val read = body.readAvailable(buffer, 0, buffer.size)
                if (read < 0) break
                // False: the engine answered already (too large, refused): read no more.
                if (read > 0) {
                    val chunk = buffer.copyOf(read)
                    if (!(exchange.trySendBody(chunk) ?: exchange.sendBody(chunk))) return
                }
            }
            exchange.endBody()
        } catch (e: CancellationException) {
            exchange.abortBody()
            throw e
        } catch (e: Exception) {
            // The client went away mid-body: the engine answers 400 to nobody.
            exchange.abortBody()
        }
    }

    private suspend fun respond(call: ApplicationCall, exchange: HttpExchange, head: HttpResponseHead) {
        var contentType: ContentType? = null
        var contentLength: Long? = null
        for (field in head.headers) {
            when (field.name.lowercase()) {
                // Ktor sets these itself, from the arguments of respondBytesWriter.
                "content-type" -> contentType = ContentType.parse(field.value)
                "content-length" -> contentLength = field.value.toLongOrNull()
                "transfer-encoding" -> {}
                else -> call.response.headers.append(field.name, field.value, safeOnly = false)
            }
        }
        call.respondBytesWriter(contentType, HttpStatusCode.fromValue(head.status.toInt()), contentLength) {
            while (true) {
                val chunk = exchange.nextChunk() ?: break
                writeFully(chunk)
                // Each chunk now: an SSE event must not wait in a buffer.
                flush()
            }
        }
    }

    private companion object {
        const val CHUNK_BYTES = 16 * 1024
    }
}

/** The client's connection closing, which may come before the exchange it ends exists. */
private class HangUpWatch {
    private var closed = false
    private var exchange: HttpExchange? = null

    /** The connection closed (the engine's thread). */
    @Synchronized
    fun closed() {
        closed = true
        exchange?.let(::hangUp)
    }

    /** The exchange to hang up when it closes; at once if it closed already. */
    @Synchronized
    fun watch(exchange: HttpExchange) {
        this.exchange = exchange
        if (closed) hangUp(exchange)
    }

    private fun hangUp(exchange: HttpExchange) {
        try {
            exchange.hangUp()
        } catch (_: IllegalStateException) {
            // Freed already: the answer was complete.
        }
    }
}
