// A server's lifespan: a value set up before the first call is handled and torn down after the
// last, which handlers reach through their context. Host-language code: what the value is and
// how it closes is the app's; the engine only serves calls.
package dev.toolwire

import kotlinx.coroutines.flow.MutableStateFlow
import kotlinx.coroutines.flow.first
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.sync.Mutex
import kotlinx.coroutines.sync.withLock
import kotlinx.coroutines.withContext
import java.util.Collections
import java.util.WeakHashMap
import java.util.concurrent.atomic.AtomicInteger
import kotlin.coroutines.AbstractCoroutineContextElement
import kotlin.coroutines.CoroutineContext
import kotlin.coroutines.coroutineContext

/**
 * Sets the server's lifespan, as the official SDKs' `lifespan`: [start] makes a value (a
 * connection pool, a client…) before the first call is handled, handlers read it with
 * `context.lifespanContext<T>()` (tools) or `lifespanContext<T>()` (resources, prompts and
 * completions: their receiver's), and [stop] gets it back once serving has ended and the
 * calls in flight have finished (by default an `AutoCloseable` value is closed).
 *
 * ```kotlin
 * server.lifespan(start = { Database.connect(url) }, stop = { it.close() })
 * server.tool(ToolDefinition("count")) { context, _ -> ToolResult.Text("${context.lifespanContext<Database>().count()}") }
 * ```
 *
 * It starts when serving starts ([runStdio], [runHttp], `TestClient.connect`, [startLifespan]),
 * once however many serves run, and a failure to start is their exception; it stops when the
 * last of them has ended ([Server.stop] ends `runStdio`/`runHttp`; a test client's `close()`;
 * [endLifespan]). A call that reaches a server whose lifespan has not started (a session of
 * [Server.connect] or [Server.serveHttp]) starts it and waits; calls arriving meanwhile wait
 * too, and if it fails to start they fail with its message. Set it before serving.
 */
fun <T> Server.lifespan(
    start: suspend () -> T,
    stop: suspend (value: T) -> Unit = { (it as? AutoCloseable)?.close() },
) {
    @Suppress("UNCHECKED_CAST")
    Lifespan.of(this).hooks = Lifespan.Hooks(start, stop as suspend (Any?) -> Unit)
}

/**
 * Starts the lifespan now (if one is set and it is not running) and holds it until
 * [endLifespan]: for serving the app runs itself ([Server.serveHttp], [Server.connect]).
 */
suspend fun Server.startLifespan() = Lifespan.of(this).acquire()

/**
 * Lets go of what [startLifespan] held; the lifespan stops once no serve holds it, after the
 * calls in flight have finished.
 */
suspend fun Server.endLifespan() = Lifespan.of(this).release()

/**
 * The value of the server's lifespan, started if it was not (see [Server.lifespan]). Throws
 * [IllegalStateException] when the handler's server has no lifespan, or its value is not a [T].
 * (Handlers registered with the wrapper: `server.tool { }`, `blockingTool { }`, and the
 * [RequestContext] of `resource { }`, `prompt { }`, `promptCompletion { }`,
 * `templateCompletion { }`.)
 */
inline fun <reified T> CallContext.lifespanContext(): T {
    val value = Lifespan.valueFor(this)
    return value as? T ?: throw IllegalStateException("the lifespan's value is ${value?.javaClass?.name ?: "null"}, not ${T::class.java.name}")
}

/**
 * The value of the server's lifespan in a resource, prompt or completion handler registered with
 * the wrapper (and in the suspending code it calls); inside such a lambda, the receiver's
 * [CallContext.lifespanContext] is the same value.
 */
suspend inline fun <reified T> lifespanContext(): T {
    val value = Lifespan.valueHere()
    return value as? T ?: throw IllegalStateException("the lifespan's value is ${value?.javaClass?.name ?: "null"}, not ${T::class.java.name}")
}

/** One server's lifespan: its hooks, its value, who holds it, its calls in flight. */
@PublishedApi
internal class Lifespan private constructor() {
    class Hooks(val start: suspend () -> Any?, val stop: suspend (Any?) -> Unit)

    /** The coroutine context element a resource's or prompt's handler finds its lifespan by. */
    class Element(val lifespan: Lifespan) : AbstractCoroutineContextElement(Key) {
        companion object Key : CoroutineContext.Key<Element>
    }

    @Volatile
    var hooks: Hooks? = null

    // Made at first use: a server without a lifespan (most) serves without loading
    // kotlinx.coroutines at all until a call suspends, a good part of a JVM server's start.
    private val lock by lazy { Mutex() }
    private val inFlight by lazy { MutableStateFlow(0) }

    @Volatile
    private var running = false
    private var value: Any? = null
    private val holders = AtomicInteger()

    /** Starts the value if it is not running; a failure is thrown (and the next call tries again). */
    private suspend fun ensureStarted(): Any? {
        if (running) return value
        return lock.withLock { startIfStopped() }
    }

    /** Under [lock]. */
    private suspend fun startIfStopped(): Any? {
        if (!running) {
            val hooks = hooks ?: return null
            value = hooks.start()
            running = true
        }
        return value
    }

    suspend fun acquire() {
        holders.incrementAndGet()
        try {
            // Through the lock even when it runs: a release that saw no holder may be stopping it
            // right now, and this waits for that stop to end and starts it again.
            if (hooks != null) lock.withLock { startIfStopped() }
        } catch (e: Throwable) {
            holders.decrementAndGet()
            throw e
        }
    }

    suspend fun release() {
        if (!letGo()) return
        inFlight.first { it == 0 }
        lock.withLock {
            if (!running || holders.get() > 0) return@withLock
            val ending = value
            running = false
            value = null
            hooks?.stop?.invoke(ending)
        }
    }

    /** Runs one call of a tool, resource or prompt inside the lifespan (started first if needed). */
    suspend fun <R> around(block: suspend () -> R): R {
        if (hooks == null) return block()
        ensureStarted()
        inFlight.add(1)
        try {
            return withContext(Element(this)) { block() }
        } finally {
            inFlight.add(-1)
        }
    }

    /** [around] for a blocking handler, on its own (`Dispatchers.IO`) thread. */
    fun <R> aroundBlocking(block: () -> R): R {
        if (hooks == null) return block()
        runBlocking { ensureStarted() }
        inFlight.add(1)
        try {
            return block()
        } finally {
            inFlight.add(-1)
        }
    }

    private fun MutableStateFlow<Int>.add(delta: Int) {
        while (true) {
            val current = value
            if (compareAndSet(current, current + delta)) return
        }
    }

    /** One holder fewer; true when none is left. */
    private fun letGo(): Boolean = holders.updateAndGet { if (it > 0) it - 1 else 0 } == 0

    /**
     * [acquire] from a thread that may block ([runStdio], [runHttp]); with no hooks and nothing
     * running there is nothing to start, so no coroutine is made.
     */
    fun acquireBlocking() {
        if (hooks == null && !running) {
            holders.incrementAndGet()
            return
        }
        runBlocking { acquire() }
    }

    /** [release] from a thread that may block; as [acquireBlocking], nothing to stop costs nothing. */
    fun releaseBlocking() {
        if (hooks == null && !running) {
            letGo()
            return
        }
        runBlocking { release() }
    }

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
