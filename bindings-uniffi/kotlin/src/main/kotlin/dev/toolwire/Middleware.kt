// Middleware as Ktor's interceptors and Python's `call_next`: one suspending lambda around
// each request, run for the engine's around middleware (the `AroundFunction` foreign trait).
package dev.toolwire

import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.Job
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
    addMiddleware(name, AroundMiddleware(name, around))
}

/**
 * One `around` lambda for the engine, which decides what its ending means (`next()` once; a
 * return without it or a throw refuses with -32603; what runs after it only observes): this
 * runs the lambda, reports to its [AroundCall] and logs what it threw.
 */
internal class AroundMiddleware(
    name: String?,
    private val around: suspend (RequestInfo, CallNext) -> Unit,
) : AroundFunction {
    private val label = if (name == null) "middleware" else "middleware $name"

    /** The lambdas still deciding, by sequence: a request given up cancels its lambda. */
    private val deciding = ConcurrentHashMap<ULong, Job>()

    override fun start(request: RequestInfo, call: AroundCall) {
        val entered = AtomicBoolean()
        val next: CallNext = {
            val heard = CompletableDeferred<Outcome>()
            try {
                call.next(object : OutcomeListener {
                    override fun ended(outcome: Outcome) {
                        heard.complete(outcome)
                    }
                })
            } catch (e: ToolwireException) {
                throw IllegalStateException(e.message, e)
            }
            entered.set(true)
            heard.await()
        }
        // Started on the engine's thread (a lambda that decides at once answers at once); it
        // outlives this call once it is let through: its own job, not a child.
        val job = scope.launch(start = CoroutineStart.UNDISPATCHED) {
            val ending = try {
                around(request, next)
                Ending.Returned
            } catch (e: CancellationException) {
                // Given up by the engine (`cancelled`): nobody hears this. Else the lambda's own
                // (a timeout of its own): a failure.
                Ending.Failed(e.stackTraceToString())
            } catch (e: ToolwireException.Protocol) {
                Ending.Refused(e.code, e.detail, e.dataJson)
            } catch (e: ToolwireException.Handler) {
                Ending.ToolError(e.detail)
            } catch (e: Throwable) {
                if (entered.get()) {
                    log.error("$label threw after next() (the answer was already sent)", e)
                } else {
                    log.error("$label failed: the request is refused", e)
                }
                Ending.Failed(e.stackTraceToString())
            }
            if (ending is Ending.Returned && !entered.get()) {
                log.warn("$label returned without calling next(): the request is refused")
            }
            call.finish(ending)
        }
        deciding[request.sequence] = job
        job.invokeOnCompletion { deciding.remove(request.sequence, job) }
    }

    override fun cancelled(sequence: ULong) {
        // The engine gave up on the request (the client cancelled it): so does the lambda.
        deciding.remove(sequence)?.cancel()
    }

    private companion object {
        val scope = CoroutineScope(SupervisorJob() + Dispatchers.Default)
        val log = LoggerFactory.getLogger("toolwire.middleware")
    }
}
