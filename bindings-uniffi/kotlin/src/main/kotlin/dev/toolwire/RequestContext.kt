package dev.toolwire

/**
 * The context of a resource read, a prompt or a completion: the receiver (`this`) of the
 * lambdas given to [resource], [prompt], [promptCompletion] and [templateCompletion].
 *
 * It is a [CallContext], the type a tool's handler gets, so the same calls work: `progress(…)`
 * (sent to the request's progress token), `log(…)`, `isCancelled()` and `cancelled()` (a
 * cancelled read or render is not answered, and its coroutine is cancelled), `clientInfo()`,
 * `protocolVersion()`, `requestId()`, `lifespanContext<T>()`, and the requests back to the
 * client. `toolName()` names what is handled: the URI read, the prompt, the argument completed.
 * In the 2026-07-28 era, client info and capabilities are the request's own.
 *
 * Why a receiver: the official Kotlin SDK hands its handlers their connection the same way
 * (`suspend ClientConnection.(ReadResourceRequest) -> …`), and these lambdas already had one, the
 * request's [Round], whose properties stay here ([inputResponsesJson], [requestState]), so
 * lambdas written before keep compiling unchanged.
 *
 * Once the handler has returned, the context reads as cancelled, reports nothing and refuses
 * requests to the client (as a tool's).
 */
class RequestContext internal constructor(
    private val real: CallContext,
    /** The 2026-07-28 round: what the client sent back to an earlier [ToolwireException.InputRequired]. */
    val round: Round,
    internal val lifespan: Lifespan,
) : CallContext(NoHandle) {
    /** The round's answers, JSON text by key (`{}` if none), as the [Round] receiver had it. */
    val inputResponsesJson: String get() = round.inputResponsesJson

    /** The state the handler returned last round, verified by the engine, as the [Round] receiver had it. */
    val requestState: String? get() = round.requestState

    @Volatile
    private var ended = false

    /** The request is over: frees the engine's context object. */
    internal fun end() {
        ended = true
        real.destroy()
    }

    private fun live(): CallContext = if (ended) throw ToolwireException.Closed("the request has ended") else real

    override fun requestId() = live().requestId()
    override fun toolName() = live().toolName()
    override fun protocolVersion() = live().protocolVersion()
    override fun clientInfo() = live().clientInfo()
    override fun clientInfoJson() = live().clientInfoJson()
    override fun clientCapabilitiesJson() = live().clientCapabilitiesJson()
    override fun clientExtensionJson(id: String) = live().clientExtensionJson(id)
    override fun clientRendersApps() = live().clientRendersApps()
    override fun inputResponsesJson() = live().inputResponsesJson()
    override fun requestState() = live().requestState()
    override fun traceContext() = live().traceContext()
    override fun wantsProgress() = !ended && real.wantsProgress()
    override fun progress(progress: Double, total: Double?, message: String?) =
        !ended && real.progress(progress, total, message)
    override fun log(level: LogLevel, message: String, logger: String?) = !ended && real.log(level, message, logger)
    override fun logJson(level: LogLevel, dataJson: String, logger: String?) =
        !ended && real.logJson(level, dataJson, logger)
    override fun closeSseStream() {
        if (!ended) real.closeSseStream()
    }
    override fun isCancelled() = ended || real.isCancelled()
    override suspend fun cancelled() {
        if (!ended) real.cancelled()
    }
    override suspend fun sample(paramsJson: String, timeoutMs: ULong?) = asking { live().sample(paramsJson, timeoutMs) }
    override suspend fun elicit(paramsJson: String, timeoutMs: ULong?) = asking { live().elicit(paramsJson, timeoutMs) }
    override suspend fun listRoots(timeoutMs: ULong?) = asking { live().listRoots(timeoutMs) }
    override suspend fun askAll(questions: List<Question>, timeoutMs: ULong?) =
        asking { live().askAll(questions, timeoutMs) }

    /** As in a tool: the engine's "ask the client first" as [InputRequiredException]. */
    private inline fun <T> asking(question: () -> T): T =
        try {
            question()
        } catch (e: ToolwireException.InputRequired) {
            throw InputRequiredException(e.detail)
        }
    override suspend fun request(method: String, paramsJson: String, timeoutMs: ULong?) =
        live().request(method, paramsJson, timeoutMs)

    /** The engine's object is freed when the request ends; nothing to do before. */
    override fun destroy() {}

    override fun toString() = "RequestContext(round=$round)"

    internal companion object {
        /**
         * Runs [block] with the request's context, where [lifespanContext] finds the server's
         * lifespan (the engine let the request in once it runs), then frees it.
         */
        suspend fun <R> run(context: CallContext, round: Round, lifespan: Lifespan, block: suspend RequestContext.() -> R): R {
            val request = RequestContext(context, round, lifespan)
            try {
                return lifespan.reachable { request.block() }
            } catch (e: InputRequiredException) {
                // Back to the engine's own signal: it asks the client what this round recorded.
                throw ToolwireException.InputRequired(e.message ?: "input required", null, null)
            } finally {
                request.end()
            }
        }
    }
}
