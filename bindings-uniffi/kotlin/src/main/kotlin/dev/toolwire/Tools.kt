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
 * The lambda starts on the thread that serves (with [runStdio]; mounted in Ktor, the web
 * server's thread answering the request, when its body came whole and the server's stores
 * are in-process; otherwise `toolwire-dispatch`) and continues on `Dispatchers.Default` once it
 * suspends. An exception it throws becomes an `isError` result
 * carrying the exception's message; cancelling the call (by the client, a deadline or
 * shutdown) cancels the coroutine.
 */
fun Server.tool(
    definition: ToolDefinition,
    handler: suspend (context: CallContext, argumentsJson: String) -> ToolResult,
) {
    EngineLogs.start()
    val lifespan = Lifespan.of(this)
    // The engine runs the call once the lifespan runs (started first if need be).
    val body: suspend (CallContext, String) -> ToolResult = { context, argumentsJson ->
        if (lifespan.hooks == null) {
            handler(context, argumentsJson)
        } else {
            (context as? QueuedCallContext)?.lifespan = lifespan
            lifespan.reachable { handler(context, argumentsJson) }
        }
    }
    NativeLink.queuedTool(this, definition, Dispatch.register(Dispatch.Handler.Suspending(body)))
}

/**
 * Registers a tool whose handler is a plain blocking lambda. Each call runs on
 * `Dispatchers.IO`, so the lambda may block; poll [CallContext.isCancelled] in long work.
 */
fun Server.blockingTool(
    definition: ToolDefinition,
    handler: (context: CallContext, argumentsJson: String) -> ToolResult,
) {
    EngineLogs.start()
    val lifespan = Lifespan.of(this)
    val body: (CallContext, String) -> ToolResult = { context, argumentsJson ->
        (context as? QueuedCallContext)?.lifespan = lifespan
        handler(context, argumentsJson)
    }
    NativeLink.queuedTool(this, definition, Dispatch.register(Dispatch.Handler.Blocking(body)))
}

/**
 * Serves stdin/stdout on the calling thread until stdin ends, [Server.stop] is called or the
 * JVM shuts down, then returns once the calls in flight have finished. Handlers registered
 * with [tool] start on this thread, so a tool that answers at once costs no thread hop.
 * `System.out` is pointed at `System.err` meanwhile: stdout belongs to the protocol. Throws
 * [ToolwireException.Busy] while stdin is already served in this process. The server's
 * [lifespan] starts first (its failure is thrown here) and stops after serving has ended.
 */
fun Server.runStdio() {
    EngineLogs.start()
    // The lifespan first (the host-thread loop does not hold it): a failure to start is this
    // call's exception, before stdin is read.
    val hold = Lifespan.of(this).holdBlocking(this)
    try {
        runStdioLoop(this)
    } finally {
        hold.letGoBlocking()
    }
}

private fun runStdioLoop(server: Server) {
    val driver = NativeLink.openStdio(server)
    val stdout = System.out
    System.setOut(System.err)
    try {
        servingUntilShutdown("toolwire-stdio-shutdown", stop = { NativeLink.stopStdio(driver) }) { Dispatch.serve(driver) }
    } finally {
        System.setOut(stdout)
        // Serving frees the loop; this frees it (and stdin's claim) if serving never started.
        NativeLink.closeStdio(driver)
    }
}

/**
 * Runs [serve] on this thread; if the JVM shuts down meanwhile (SIGTERM, SIGINT), [stop] is
 * called and the shutdown waits (up to 10 s) for [serve] to return, so calls in flight answer.
 */
private inline fun servingUntilShutdown(name: String, noinline stop: () -> Unit, serve: () -> Unit) {
    val finished = java.util.concurrent.CountDownLatch(1)
    val hook = Thread({
        stop()
        finished.await(10, java.util.concurrent.TimeUnit.SECONDS)
    }, name)
    Runtime.getRuntime().addShutdownHook(hook)
    try {
        serve()
    } finally {
        finished.countDown()
        try {
            Runtime.getRuntime().removeShutdownHook(hook)
        } catch (_: IllegalStateException) {
            // The JVM is already shutting down: the hook is running.
        }
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
        is ToolwireException.Busy -> detail
        is ToolwireException.InvalidArgument -> detail
        is ToolwireException.Handler -> detail
        is ToolwireException.Protocol -> detail
        is ToolwireException.NotFound -> detail
        is ToolwireException.InputRequired -> detail
        is ToolwireException.Rpc -> detail
        is ToolwireException.Internal -> detail
    }

/**
 * 2026-07-28: the client's input is needed first. [CallContext.elicit], [CallContext.sample]
 * and [CallContext.listRoots] throw it in a tool registered with [tool] or [blockingTool] when
 * the answer is not in this round. Let it end the handler: the engine asks the client, who
 * calls again, and the same line then has its answer. It is a [CancellationException], so
 * coroutine code passes it on; the engine asks even if a handler swallows it. Code before the
 * question runs again each round: put side effects after the questions.
 */
class InputRequiredException(message: String) : kotlin.coroutines.cancellation.CancellationException(message)

/**
 * Registers a resource (a fixed URI) or a resource template (a URI with `{variables}`) read by
 * a suspending lambda; throw [ToolwireException.NotFound] for a URI that does not exist. The
 * lambda's receiver is the read's [RequestContext], a [CallContext] as a tool's (progress, log,
 * cancellation, client info, `lifespanContext<T>()`), with the 2026-07-28 round's
 * `inputResponsesJson` and `requestState` (what the client sent back to an earlier
 * [ToolwireException.InputRequired]). A read the client cancels is not answered, and its
 * coroutine is cancelled.
 */
fun Server.resource(
    definition: ResourceDefinition,
    read: suspend RequestContext.(uri: String, variables: Map<String, String>) -> List<ResourceContent>,
) {
    val lifespan = Lifespan.of(this)
    resource(definition, object : ResourceReader {
        override suspend fun read(context: CallContext, uri: String, variables: Map<String, String>, round: Round) =
            RequestContext.run(context, round, lifespan) { read(uri, variables) }
    })
}

/**
 * Registers a prompt rendered by a suspending lambda from its (checked) arguments; its
 * receiver is the request's [RequestContext], as for [resource].
 */
fun Server.prompt(
    definition: PromptDefinition,
    render: suspend RequestContext.(arguments: Map<String, String>) -> PromptRendering,
) {
    val lifespan = Lifespan.of(this)
    prompt(definition, object : PromptRenderer {
        override suspend fun render(context: CallContext, arguments: Map<String, String>, round: Round) =
            RequestContext.run(context, round, lifespan) { render(arguments) }
    })
}

/**
 * Completes the arguments of the prompt [promptName]: suggestions for [argument] from its
 * partial `value`, `others` being the arguments already chosen. The lambda's receiver is the
 * request's [RequestContext], as for [resource].
 */
fun Server.promptCompletion(
    promptName: String,
    complete: suspend RequestContext.(argument: String, value: String, others: Map<String, String>) -> List<String>,
) = promptCompletion(promptName, completer(Lifespan.of(this), complete))

/** Completes the variables of the resource template [uriTemplate], as [promptCompletion]. */
fun Server.templateCompletion(
    uriTemplate: String,
    complete: suspend RequestContext.(argument: String, value: String, others: Map<String, String>) -> List<String>,
) = templateCompletion(uriTemplate, completer(Lifespan.of(this), complete))

/** A completion has no round of its own. */
private val noRound = Round("{}", null)

private fun completer(
    lifespan: Lifespan,
    complete: suspend RequestContext.(String, String, Map<String, String>) -> List<String>,
) = object : ArgumentCompleter {
    override suspend fun complete(context: CallContext, argument: String, value: String, others: Map<String, String>) =
        RequestContext.run(context, noRound, lifespan) { complete(argument, value, others) }
}

/**
 * Serves Streamable HTTP at `http://host:port/mcp` on the calling thread until the JVM shuts
 * down (SIGTERM, Ctrl-C) or the returned server is stopped elsewhere; [onListening] gets the
 * URL once the port is bound. Handlers registered with [tool] run as they do for stdio. The
 * server's [lifespan] starts first (its failure is thrown here) and stops after serving has
 * ended.
 */
fun Server.runHttp(
    host: String = "127.0.0.1",
    port: UShort = 8000u,
    options: HttpServerOptions? = null,
    validator: BearerTokenValidator? = null,
    onListening: (url: String) -> Unit = {},
) {
    EngineLogs.start()
    // serveHttp holds the lifespan itself, and its server lets go once its sessions have ended.
    val lifespan = Lifespan.of(this)
    val http = lifespan.startFailureOf { serveHttp(host, port, options, validator) }
    serveHttpUntilShutdown(http, onListening)
}

/** Runs [http] until it stops, then waits for its sessions and the lifespan's stop. */
private fun serveHttpUntilShutdown(http: HttpServer, onListening: (url: String) -> Unit) {
    try {
        servingUntilShutdown("toolwire-http-shutdown", stop = http::stop) {
            onListening(http.url())
            http.waitBlocking()
        }
    } finally {
        http.destroy()
    }
}

/**
 * Decides per request who sees which tools, resources, templates and prompts, beyond their
 * `requiredScopes` / `requiredTags`: [rule] returns whether the viewer sees the item. It runs on
 * a pool thread (it may block) for each item the requirements allowed; one that throws hides
 * what it was asked about in that request. A hidden item is left out of lists and answers as
 * unknown.
 */
fun Server.visibleWhen(rule: (item: CatalogItem, viewer: Viewer) -> Boolean) =
    visibleWhen(object : VisibilityRule {
        override fun visible(item: CatalogItem, viewer: Viewer) = rule(item, viewer)
    })
