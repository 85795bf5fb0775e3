package dev.toolwire

/**
 * The [CallContext] a queued tool's handler gets: the engine's context object is fetched on
 * first use only (most handlers never touch it, and an object per call would cost a finalizer
 * and two downcalls). Once the call has ended, the context reads as cancelled, reports nothing
 * and refuses requests to the client.
 */
internal class QueuedCallContext(private val callId: Long) : CallContext(NoHandle) {
    @Volatile
    private var fetched = false

    /** The lifespan of the tool's server, when it has one (`context.lifespanContext<T>()`). */
    @Volatile
    var lifespan: Lifespan? = null

    private val real: CallContext? by lazy {
        fetched = true
        NativeLink.callContext(callId)
    }

    private fun live(): CallContext = real ?: throw ToolwireException.Closed("the call has ended")

    /** Frees the engine's context object now, if one was fetched. */
    fun release() {
        if (fetched) real?.destroy()
    }

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
    override fun wantsProgress() = real?.wantsProgress() ?: false
    override fun progress(progress: Double, total: Double?, message: String?) =
        real?.progress(progress, total, message) ?: false
    override fun log(level: LogLevel, message: String, logger: String?) = real?.log(level, message, logger) ?: false
    override fun logJson(level: LogLevel, dataJson: String, logger: String?) =
        real?.logJson(level, dataJson, logger) ?: false
    override fun closeSseStream() {
        real?.closeSseStream()
    }
    override fun isCancelled() = real?.isCancelled() ?: true
    override suspend fun cancelled() {
        real?.cancelled()
    }
    override suspend fun sample(paramsJson: String, timeoutMs: ULong?) = asking { live().sample(paramsJson, timeoutMs) }
    override suspend fun elicit(paramsJson: String, timeoutMs: ULong?) = asking { live().elicit(paramsJson, timeoutMs) }
    override suspend fun listRoots(timeoutMs: ULong?) = asking { live().listRoots(timeoutMs) }
    override suspend fun askAll(questions: List<Question>, timeoutMs: ULong?) =
        asking { live().askAll(questions, timeoutMs) }

    /** The engine's "ask the client first" as Kotlin's own signal, a [CancellationException]. */
    private inline fun <T> asking(question: () -> T): T =
        try {
            question()
        } catch (e: ToolwireException.InputRequired) {
            throw InputRequiredException(e.detail)
        }
    override suspend fun request(method: String, paramsJson: String, timeoutMs: ULong?) =
        live().request(method, paramsJson, timeoutMs)

    override fun destroy() = release()
}
