package dev.toolwire

import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Test
import org.slf4j.event.Level

private const val ROUTER = "toolwire.dispatch.router"
private const val CLIENT_ERROR = """{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"the client broke"}}"""
private const val BOGUS = """{"jsonrpc":"2.0","method":"notifications/bogus"}"""

private fun isClientError(record: CapturedLogs.Record) =
    record.logger == ROUTER && record.message.contains("the client broke")

/** The engine's own logs in SLF4J: on `toolwire.*` loggers, levels mapped, the `toolwire` logger's level obeyed. */
class EngineLogsTest {
    @AfterEach
    fun quiet() {
        CapturedLogs.threshold = Level.WARN
        EngineLogs.start()
        CapturedLogs.clear()
    }

    @Test
    fun `an engine warning arrives on a toolwire logger at warn`() {
        CapturedLogs.threshold = Level.INFO
        val server = Server("logs", "1.0")
        // Registering a tool with the wrapper starts the routing and reads the level.
        server.blockingTool(ToolDefinition(name = "noop")) { _, _ -> ToolResult.Text("ok") }
        RawClient(server).use { client ->
            client.initialize()
            client.send(CLIENT_ERROR)
            val record = CapturedLogs.await(10_000, ::isClientError)
            assertEquals(Level.WARN, record.level)
            assertEquals("the client reported an error code=-32000 message=the client broke", record.message)
            assertEquals("toolwire-logs", record.thread)
        }
    }

    @Test
    fun `debug records follow the toolwire logger's level`() {
        // At WARN, the engine's debug record (sent first) never arrives: the warning after it does.
        CapturedLogs.threshold = Level.WARN
        EngineLogs.start()
        CapturedLogs.clear()
        RawClient(Server("quiet", "1.0")).use { client ->
            client.initialize()
            client.send(BOGUS)
            client.send(CLIENT_ERROR)
            CapturedLogs.await(10_000, ::isClientError)
            assertEquals(emptyList<String>(), CapturedLogs.snapshot().filter { it.level.toInt() < Level.WARN.toInt() }.map { it.message })
        }

        // At DEBUG, read again by start(), it does, in order.
        CapturedLogs.threshold = Level.DEBUG
        EngineLogs.start()
        CapturedLogs.clear()
        RawClient(Server("chatty", "1.0")).use { client ->
            client.initialize()
            client.send(BOGUS)
            client.send(CLIENT_ERROR)
            CapturedLogs.await(10_000, ::isClientError)
            val ours = CapturedLogs.snapshot().filter { it.logger == ROUTER }.map { it.level to it.message }
            assertEquals(
                listOf(
                    Level.DEBUG to "ignored a notification method=notifications/bogus",
                    Level.WARN to "the client reported an error code=-32000 message=the client broke",
                ),
                ours,
            )
        }
    }

    @Test
    fun `targets map to loggers under toolwire`() {
        assertEquals("toolwire", EngineLogs.loggerName("toolwire"))
        assertEquals("toolwire.transport.http", EngineLogs.loggerName("toolwire::transport::http"))
        assertEquals("toolwire.hyper.proto.h1", EngineLogs.loggerName("hyper::proto::h1"))
        assertEquals("toolwire.toolwirex", EngineLogs.loggerName("toolwirex"))
    }
}
