package dev.toolwire

import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.Job
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.launch
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicInteger
import kotlin.coroutines.cancellation.CancellationException

/**
 * Runs the calls of queued tools: takes them from the engine in batches, starts each handler
 * on the taking thread, and hands results back in batches.
 */
internal object Dispatch {
    sealed interface Handler {
        class Suspending(val body: suspend (CallContext, String) -> ToolResult) : Handler
        class Blocking(val body: (CallContext, String) -> ToolResult) : Handler
    }

    private val handlers = ConcurrentHashMap<Int, Handler>()
    private val nextKey = AtomicInteger()
    /** Calls whose handlers suspended, by call id: cancelled when the engine says so. */
    private val running = ConcurrentHashMap<Long, Job>()
    private val scope = CoroutineScope(SupervisorJob() + Dispatchers.Default)
    private val blockingScope = CoroutineScope(SupervisorJob() + Dispatchers.IO)

    @Volatile
    private var dispatcherStarted = false

    fun register(handler: Handler): UInt {
        val key = nextKey.incrementAndGet()
        handlers[key] = handler
        ensureDispatcher()
        return key.toUInt()
    }

    /** Serves a stdio driver on the calling thread until its session ends. */
    fun serve(driver: StdioDriver) = FastPath.serve(driver, ::run)

    /**
     * Sessions the engine serves itself (`connect()`, `serveStdio()`) queue calls from its own
     * threads: one daemon thread takes them.
     */
    private fun ensureDispatcher() {
        if (dispatcherStarted) return
        synchronized(this) {
            if (dispatcherStarted) return
            dispatcherStarted = true
            val thread = Thread({
                while (true) {
                    val done = ArrayList<Completion>()
                    run(takeWork(60_000uL), done)
                    if (done.isNotEmpty()) completeCalls(done)
                }
            }, "toolwire-dispatch")
            thread.isDaemon = true
            thread.start()
        }
    }

    /** Starts every call of [work]; results of handlers that finish at once go to [done]. */
    private fun run(work: Work, done: MutableList<Completion>) {
        for (id in work.cancelled) running.remove(id.toLong())?.cancel()
        for (call in work.calls) start(call, done)
    }

    private fun start(call: PendingCall, done: MutableList<Completion>) {
        val id = call.callId
        when (val handler = handlers[call.toolKey.toInt()]) {
            null -> done.add(Completion(id, ToolResult.Error("no handler is registered for this tool")))
            is Handler.Blocking -> blockingScope.launch {
                val context = QueuedCallContext(id)
                val result = guarded { handler.body(context, call.argumentsJson) }
                context.release()
                completeCalls(listOf(Completion(id, result)))
            }
            is Handler.Suspending -> startSuspending(id, call, handler, done)
        }
    }

    private const val INLINE = 0
    private const val FINISHED_INLINE = 1
    private const val DETACHED = 2

    private fun startSuspending(id: ULong, call: PendingCall, handler: Handler.Suspending, done: MutableList<Completion>) {
        // Whoever moves the state first decides where the result goes: still inside launch
        // (it finished without suspending) -> into this batch; later -> completed on its own.
        val state = AtomicInteger(INLINE)
        var inlineResult: ToolResult? = null
        val job = scope.launch(start = CoroutineStart.UNDISPATCHED) {
            val context = QueuedCallContext(id)
            val result = try {
                guarded { handler.body(context, call.argumentsJson) }
            } finally {
                context.release()
            }
            if (state.compareAndSet(INLINE, FINISHED_INLINE)) {
                inlineResult = result
            } else {
                running.remove(id.toLong())
                completeCalls(listOf(Completion(id, result)))
            }
        }
        if (state.compareAndSet(INLINE, DETACHED)) {
            running[id.toLong()] = job
            if (job.isCompleted) running.remove(id.toLong())
        } else {
            inlineResult?.let { done.add(Completion(id, it)) }
        }
    }

    /** A handler's exception is the tool's failure; cancellation stays cancellation. */
    private inline fun guarded(body: () -> ToolResult): ToolResult =
        try {
            body()
        } catch (e: CancellationException) {
            throw e
        } catch (e: ToolwireException) {
            ToolResult.Error(e.detail)
        } catch (e: Exception) {
            ToolResult.Error(e.message?.takeIf { it.isNotBlank() } ?: e.javaClass.simpleName)
        }
}
