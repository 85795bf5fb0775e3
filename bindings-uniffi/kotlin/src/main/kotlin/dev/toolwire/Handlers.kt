// Kotlin conveniences over the generated bindings: lambdas as handlers, and exception
// messages (not class names) as the text of an error result.
package dev.toolwire

import kotlin.coroutines.cancellation.CancellationException

/**
 * Registers a tool whose handler is a suspending lambda, given the call's context and its
 * arguments as JSON text (already checked against the input schema).
 *
 * An exception the lambda throws becomes an `isError` result carrying the exception's message;
 * cancelling the call (by the client, a deadline or shutdown) cancels the coroutine.
 */
fun Server.tool(
    definition: ToolDefinition,
    handler: suspend (context: CallContext, argumentsJson: String) -> ToolResult,
) = tool(definition, SuspendingHandler(handler))

/**
 * Registers a tool whose handler is a plain blocking lambda. Each call runs on a thread of the
 * engine's blocking pool, so the lambda may block; poll [CallContext.isCancelled] in long work.
 */
fun Server.blockingTool(
    definition: ToolDefinition,
    handler: (context: CallContext, argumentsJson: String) -> ToolResult,
) = blockingTool(definition, PlainBlockingHandler(handler))

/** The text of any [ToolwireException] variant (its `message` reads `detail=...`). */
val ToolwireException.detail: String
    get() = when (this) {
        is ToolwireException.Registration -> detail
        is ToolwireException.Capability -> detail
        is ToolwireException.Client -> detail
        is ToolwireException.Timeout -> detail
        is ToolwireException.Cancelled -> detail
        is ToolwireException.Closed -> detail
        is ToolwireException.Transport -> detail
        is ToolwireException.InvalidArgument -> detail
        is ToolwireException.Handler -> detail
        is ToolwireException.Internal -> detail
    }

private class SuspendingHandler(
    private val body: suspend (CallContext, String) -> ToolResult,
) : ToolHandler {
    override suspend fun call(context: CallContext, argumentsJson: String): ToolResult =
        try {
            body(context, argumentsJson)
        } catch (e: CancellationException) {
            throw e
        } catch (e: ToolwireException) {
            throw e
        } catch (e: Exception) {
            throw ToolwireException.Handler(failureText(e))
        }
}

private class PlainBlockingHandler(
    private val body: (CallContext, String) -> ToolResult,
) : BlockingToolHandler {
    override fun call(context: CallContext, argumentsJson: String): ToolResult =
        try {
            body(context, argumentsJson)
        } catch (e: ToolwireException) {
            throw e
        } catch (e: Exception) {
            throw ToolwireException.Handler(failureText(e))
        }
}

/** What the model sees of a failure: the message, or the exception's type when it has none. */
private fun failureText(e: Exception): String =
    e.message?.takeIf { it.isNotBlank() } ?: e.javaClass.simpleName
