// The engine's own logs, in SLF4J.
package dev.toolwire

import org.slf4j.Logger
import org.slf4j.LoggerFactory

/**
 * Routes the engine's own logs into SLF4J: each record is logged on the `toolwire` logger or
 * one under it (a target `toolwire::dispatch::router` on `toolwire.dispatch.router`; a target
 * outside the engine under `toolwire.` too), at the same level (error, warn, info, debug,
 * trace).
 *
 * The engine produces what the `toolwire` logger enables, read when routing starts, each time
 * [start] is called again, and then about once a second: configure the `toolwire` logger
 * before creating or starting the server for its level to count at once. The wrapper starts
 * it when a tool is registered with [tool] or [blockingTool] and when [runStdio] or [runHttp]
 * start; an app that uses only the generated API calls [start] itself.
 *
 * The engine queues its records (at most 1024 waiting; past that they are dropped and a
 * warning says how many), and a daemon thread, `toolwire-logs`, takes them and logs them: no
 * engine thread calls into the JVM to log. At JVM shutdown the records waiting are logged;
 * those the engine makes after shutdown began may be lost. Nothing goes to stdout.
 * `TOOLWIRE_LOG=toolwire=debug` also writes them to stderr, whatever SLF4J says.
 */
object EngineLogs {
    /** How long the thread waits for records before it reads the level again (ms). */
    private const val POLL_MS = 1_000L

    /** How long JVM shutdown waits for the records left to be logged (ms). */
    private const val EXIT_WAIT_MS = 2_000L

    private val root: Logger = LoggerFactory.getLogger("toolwire")

    @Volatile private var pump: Thread? = null

    /** Starts routing the engine's logs into SLF4J (once), and reads the `toolwire` logger's level. */
    @JvmStatic
    fun start() {
        followLevel()
        if (pump != null) return
        synchronized(this) {
            if (pump != null) return
            val thread = Thread(::drain, "toolwire-logs").apply { isDaemon = true }
            Runtime.getRuntime().addShutdownHook(
                Thread({
                    NativeLink.closeLogs()
                    thread.join(EXIT_WAIT_MS)
                }, "toolwire-logs-shutdown"),
            )
            thread.start()
            pump = thread
        }
    }

    /** Makes the engine produce what the `toolwire` logger enables now. */
    private fun followLevel() = NativeLink.logsLevel(levelOf(root))

    /** The most verbose level [logger] enables: 5 trace … 1 error, 0 none. */
    internal fun levelOf(logger: Logger): Int = when {
        logger.isTraceEnabled -> 5
        logger.isDebugEnabled -> 4
        logger.isInfoEnabled -> 3
        logger.isWarnEnabled -> 2
        logger.isErrorEnabled -> 1
        else -> 0
    }

    /** The logger of an engine target: `::` becomes `.`, and all are under `toolwire`. */
    internal fun loggerName(target: String): String {
        val name = target.replace("::", ".")
        return if (name == "toolwire" || name.startsWith("toolwire.")) name else "toolwire.$name"
    }

    private fun drain() {
        while (true) {
            val records = NativeLink.nextLogs(POLL_MS) ?: return
            for (record in records) {
                val logger = LoggerFactory.getLogger(loggerName(record.target))
                // The message as it is: the one-argument forms do not look for `{}`.
                when (record.level) {
                    1 -> logger.error(record.message)
                    2 -> logger.warn(record.message)
                    3 -> logger.info(record.message)
                    4 -> logger.debug(record.message)
                    else -> logger.trace(record.message)
                }
            }
            followLevel()
        }
    }
}
