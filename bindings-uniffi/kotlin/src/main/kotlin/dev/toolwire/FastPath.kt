package dev.toolwire

import com.sun.jna.Native
import java.nio.ByteBuffer
import java.nio.ByteOrder

/**
 * The stdio driver's loop through one plain C function (`toolwire_driver_next`, see the
 * crate's fast_path.rs): primitives and two reused direct buffers, so a batch of calls costs
 * one JNA downcall and no native allocations.
 */
internal object FastPath {
    init {
        // The same library the generated bindings load (and the same override property).
        val name = System.getProperty("uniffi.component.toolwire.libraryOverride") ?: "toolwire_uniffi"
        Native.register(FastPath::class.java, name)
    }

    @JvmStatic
    private external fun toolwire_driver_next(
        driverId: Long,
        input: ByteBuffer?,
        inputLen: Long,
        output: ByteBuffer,
        outputCapacity: Long,
    ): Long

    private const val ENDED = -1L
    private const val TEXT: Byte = 0
    private const val STRUCTURED: Byte = 1
    private const val ERROR: Byte = 2

    /** Serves [driver] on the calling thread; [run] starts the calls of each batch. */
    fun serve(driver: StdioDriver, run: (Work, MutableList<Completion>) -> Unit) {
        val id = driver.fastPathId().toLong()
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
                var written = toolwire_driver_next(id, input, inputLength, output, output.capacity().toLong())
                while (written <= -2L) {
                    output = direct((-2L - written).toInt())
                    written = toolwire_driver_next(id, null, 0, output, output.capacity().toLong())
                }
                if (written == ENDED) return
                output.limit(written.toInt())
                run(decode(output), done)
            }
        } finally {
            driver.releaseFastPath()
        }
    }

    private fun direct(capacity: Int): ByteBuffer = ByteBuffer.allocateDirect(capacity).order(ByteOrder.LITTLE_ENDIAN)

    /** Text, structured and error results go in the batch; content blocks take the general path. */
    private fun encode(done: List<Completion>, buffer: ByteBuffer): ByteBuffer {
        var out = buffer
        out.clear()
        out.putInt(0)
        var count = 0
        for (completion in done) {
            val (kind, text) = when (val result = completion.result) {
                is ToolResult.Text -> TEXT to result.text
                is ToolResult.Structured -> STRUCTURED to result.json
                is ToolResult.Error -> ERROR to result.detail
                is ToolResult.Content -> {
                    completeCalls(listOf(completion))
                    continue
                }
            }
            val bytes = text.toByteArray(Charsets.UTF_8)
            if (out.remaining() < 13 + bytes.size) {
                val bigger = direct(maxOf(out.capacity() * 2, out.position() + 13 + bytes.size))
                out.flip()
                bigger.put(out)
                out = bigger
            }
            out.putLong(completion.callId.toLong())
            out.put(kind)
            out.putInt(bytes.size)
            out.put(bytes)
            count++
        }
        out.putInt(0, count)
        return out
    }

    private fun decode(buffer: ByteBuffer): Work {
        val callCount = buffer.getInt()
        val calls = ArrayList<PendingCall>(callCount)
        for (i in 0 until callCount) {
            val callId = buffer.getLong().toULong()
            val toolKey = buffer.getInt().toUInt()
            val length = buffer.getInt()
            val bytes = ByteArray(length)
            buffer.get(bytes)
            calls.add(PendingCall(callId, toolKey, String(bytes, Charsets.UTF_8)))
        }
        val cancelledCount = buffer.getInt()
        val cancelled = List(cancelledCount) { buffer.getLong().toULong() }
        return Work(calls, cancelled)
    }
}
