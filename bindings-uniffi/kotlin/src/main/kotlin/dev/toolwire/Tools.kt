// Kotlin's way in: tools as lambdas, served from the calling thread.
//
// A tool registered here is a "queued" tool: the engine queues its calls and a Kotlin thread
// takes them in batches with one downcall, runs the lambdas, and hands the results back in
// batches (see Dispatch.kt). Calling into the JVM from Rust threads instead would attach
// threads and hop dispatchers on every call.
package dev.toolwire

/**
 * Registers a tool whose handler is a suspending lambda, given the call's context and its
 * arguments as JSON text (already checked against the input schema).
 *
 * The lambda starts on the thread that serves (with [runStdio]) and continues on
 * `Dispatchers.Default` once it suspends. An exception it throws becomes an `isError` result
 * carrying the exception's message; cancelling the call (by the client, a deadline or
 * shutdown) cancels the coroutine.
 */
fun Server.tool(
    definition: ToolDefinition,
    handler: suspend (context: CallContext, argumentsJson: String) -> ToolResult,
) = queuedTool(definition, Dispatch.register(Dispatch.Handler.Suspending(handler)))

/**
 * Registers a tool whose handler is a plain blocking lambda. Each call runs on
 * `Dispatchers.IO`, so the lambda may block; poll [CallContext.isCancelled] in long work.
 */
fun Server.blockingTool(
    definition: ToolDefinition,
    handler: (context: CallContext, argumentsJson: String) -> ToolResult,
) = queuedTool(definition, Dispatch.register(Dispatch.Handler.Blocking(handler)))

/**
 * Serves stdin/stdout on the calling thread until stdin ends (or the JVM shuts down), then
 * returns once the calls in flight have finished. Handlers registered with [tool] start on
 * this thread, so a tool that answers at once costs no thread hop. `System.out` is pointed at
 * `System.err` meanwhile: stdout belongs to the protocol.
 */
fun Server.runStdio() {
    val driver = stdioDriver()
    val finished = java.util.concurrent.CountDownLatch(1)
    // SIGTERM/SIGINT: stop reading, let calls in flight answer, then let the JVM go.
    val hook = Thread({
        driver.stop()
        finished.await(10, java.util.concurrent.TimeUnit.SECONDS)
    }, "toolwire-stdio-shutdown")
    Runtime.getRuntime().addShutdownHook(hook)
    val stdout = System.out
    System.setOut(System.err)
    try {
        Dispatch.serve(driver)
    } finally {
        System.setOut(stdout)
        finished.countDown()
        try {
            Runtime.getRuntime().removeShutdownHook(hook)
        } catch (_: IllegalStateException) {
            // The JVM is already shutting down: the hook is running.
        }
        driver.destroy()
    }
}

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
