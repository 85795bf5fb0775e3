// Middleware as Ktor's interceptors and Python's `call_next`: one suspending lambda around
// each request, built on the engine's `Middleware` foreign trait (before/after).
package dev.toolwire

import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.launch
import org.slf4j.LoggerFactory
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicBoolean
import kotlin.coroutines.cancellation.CancellationException

/**
 * The rest of the chain, as a middleware's lambda gets it: calling it lets the request
 * through, and it returns how the request ended ([Outcome]) once the answer is sent.
 */
typealias CallNext = suspend () -> Outcome

/**
 * Puts a middleware in front of every request but `initialize`, in both protocol eras,
 * after those added before it:
 *
 * ```kotlin
 * server.middleware("audit") { request, next ->
 *     if (request.principal !in staff) throw ToolwireException.Protocol(-32001, "Forbidden", null)
 *     val outcome = next()       // the request is handled here
 *     log.info("${request.method} ${request.name}: ${outcome.kind} in ${outcome.elapsedMs} ms")
 * }
 * ```
 *
 * The code before `next()` decides: throw [ToolwireException.Protocol] to answer with that
 * JSON-RPC error instead, [ToolwireException.Handler] to answer a `tools/call` with an
 * `isError` result of its text (another method gets it as a -32603 error). Anything else
 * thrown refuses the request with -32603 and is logged (SLF4J, logger `toolwire.middleware`).
 * `next()` is called at most once; a lambda that returns without calling it refuses the request
 * with -32603 too, so a forgotten `next()` never leaves a request waiting. What runs after
 * `next()` observes: the answer is out by then, and a throw there is only logged.
 *
 * A request waits for the lambda to reach `next()` (counted against `maxQueuedCalls`; a
 * cancel by the client cancels the lambda); decide promptly. The lambda starts on an engine
 * or `Dispatchers.Default` thread and continues on `Dispatchers.Default`. [name] appears in
 * refusals and logs.
 */
fun Server.middleware(name: String? = null, around: suspend (request: RequestInfo, next: CallNext) -> Unit) {
    addMiddleware(AroundMiddleware(name, around))
}

/** One `around` lambda as the engine's before/after pair. */
internal class AroundMiddleware(
    name: String?,
    private val around: suspend (RequestInfo, CallNext) -> Unit,
) : Middleware {
    private val label = if (name == null) "middleware" else "middleware $name"

    /** Requests let through, by sequence: their `next()` waits for the outcome. */
    private val waiting = ConcurrentHashMap<ULong, CompletableDeferred<Outcome>>()

    override suspend fun before(request: RequestInfo): Verdict {
        val decided = CompletableDeferred<Verdict>()
        val outcome = CompletableDeferred<Outcome>()
        val nextCalled = AtomicBoolean()
        val cancelled = AtomicBoolean()
        val next: CallNext = {
            check(nextCalled.compareAndSet(false, true)) { "next() is called once per request" }
            // In the table before the engine hears the verdict: `after` may come at once.
            waiting[request.sequence] = outcome
            if (!decided.complete(Verdict.Continue)) {
                waiting.remove(request.sequence)
                throw IllegalStateException("next() was called after the $label had returned or was cancelled")
            }
            outcome.await()
        }
        // The lambda outlives this call once it is let through: its own job, not a child.
        val job = scope.launch(start = CoroutineStart.UNDISPATCHED) {
            val failure = try {
                around(request, next)
                null
            } catch (e: Throwable) {
                e
            }
            if (decided.isCompleted) {
                if (failure != null && !cancelled.get()) {
                    log.error("$label threw after next() (the answer was already sent)", failure)
                }
            } else if (!cancelled.get()) {
                decided.complete(verdictOf(failure))
            }
        }
        try {
            return decided.await()
        } catch (e: CancellationException) {
            // The engine gave up on the request (the client cancelled it): so does the lambda.
            cancelled.set(true)
            job.cancel()
            waiting.remove(request.sequence)
            throw e
        }
    }

    private fun verdictOf(failure: Throwable?): Verdict = when (failure) {
        null -> {
            log.warn("$label returned without calling next(): the request is refused")
            Verdict.Refuse(-32603, "Internal error: $label returned without calling next()", null)
        }
        is ToolwireException.Protocol -> Verdict.Refuse(failure.code, failure.detail, failure.dataJson)
        is ToolwireException.Handler -> Verdict.ToolError(failure.detail)
        else -> {
            log.error("$label failed: the request is refused", failure)
            Verdict.Refuse(-32603, "Internal error: $label failed", null)
        }
    }

    /** Called where the answer was sent: hands the outcome to the waiting `next()`, nothing more. */
    override fun after(sequence: ULong, outcome: Outcome) {
        waiting.remove(sequence)?.complete(outcome)
    }

    private companion object {
        val scope = CoroutineScope(SupervisorJob() + Dispatchers.Default)
        val log = LoggerFactory.getLogger("toolwire.middleware")
    }
}
