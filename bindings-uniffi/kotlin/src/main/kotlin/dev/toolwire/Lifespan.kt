// A server's lifespan: a value set up before the first call is handled and torn down after the
// last, which handlers reach through their context. The engine's gate decides when it starts and
// stops and keeps calls out meanwhile (the rules are core's, the same in every language); this
// keeps the value, runs the app's start and stop on coroutines, and holds it where Kotlin serves.
package dev.toolwire

import kotlinx.coroutines.withContext
import java.util.Collections
import java.util.WeakHashMap
import java.util.concurrent.ConcurrentLinkedDeque
import kotlin.coroutines.AbstractCoroutineContextElement
import kotlin.coroutines.CoroutineContext
import kotlin.coroutines.coroutineContext

/**
 * Sets the server's lifespan, as the official SDKs' `lifespan`: [start] makes a value (a
 * connection pool, a client…) before the first call is handled, handlers read it with
 * `context.lifespanContext<T>()` (tools) or `lifespanContext<T>()` (resources, prompts and
 * completions: their receiver's), and [stop] gets it back once serving has ended and the
 * calls in flight have finished (by default an `AutoCloseable` value is closed). Both run on a
 * coroutine of their own (`Dispatchers.Default`); an exception [stop] throws goes to the
 * engine's log.
 *
 * ```kotlin
 * server.lifespan(start = { Database.connect(url) }, stop = { it.close() })
 * server.tool(ToolDefinition("count")) { context, _ -> ToolResult.Text("${context.lifespanContext<Database>().count()}") }
 * ```
 *
 * The engine runs it, with the same rules in every language. Serving holds it: [runStdio],
 * [runHttp] and [Server.serveHttp], `TestClient.connect`, the Ktor route `mcp(path, server)`
 * and [startLifespan]. The first hold starts it, once however many serves arrive; an exception
 * [start] throws is thrown by each of them (and the next one tries again). It stops when the
 * last of them has ended ([Server.stop] ends `runStdio`/`runHttp`; a test client's `close()`;
 * [endLifespan]), after the calls in flight. Calls wait until it runs; one that arrives with
 * nothing holding it (a session of [Server.connect]) starts it, and if the start fails, each
 * call waiting for it fails with "the server's lifespan failed to start: " and the exception's
 * message. Set it before serving.
 */
fun <T> Server.lifespan(
    start: suspend () -> T,
    stop: suspend (value: T) -> Unit = { (it as? AutoCloseable)?.close() },
) {
    @Suppress("UNCHECKED_CAST")
    Lifespan.of(this).set(this, Lifespan.Hooks(start, stop as suspend (Any?) -> Unit))
}

/**
 * Holds the lifespan until [endLifespan], started first if it is not running (an exception its
 * start throws is thrown here): for serving the app runs itself ([Server.connect], an
 * [HttpEndpoint] of its own).
 */
suspend fun Server.startLifespan() = Lifespan.of(this).startHeld(this)

/**
 * Lets go of what [startLifespan] held, and returns once the lifespan has stopped if nothing
 * else holds it (after the calls in flight). Without a [startLifespan] to end, it stops a
 * lifespan that a call started, unless a serve holds it.
 */
suspend fun Server.endLifespan() = Lifespan.of(this).endHeld(this)

/**
 * The value of the server's lifespan (see [Server.lifespan]). Throws [IllegalStateException]
 * when the handler's server has no lifespan, or its value is not a [T]. (Handlers registered
 * with the wrapper: `server.tool { }`, `blockingTool { }`, and the [RequestContext] of
 * `resource { }`, `prompt { }`, `promptCompletion { }`, `templateCompletion { }`.)
 */
inline fun <reified T> CallContext.lifespanContext(): T {
    val value = Lifespan.valueFor(this)
    return value as? T ?: throw IllegalStateException("the lifespan's value is ${value?.javaClass?.name ?: "null"}, not ${T::class.java.name}")
}

/**
 * The value of the server's lifespan in a handler registered with the wrapper (and in the
 * suspending code it calls); inside a resource's, prompt's or completion's lambda, the
 * receiver's [CallContext.lifespanContext] is the same value.
 */
suspend inline fun <reified T> lifespanContext(): T {
    val value = Lifespan.valueHere()
    return value as? T ?: throw IllegalStateException("the lifespan's value is ${value?.javaClass?.name ?: "null"}, not ${T::class.java.name}")
}

/** One server's lifespan as Kotlin sees it: the app's hooks, their value, and [startLifespan]'s holds. */
@PublishedApi
internal class Lifespan private constructor() {
    class Hooks(val start: suspend () -> Any?, val stop: suspend (Any?) -> Unit)

    /** The coroutine context element a handler's suspending code finds its lifespan by. */
    class Element(val lifespan: Lifespan) : AbstractCoroutineContextElement(Key) {
        companion object Key : CoroutineContext.Key<Element>
    }

    @Volatile
    var hooks: Hooks? = null
        private set

    /** Set while the engine has it running: from its start's return to its stop. */
    @Volatile
    private var running = false

    @Volatile
    private var value: Any? = null

    /**
     * What the last start threw, rethrown by the holds that waited for it (the engine tells them
     * only its message); cleared by a start that succeeds.
     */
    @Volatile
    private var startFailure: Throwable? = null

    /** [startLifespan]'s holds, the latest last. */
    private val held = ConcurrentLinkedDeque<LifespanHold>()

    fun set(server: Server, hooks: Hooks) {
        this.hooks = hooks
        server.setLifespan(ForEngine(hooks))
    }

    /**
     * The hooks as the engine calls them, each on a coroutine of UniFFI's: nothing is thrown
     * past this but [ToolwireException] (the engine then knows the start failed, or logs the
     * stop's failure), never an `Error` its launcher would leave unreported.
     */
    private inner class ForEngine(private val hooks: Hooks) : LifespanHooks {
        override suspend fun start() {
            try {
                value = hooks.start()
            } catch (e: Throwable) {
                startFailure = e
                throw ToolwireException.Handler(e.message ?: e.toString())
            }
            startFailure = null
            running = true
        }

        override suspend fun stop() {
            val ending = value
            running = false
            value = null
            try {
                hooks.stop(ending)
            } catch (e: Throwable) {
                throw ToolwireException.Handler(e.stackTraceToString())
            }
        }
    }

    /** Holds it for a serve of Kotlin's own; an exception its start threw is thrown here. */
    suspend fun hold(server: Server): LifespanHold = startFailureOf { server.holdLifespan() }

    /** [hold] from a thread that may block ([runStdio]). */
    fun holdBlocking(server: Server): LifespanHold = startFailureOf { server.holdLifespanBlocking() }

    /**
     * Runs [holding], something that holds the lifespan ([hold], [Server.serveHttp]): a failed
     * start reaches it as [ToolwireException.Handler] with the engine's wording, and is thrown
     * as the app's own exception instead.
     */
    inline fun <T> startFailureOf(holding: () -> T): T =
        try {
            holding()
        } catch (e: ToolwireException.Handler) {
            throw lastStartFailure() ?: e
        }

    fun lastStartFailure(): Throwable? = startFailure

    suspend fun startHeld(server: Server) {
        held.addLast(hold(server))
    }

    suspend fun endHeld(server: Server) {
        // A lifespan a call started is stopped by the last hold's release, so one taken now.
        val hold = held.pollLast() ?: if (running) hold(server) else return
        hold.letGo()
    }

    /** Runs a suspending handler where [lifespanContext] finds this lifespan (when one is set). */
    suspend fun <R> reachable(block: suspend () -> R): R =
        if (hooks == null) block() else withContext(Element(this)) { block() }

    fun current(): Any? {
        check(hooks != null) { "this server has no lifespan: set one with server.lifespan(start, stop)" }
        check(running) { "the lifespan is not running" }
        return value
    }

    @PublishedApi
    internal companion object {
        private val byServer: MutableMap<Server, Lifespan> = Collections.synchronizedMap(WeakHashMap())

        fun of(server: Server): Lifespan = synchronized(byServer) { byServer.getOrPut(server) { Lifespan() } }

        fun valueFor(context: CallContext): Any? {
            val lifespan = (context as? QueuedCallContext)?.lifespan
                ?: (context as? RequestContext)?.lifespan
                ?: throw IllegalStateException(
                    "this call has no lifespan: set one with server.lifespan(start, stop) (handlers registered with the wrapper: server.tool { }, blockingTool { }, resource { }, prompt { }, promptCompletion { }, templateCompletion { })",
                )
            return lifespan.current()
        }

        suspend fun valueHere(): Any? {
            val element = coroutineContext[Element]
                ?: throw IllegalStateException("no lifespan here: set one with server.lifespan(start, stop) (resources, prompts and completions registered with the wrapper)")
            return element.lifespan.current()
        }
    }
}

/** Releases the hold (waiting for the lifespan's stop when it was the last) and frees it. */
internal suspend fun LifespanHold.letGo() {
    try {
        release()
    } finally {
        destroy()
    }
}

/** [letGo] from a thread that may block. */
internal fun LifespanHold.letGoBlocking() {
    try {
        releaseBlocking()
    } finally {
        destroy()
    }
}
