package dev.toolwire

import com.sun.jna.Callback
import com.sun.jna.Native
import com.sun.jna.Pointer
import java.nio.ByteBuffer
import java.nio.ByteOrder

/** One call for a Kotlin handler to run: its id, its handler's key and its arguments. */
internal class PendingCall(val callId: Long, val toolKey: Int, val argumentsJson: String)

/** What a thread takes at once: calls to run, and ids of calls taken earlier that were cancelled. */
internal class Work(val calls: List<PendingCall>, val cancelled: List<Long>)

/** One of the engine's log records: its level (1 error … 5 trace), target and message. */
internal class EngineLogRecord(val level: Int, val target: String, val message: String)

/** A call's result, handed back. */
internal class Completion(val callId: Long, val result: ToolResult)

/**
 * Starts a queued call's handler on the calling thread: the engine calls it on an app's thread
 * that is inside it (a mounted endpoint answering a request in place), with the call's id, its
 * handler's key and its arguments' JSON text (UTF-8, [length] bytes at [arguments]). The result
 * goes back with [NativeLink.complete], before returning when the handler finished at once.
 */
internal fun interface HostRunner : Callback {
    fun invoke(callId: Long, toolKey: Int, arguments: Pointer, length: Long)
}

/**
 * The wrapper's private interface to the library: plain C functions beside UniFFI (see the
 * crate's jvm_abi.rs), bound with JNA direct mapping. Queued tools, the stdio loop run on a
 * Kotlin thread and the call queue are plumbing, so they are not in the generated API; and a
 * batch of calls costs one downcall with no native allocations.
 *
 * Values UniFFI knows (a [Server], a [ToolDefinition], a [ToolResult], an error) cross in
 * UniFFI's own serialised form, written and read by the generated converters.
 */
internal object NativeLink {
    init {
        // JNA set up as for the generated bindings, whichever of the two touches it first.
        NativeLibraryLocation.prepare()
        // The same library the generated bindings load (and the same override property).
        Native.register(NativeLink::class.java, NativeLibraryLocation.library)
    }

    @JvmStatic private external fun toolwire_queued_tool(
        server: ByteBuffer, serverLen: Long, definition: ByteBuffer, definitionLen: Long,
        toolKey: Int, error: ByteBuffer, errorCapacity: Long,
    ): Long

    @JvmStatic private external fun toolwire_stdio_open(server: ByteBuffer, serverLen: Long, error: ByteBuffer, errorCapacity: Long): Long

    @JvmStatic private external fun toolwire_stdio_stop(driverId: Long)

    @JvmStatic private external fun toolwire_stdio_close(driverId: Long)

    @JvmStatic private external fun toolwire_driver_next(
        driverId: Long, input: ByteBuffer?, inputLen: Long, output: ByteBuffer, outputCapacity: Long,
    ): Long

    @JvmStatic private external fun toolwire_queue_take(timeoutMs: Long, output: ByteBuffer, outputCapacity: Long): Long

    @JvmStatic private external fun toolwire_queue_complete(input: ByteBuffer, inputLen: Long)

    @JvmStatic private external fun toolwire_call_context(callId: Long): Long

    @JvmStatic private external fun toolwire_host_runner(runner: HostRunner): Int

    @JvmStatic private external fun toolwire_http_endpoint_keep(endpoint: ByteBuffer, endpointLen: Long): Long

    @JvmStatic private external fun toolwire_http_endpoint_forget(endpointId: Long)

    @JvmStatic private external fun toolwire_http_answer(
        endpointId: Long, request: ByteBuffer, requestLen: Long, output: ByteBuffer, outputCapacity: Long,
    ): Long

    @JvmStatic private external fun toolwire_http_kept(output: ByteBuffer, outputCapacity: Long): Long

    @JvmStatic private external fun toolwire_logs_level(level: Int)

    @JvmStatic private external fun toolwire_logs_next(timeoutMs: Long, output: ByteBuffer, outputCapacity: Long): Long

    @JvmStatic private external fun toolwire_logs_close()

    private const val ENDED = -1L
    private const val TEXT: Byte = 0
    private const val STRUCTURED: Byte = 1
    private const val ERROR: Byte = 2
    private const val SERIALISED: Byte = 3
    private const val ERROR_CAPACITY = 64 * 1024

    /** Registers a tool whose calls are queued for the Kotlin handler named [toolKey]. */
    fun queuedTool(server: Server, definition: ToolDefinition, toolKey: Int) {
        val serverBytes = serialised(FfiConverterTypeServer.allocationSize(server)) { FfiConverterTypeServer.write(server, it) }
        val definitionBytes = serialised(FfiConverterTypeToolDefinition.allocationSize(definition)) {
            FfiConverterTypeToolDefinition.write(definition, it)
        }
        val error = errorBuffer.get()
        val outcome = toolwire_queued_tool(
            serverBytes, serverBytes.limit().toLong(), definitionBytes, definitionBytes.limit().toLong(),
            toolKey, error, error.capacity().toLong(),
        )
        if (outcome != 0L) throw refusal(outcome, error)
    }

    /**
     * Where a refusal's error is written, one per thread and kept: a new one per registration
     * zeroed 64 KiB of fresh memory for each tool, a visible part of a start with many tools.
     */
    private val errorBuffer = ThreadLocal.withInitial { direct(ERROR_CAPACITY) }

    /** Opens stdio for [server], served from the thread that then calls [serve]. */
    fun openStdio(server: Server): Long {
        val serverBytes = serialised(FfiConverterTypeServer.allocationSize(server)) { FfiConverterTypeServer.write(server, it) }
        val error = errorBuffer.get()
        val id = toolwire_stdio_open(serverBytes, serverBytes.limit().toLong(), error, error.capacity().toLong())
        if (id <= 0L) throw refusal(id, error)
        return id
    }

    /** Ends the stdio loop [driverId] as end of input would, from any thread. */
    fun stopStdio(driverId: Long) = toolwire_stdio_stop(driverId)

    /**
     * Serves the stdio loop [driverId] on the calling thread until its session ends; [run]
     * starts the calls of each batch and puts results of handlers that finished at once in its
     * list. The loop is freed on return.
     */
    fun serve(driverId: Long, run: (Work, MutableList<Completion>) -> Unit) {
        var input = direct(64 * 1024)
        var output = direct(256 * 1024)
        val done = ArrayList<Completion>()
        try {
            while (true) {
                input = encode(done, input)
                done.clear()
                // JNA passes a buffer's address at its position: both start at 0.
                val inputLength = input.position().toLong()
                input.flip()
                output.clear()
                var written = toolwire_driver_next(driverId, input, inputLength, output, output.capacity().toLong())
                while (written <= -2L) {
                    output = direct((-2L - written).toInt())
                    written = toolwire_driver_next(driverId, null, 0, output, output.capacity().toLong())
                }
                if (written == ENDED) return
                output.limit(written.toInt())
                run(decode(output), done)
            }
        } finally {
            toolwire_stdio_close(driverId)
        }
    }

    /** Waits up to [timeoutMs] for queued calls of the sessions the engine serves itself. */
    fun take(timeoutMs: Long): Work {
        var output = takeBuffer.get()
        output.clear()
        var written = toolwire_queue_take(timeoutMs, output, output.capacity().toLong())
        while (written <= -2L) {
            output = direct((-2L - written).toInt())
            takeBuffer.set(output)
            written = toolwire_queue_take(0, output, output.capacity().toLong())
        }
        if (written < 0L) return Work(emptyList(), emptyList())
        output.limit(written.toInt())
        return decode(output)
    }

    private val takeBuffer = ThreadLocal.withInitial { direct(256 * 1024) }

    /** Hands results of queued calls back, from any thread. */
    fun complete(done: List<Completion>) {
        if (done.isEmpty()) return
        // A direct buffer per thread, kept: allocating one per result would cost a cleaner each.
        val input = encode(done, completeBuffer.get())
        // Kept up to a bound: one large result must not hold its size in every thread for good.
        if (input.capacity() <= KEPT_OUTPUT_BYTES) completeBuffer.set(input)
        val length = input.position().toLong()
        input.flip()
        toolwire_queue_complete(input, length)
    }

    private val completeBuffer = ThreadLocal.withInitial { direct(4 * 1024) }

    /** Frees the stdio loop [driverId] without serving it (for a caller that opened it only to test). */
    fun closeStdio(driverId: Long) = toolwire_stdio_close(driverId)

    /** The context of the running queued call [callId], or null once it has ended. */
    fun callContext(callId: Long): CallContext? {
        val handle = toolwire_call_context(callId)
        return if (handle == 0L) null else FfiConverterTypeCallContext.lift(handle)
    }

    /** Kept for the process's life: the engine holds the native entry JNA made for it. */
    private var hostRunner: HostRunner? = null

    /** Registers [runner] as the engine's way to start queued calls on the thread inside it (once). */
    @Synchronized
    fun registerHostRunner(runner: HostRunner) {
        if (hostRunner != null) return
        hostRunner = runner
        toolwire_host_runner(runner)
    }

    /** Keeps [endpoint] for [answerWhole]; its id, until [forgetEndpoint]. */
    fun keepEndpoint(endpoint: HttpEndpoint): Long {
        val bytes = serialised(FfiConverterTypeHttpEndpoint.allocationSize(endpoint)) { FfiConverterTypeHttpEndpoint.write(endpoint, it) }
        val id = toolwire_http_endpoint_keep(bytes, bytes.limit().toLong())
        if (id == 0L) throw ToolwireException.Internal("the library refused the endpoint")
        return id
    }

    /** Lets go of an endpoint [keepEndpoint] kept. */
    fun forgetEndpoint(endpointId: Long) = toolwire_http_endpoint_forget(endpointId)

    /**
     * Answers a request whose body is here whole with the kept endpoint [endpointId], in one
     * downcall: the whole answer, or the exchange it goes on as. Throws the engine's refusal
     * (a bad method or header field is [ToolwireException.InvalidArgument]).
     */
    fun answerWhole(
        endpointId: Long,
        method: String,
        target: String,
        headers: List<Pair<String, String>>,
        body: ByteArray,
        peer: String?,
    ): WholeAnswer {
        // A handler started inside the call below may answer a request of its own on this
        // thread: that one gets buffers of its own.
        val buffers = wholeBuffers.get().takeUnless { it.busy } ?: WholeBuffers()
        buffers.busy = true
        try {
            val request = buffers.request(method, target, peer, headers, body)
            val length = request.position().toLong()
            request.flip()
            var output = buffers.output
            output.clear()
            var written = toolwire_http_answer(endpointId, request, length, output, output.capacity().toLong())
            // Long.MIN_VALUE is the library failing (a caught panic), not a size.
            while (written <= -2L && written != Long.MIN_VALUE) {
                output = direct((-2L - written).toInt())
                // Kept for the next request up to a bound: one large answer (a big resource)
                // must not hold its size in every web server thread for good.
                if (output.capacity() <= KEPT_OUTPUT_BYTES) buffers.output = output
                written = toolwire_http_kept(output, output.capacity().toLong())
            }
            if (written < 0L) return fail("the library failed to answer the request")
            output.limit(written.toInt())
            return when (output.get()) {
                WHOLE_COMPLETE -> {
                    val status = output.getShort().toInt() and 0xffff
                    val fields = List(output.getInt()) { HttpHeader(utf8(output), utf8(output)) }
                    val answer = ByteArray(output.getInt())
                    output.get(answer)
                    WholeAnswer.Complete(status, fields, answer)
                }
                WHOLE_GOES_ON -> WholeAnswer.GoesOn(FfiConverterTypeHttpExchange.lift(output.getLong()))
                else -> throw FfiConverterTypeToolwireError.read(output.slice().order(ByteOrder.BIG_ENDIAN))
            }
        } finally {
            buffers.busy = false
        }
    }

    private fun fail(detail: String): Nothing = throw ToolwireException.Internal(detail)

    /** What [answerWhole] answered. */
    sealed interface WholeAnswer {
        /** The whole answer: status, header fields in order, body. */
        class Complete(val status: Int, val headers: List<HttpHeader>, val body: ByteArray) : WholeAnswer

        /** The answer goes on through [exchange] (the caller closes it). */
        class GoesOn(val exchange: HttpExchange) : WholeAnswer
    }

    /** A thread's buffers for [answerWhole], kept: a request costs no native allocation. */
    private class WholeBuffers {
        var busy = false
        var input: ByteBuffer = direct(16 * 1024)
        var output: ByteBuffer = direct(16 * 1024)

        fun request(method: String, target: String, peer: String?, headers: List<Pair<String, String>>, body: ByteArray): ByteBuffer {
            val texts = ArrayList<ByteArray>(3 + 2 * headers.size)
            texts.add(method.toByteArray(Charsets.UTF_8))
            texts.add(target.toByteArray(Charsets.UTF_8))
            texts.add((peer ?: "").toByteArray(Charsets.UTF_8))
            for ((name, value) in headers) {
                texts.add(name.toByteArray(Charsets.UTF_8))
                texts.add(value.toByteArray(Charsets.UTF_8))
            }
            val size = 4 * (texts.size + 2) + texts.sumOf { it.size } + body.size
            if (input.capacity() < size) input = direct(maxOf(size, input.capacity() * 2))
            val out = input
            out.clear()
            for (i in 0 until 3) out.putInt(texts[i].size).put(texts[i])
            out.putInt(headers.size)
            for (i in 3 until texts.size) out.putInt(texts[i].size).put(texts[i])
            out.putInt(body.size).put(body)
            return out
        }
    }

    private val wholeBuffers = ThreadLocal.withInitial { WholeBuffers() }

    private const val KEPT_OUTPUT_BYTES = 1024 * 1024
    private const val WHOLE_COMPLETE: Byte = 0
    private const val WHOLE_GOES_ON: Byte = 1

    /** The most verbose level of the engine's logs to hand over: 1 error … 5 trace, 0 none. */
    fun logsLevel(level: Int) = toolwire_logs_level(level)

    /**
     * The engine's log records waiting, after up to [timeoutMs] for the first: empty when none
     * came, null once the logs are closed and drained. One thread calls it.
     */
    fun nextLogs(timeoutMs: Long): List<EngineLogRecord>? {
        var output = logsBuffer
        output.clear()
        var written = toolwire_logs_next(timeoutMs, output, output.capacity().toLong())
        while (written <= -2L) {
            output = direct((-2L - written).toInt())
            logsBuffer = output
            written = toolwire_logs_next(0, output, output.capacity().toLong())
        }
        if (written == ENDED) return null
        if (written <= 0L) return emptyList()
        output.limit(written.toInt())
        val count = output.getInt()
        return List(count) {
            val level = output.get().toInt()
            val target = utf8(output)
            EngineLogRecord(level, target, utf8(output))
        }
    }

    private var logsBuffer = direct(64 * 1024)

    private fun utf8(buffer: ByteBuffer): String {
        val bytes = ByteArray(buffer.getInt())
        buffer.get(bytes)
        return String(bytes, Charsets.UTF_8)
    }

    /** Ends the engine's logs for the process: [nextLogs] hands over what is left, then null. */
    fun closeLogs() = toolwire_logs_close()

    private fun direct(capacity: Int): ByteBuffer = ByteBuffer.allocateDirect(capacity).order(ByteOrder.LITTLE_ENDIAN)

    /** A value in UniFFI's serialised form (big-endian, as the generated converters write it). */
    private inline fun serialised(size: ULong, write: (ByteBuffer) -> Unit): ByteBuffer {
        val buffer = ByteBuffer.allocateDirect(size.toInt()).order(ByteOrder.BIG_ENDIAN)
        write(buffer)
        buffer.flip()
        return buffer
    }

    /** [serialised] as bytes, for a result copied into a batch (no direct buffer, no cleaner). */
    private inline fun serialisedBytes(size: ULong, write: (ByteBuffer) -> Unit): ByteArray {
        val buffer = ByteBuffer.allocate(size.toInt()).order(ByteOrder.BIG_ENDIAN)
        write(buffer)
        return buffer.array().copyOf(buffer.position())
    }

    private fun refusal(outcome: Long, error: ByteBuffer): ToolwireException {
        if (outcome == Long.MIN_VALUE || outcome >= 0L) {
            return ToolwireException.Internal("the library refused the call without saying why")
        }
        // Read through a view: the buffer is kept for the next call, at position 0.
        val written = error.duplicate().order(ByteOrder.BIG_ENDIAN)
        written.limit((-outcome).toInt())
        return FfiConverterTypeToolwireError.read(written)
    }

    /** Text, structured and error results go as text; others (content blocks) serialised. */
    private fun encode(done: List<Completion>, buffer: ByteBuffer): ByteBuffer {
        var out = buffer
        out.clear()
        out.putInt(0)
        for (completion in done) {
            val result = completion.result
            val (kind, bytes) = when (result) {
                is ToolResult.Text -> TEXT to result.text.toByteArray(Charsets.UTF_8)
                is ToolResult.Structured -> STRUCTURED to result.json.toByteArray(Charsets.UTF_8)
                is ToolResult.Error -> ERROR to result.detail.toByteArray(Charsets.UTF_8)
                else -> SERIALISED to serialisedBytes(FfiConverterTypeToolResult.allocationSize(result)) {
                    FfiConverterTypeToolResult.write(result, it)
                }
            }
            if (out.remaining() < 13 + bytes.size) {
                val bigger = direct(maxOf(out.capacity() * 2, out.position() + 13 + bytes.size))
                out.flip()
                bigger.put(out)
                out = bigger
            }
            out.putLong(completion.callId)
            out.put(kind)
            out.putInt(bytes.size)
            out.put(bytes)
        }
        out.putInt(0, done.size)
        return out
    }

    private fun decode(buffer: ByteBuffer): Work {
        val callCount = buffer.getInt()
        val calls = ArrayList<PendingCall>(callCount)
        for (i in 0 until callCount) {
            val callId = buffer.getLong()
            val toolKey = buffer.getInt()
            val length = buffer.getInt()
            val bytes = ByteArray(length)
            buffer.get(bytes)
            calls.add(PendingCall(callId, toolKey, String(bytes, Charsets.UTF_8)))
        }
        val cancelledCount = buffer.getInt()
        val cancelled = List(cancelledCount) { buffer.getLong() }
        return Work(calls, cancelled)
    }
}
