// The redis-server GuideReplicasTest.kt (docs/guides/replicas.md's test) starts.
import java.net.InetAddress
import java.net.InetSocketAddress
import java.net.ServerSocket
import java.net.Socket
import java.nio.file.Files

/** A redis-server of the test's own, on a free loopback port (Debian's `redis-server` on PATH). */
class LocalRedis : AutoCloseable {
    private val port = ServerSocket(0, 1, InetAddress.getLoopbackAddress()).use { it.localPort }
    private val dir = Files.createTempDirectory("toolwire-guide-redis-")
    private val process = ProcessBuilder("redis-server", "--port", "$port", "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
        .directory(dir.toFile())
        .redirectOutput(ProcessBuilder.Redirect.DISCARD)
        .start()
    val url = "redis://127.0.0.1:$port/0"

    init {
        val deadline = System.nanoTime() + 10_000_000_000L
        while (!answers()) { // ready when it answers
            if (!process.isAlive || System.nanoTime() > deadline) {
                close()
                error("redis-server did not start")
            }
            Thread.onSpinWait()
        }
    }

    private fun answers(): Boolean = try {
        Socket().use { socket ->
            socket.connect(InetSocketAddress("127.0.0.1", port), 500)
            socket.soTimeout = 500
            socket.getOutputStream().write("PING\r\n".toByteArray())
            val answer = ByteArray(5)
            socket.getInputStream().read(answer) == 5 && String(answer) == "+PONG"
        }
    } catch (_: java.io.IOException) {
        false
    }

    override fun close() {
        process.destroyForcibly().waitFor()
        dir.toFile().deleteRecursively()
    }
}

