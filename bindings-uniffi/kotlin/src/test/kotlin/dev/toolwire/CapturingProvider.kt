package dev.toolwire

import org.slf4j.ILoggerFactory
import org.slf4j.IMarkerFactory
import org.slf4j.Marker
import org.slf4j.event.Level
import org.slf4j.helpers.BasicMarkerFactory
import org.slf4j.helpers.LegacyAbstractLogger
import org.slf4j.helpers.NOPMDCAdapter
import org.slf4j.spi.MDCAdapter
import org.slf4j.spi.SLF4JServiceProvider
import java.util.concurrent.ConcurrentHashMap

/** The tests' SLF4J provider (found through META-INF/services): every logger keeps its records in [CapturedLogs]. */
class CapturingProvider : SLF4JServiceProvider {
    private val loggers = ConcurrentHashMap<String, CapturingLogger>()
    private val factory = ILoggerFactory { name -> loggers.computeIfAbsent(name) { CapturingLogger(it) } }
    private val markers = BasicMarkerFactory()
    private val mdc = NOPMDCAdapter()

    override fun getLoggerFactory(): ILoggerFactory = factory
    override fun getMarkerFactory(): IMarkerFactory = markers
    override fun getMDCAdapter(): MDCAdapter = mdc
    override fun getRequestedApiVersion(): String = "2.0.99"
    override fun initialize() {}
}

/** What the tests' loggers were given, and the one level they all enable from. */
object CapturedLogs {
    class Record(val logger: String, val level: Level, val message: String, val thread: String)

    /** The most verbose level every logger enables (null: none). */
    @Volatile var threshold: Level? = Level.WARN

    private val lock = Object()
    private val records = ArrayList<Record>()

    fun enabled(level: Level): Boolean = threshold?.let { level.toInt() >= it.toInt() } ?: false

    fun add(record: Record) = synchronized(lock) {
        records.add(record)
        lock.notifyAll()
    }

    fun clear() = synchronized(lock) { records.clear() }

    fun snapshot(): List<Record> = synchronized(lock) { records.toList() }

    /** The first record that [matches], waiting up to [timeoutMs] for it. */
    fun await(timeoutMs: Long, matches: (Record) -> Boolean): Record {
        val deadline = System.nanoTime() + timeoutMs * 1_000_000
        synchronized(lock) {
            while (true) {
                records.firstOrNull(matches)?.let { return it }
                val left = (deadline - System.nanoTime()) / 1_000_000
                if (left <= 0) {
                    throw AssertionError("no such record; got ${records.map { "${it.logger} ${it.level} ${it.message}" }}")
                }
                lock.wait(left)
            }
        }
    }
}

class CapturingLogger(private val loggerName: String) : LegacyAbstractLogger() {
    override fun getName(): String = loggerName
    override fun isTraceEnabled() = CapturedLogs.enabled(Level.TRACE)
    override fun isDebugEnabled() = CapturedLogs.enabled(Level.DEBUG)
    override fun isInfoEnabled() = CapturedLogs.enabled(Level.INFO)
    override fun isWarnEnabled() = CapturedLogs.enabled(Level.WARN)
    override fun isErrorEnabled() = CapturedLogs.enabled(Level.ERROR)
    override fun getFullyQualifiedCallerName(): String? = null

    override fun handleNormalizedLoggingCall(
        level: Level,
        marker: Marker?,
        messagePattern: String?,
        arguments: Array<out Any?>?,
        throwable: Throwable?,
    ) {
        CapturedLogs.add(CapturedLogs.Record(loggerName, level, messagePattern ?: "", Thread.currentThread().name))
    }
}
