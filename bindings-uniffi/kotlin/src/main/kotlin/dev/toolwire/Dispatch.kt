package dev.toolwire

import com.sun.jna.Pointer
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.Job
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.launch
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicInteger
import kotlin.coroutines.Continuation
import kotlin.coroutines.CoroutineContext
import kotlin.coroutines.cancellation.CancellationException
import kotlin.coroutines.intrinsics.COROUTINE_SUSPENDED
import kotlin.coroutines.intrinsics.startCoroutineUninterceptedOrReturn

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
    // At the first blocking call: kotlinx.coroutines' IO scheduler is no part of a start.
    private val blockingScope by lazy { CoroutineScope(SupervisorJob() + Dispatchers.IO) }

    @Volatile
    private var dispatcherStarted = false

    fun register(handler: Handler): Int {
        val key = nextKey.incrementAndGet()
        handlers[key] = handler
        ensureDispatcher()
        return key
    }

    /** Serves the stdio loop [driverId] on the calling thread until its session ends. */
    fun serve(driverId: Long) = NativeLink.serve(driverId, ::run)

    /**
     * Sessions the engine serves itself (`connect()`, `serveStdio()`) queue calls from its own
     * threads: one daemon thread takes them.
     */
    private fun ensureDispatcher() {
        if (dispatcherStarted) return
        synchronized(this) {
            if (dispatcherStarted) return
            dispatcherStarted = true
            NativeLink.registerHostRunner(::runHere)
            val thread = Thread({
                while (true) {
                    try {
                        val done = ArrayList<Completion>()
                        run(NativeLink.take(60_000), done)
                        NativeLink.complete(done)
                    } catch (e: Throwable) {
                        // Handlers' own failures never get here; this keeps the thread alive
                        // through anything else (e.g. an OutOfMemoryError in one batch).
                        System.err.println("toolwire: the dispatcher thread caught $e")
                    }
                }
            }, "toolwire-dispatch")
            thread.isDaemon = true
            thread.start()
        }
    }

    /**
     * Starts one call on the app's thread that is inside the engine (a mounted endpoint's
     * request answered in place): a handler that finishes at once is answered with the request,
     * with no hop to the dispatcher thread and back. One that suspends goes on as any call.
     */
    private fun runHere(callId: Long, toolKey: Int, arguments: Pointer, length: Long) {
        val done = ArrayList<Completion>(1)
        try {
            val json = String(arguments.getByteArray(0, length.toInt()), Charsets.UTF_8)
            start(PendingCall(callId, toolKey, json), done)
        } catch (e: Throwable) {
            // Nothing may be thrown back into the engine; the call must still be answered.
            done.add(Completion(callId, failure(e)))
        }
        try {
            NativeLink.complete(done)
        } catch (e: Throwable) {
            // JNA would swallow it: say so (the call then ends by its timeout, a cancel or its client going).
            System.err.println("toolwire: a result could not be handed back: $e")
        }
    }

    /** Starts every call of [work]; results of handlers that finish at once go to [done]. */
    private fun run(work: Work, done: MutableList<Completion>) {
        for (id in work.cancelled) running.remove(id)?.cancel()
        for (call in work.calls) start(call, done)
    }

    private fun start(call: PendingCall, done: MutableList<Completion>) {
        val id = call.callId
        when (val handler = handlers[call.toolKey]) {
            null -> done.add(Completion(id, ToolResult.Error("no handler is registered for this tool")))
            is Handler.Blocking -> blockingScope.launch {
                val context = QueuedCallContext(id)
                val result = guarded { handler.body(context, call.argumentsJson) }
                context.release()
                NativeLink.complete(listOf(Completion(id, result)))
            }
            is Handler.Suspending -> startSuspending(id, call, handler, done)
        }
    }

    private fun startSuspending(id: Long, call: PendingCall, handler: Handler.Suspending, done: MutableList<Completion>) {
        // The lambda runs right here, without a launch (most handlers answer at once). Its
        // context needs a Job from the start; only a call that suspends is tracked by it.
        val job = Job()
        val context = QueuedCallContext(id)
        val completion = Detached(id, context, job)
        val block: suspend () -> ToolResult = { handler.body(context, call.argumentsJson) }
        val outcome = try {
            block.startCoroutineUninterceptedOrReturn(completion)
        } catch (e: Exception) {
            // Thrown before the first suspension, so before the engine could cancel the call:
            // a CancellationException here is the handler's own (an uncaught withTimeout) and
            // fails the call like any exception, instead of leaving it unanswered.
            context.release()
            done.add(Completion(id, failure(e)))
            return
        }
        if (outcome === COROUTINE_SUSPENDED) {
            running[id] = job
            if (completion.finished) running.remove(id)
        } else {
            context.release()
            done.add(Completion(id, outcome as ToolResult))
        }
    }

    /** Where a handler that suspended resumes (on `Dispatchers.Default`) and finishes. */
    private class Detached(
        private val id: Long,
        private val callContext: QueuedCallContext,
        private val job: Job,
    ) : Continuation<ToolResult> {
        override val context: CoroutineContext = job + Dispatchers.Default

        @Volatile
        var finished = false

        override fun resumeWith(result: Result<ToolResult>) {
            finished = true
            running.remove(id)
            callContext.release()
            val error = result.exceptionOrNull()
            // Cancelled by the engine (its job was): no result is waited for. A handler's own
            // CancellationException (an uncaught withTimeout) fails the call instead.
            if (error is CancellationException && job.isCancelled) return
            val value = result.getOrNull() ?: failure(error ?: IllegalStateException("no result"))
            NativeLink.complete(listOf(Completion(id, value)))
        }
    }

    private fun failure(e: Throwable): ToolResult = when (e) {
        // A handler asking for input itself (2026-07-28): its questions and state go on.
        is ToolwireException.InputRequired -> ToolResult.InputRequired(e.inputRequestsJson, e.requestState)
        // A JSON-RPC error instead of an isError result, as ToolResult.ProtocolError.
        is ToolwireException.Protocol -> ToolResult.ProtocolError(e.code, e.detail)
        is ToolwireException -> ToolResult.Error(e.detail)
        else -> ToolResult.Error(e.message?.takeIf { it.isNotBlank() } ?: e.javaClass.simpleName)
    }

    /**
     * A blocking handler's exception is the tool's failure, a CancellationException included:
     * the engine never cancels a blocking call's coroutine (the handler polls `isCancelled`), so
     * one it throws is its own and the call must still get an answer.
     */
    private inline fun guarded(body: () -> ToolResult): ToolResult =
        try {
            body()
        } catch (e: Exception) {
            failure(e)
        }
}
