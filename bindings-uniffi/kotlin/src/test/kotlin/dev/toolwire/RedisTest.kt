package dev.toolwire

import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import org.junit.jupiter.api.AfterAll
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.BeforeAll
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.TestInstance
import org.junit.jupiter.api.assertThrows
import org.junit.jupiter.api.fail
import java.net.InetSocketAddress
import java.net.ServerSocket
import java.net.Socket
import java.nio.file.Files
import java.nio.file.Path

/**
 * Two servers sharing one real Redis (`redis-server` on loopback, started here) act as two
 * replicas: a task created over HTTP on one is read and answered through the other, and
 * completes; a Redis that cannot be reached fails the constructor, naming the URL.
 * Needs `redis-server` on PATH (`scripts/test-all` installs Debian's package when missing).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RedisTest {
    private lateinit var redis: Process
    private lateinit var dir: Path
    private lateinit var redisUrl: String

    private fun pings(port: Int): Boolean = try {
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

    @BeforeAll
    fun startRedis() {
        val port = ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress()).use { it.localPort }
        dir = Files.createTempDirectory("toolwire-redis-")
        redis = ProcessBuilder("redis-server", "--port", "$port", "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
            .directory(dir.toFile())
            .redirectOutput(ProcessBuilder.Redirect.DISCARD)
            .redirectError(ProcessBuilder.Redirect.INHERIT)
            .start()
        // Ready when it answers: polled with a deadline.
        val deadline = System.nanoTime() + 10_000_000_000L
        while (!pings(port)) {
            assertTrue(redis.isAlive, "redis-server exited")
            assertTrue(System.nanoTime() < deadline, "redis-server never answered")
            Thread.onSpinWait()
        }
        redisUrl = "redis://127.0.0.1:$port/0"
    }

    @AfterAll
    fun stopRedis() {
        if (::redis.isInitialized) {
            redis.destroyForcibly()
            redis.waitFor()
        }
        if (::dir.isInitialized) dir.toFile().deleteRecursively()
    }

    private fun replica(): Server {
        val server = Server(
            "replica",
            "1",
            null,
            ServerConfig(redis = redisUrl, requestStateKeys = listOf("a shared requestState secret of at least 32 bytes")),
        )
        val definition = ToolDefinition(name = "confirm_delete", inputSchemaJson = """{"type":"object"}""", taskSupport = TaskSupport.OPTIONAL)
        server.tool(definition) { context, _ ->
            val answer = Json.parseToJsonElement(context.elicit("""{"message":"Delete?"}""")).jsonObject
            ToolResult.Text("answered ${answer["action"]!!.jsonPrimitive.content}")
        }
        return server
    }

    /** One 2026-07-28 request over HTTP; its JSON-RPC answer. */
    private fun request(url: String, id: Int, method: String, params: String, name: String): JsonObject {
        val meta = """{"io.modelcontextprotocol/protocolVersion":"2026-07-28",""" +
            """"io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}}"""
        val response = post(
            url,
            """{"jsonrpc":"2.0","id":$id,"method":"$method","params":{$params,"_meta":$meta}}""",
            "mcp-protocol-version", "2026-07-28", "mcp-method", method, "mcp-name", name,
        )
        assertEquals(200, response.statusCode(), "$method: ${response.body()}")
        return message(response)
    }

    /** Polls `tasks/get` through [url] until the task reaches [status] or ends, for up to 10 s. */
    private fun waitFor(url: String, task: String, status: String): JsonObject {
        val deadline = System.nanoTime() + 10_000_000_000L
        var id = 100
        while (System.nanoTime() < deadline) {
            val now = request(url, id++, "tasks/get", """"taskId":"$task"""", task).getValue("result").jsonObject
            if (now["status"]!!.jsonPrimitive.content in setOf(status, "completed", "failed", "cancelled")) return now
        }
        fail("the task never got to $status")
    }

    @Test
    fun `a task created on one replica is read and answered through the other`() {
        val one = replica()
        val two = replica()
        val httpOne = one.serveHttp("127.0.0.1", 0u)
        val httpTwo = two.serveHttp("127.0.0.1", 0u)
        try {
            val created = request(httpOne.url(), 1, "tools/call", """"name":"confirm_delete","arguments":{}""", "confirm_delete")
                .getValue("result").jsonObject
            assertEquals("task", created["resultType"]!!.jsonPrimitive.content, created.toString())
            val task = created["taskId"]!!.jsonPrimitive.content
            val parked = waitFor(httpTwo.url(), task, "input_required")
            assertEquals("input_required", parked["status"]!!.jsonPrimitive.content, parked.toString())
            val (key, question) = parked["inputRequests"]!!.jsonObject.entries.single()
            assertEquals("elicitation/create", question.jsonObject["method"]!!.jsonPrimitive.content)
            val ack = request(httpTwo.url(), 2, "tasks/update", """"taskId":"$task","inputResponses":{"$key":{"action":"accept"}}""", task)
            assertEquals("complete", ack.getValue("result").jsonObject["resultType"]!!.jsonPrimitive.content, ack.toString())
            val done = waitFor(httpTwo.url(), task, "completed")
            assertEquals("completed", done["status"]!!.jsonPrimitive.content, done.toString())
            assertEquals("answered accept", done["result"]!!.jsonObject["content"]!!.jsonArray[0].jsonObject["text"]!!.jsonPrimitive.content)
            // The first replica reads the same outcome.
            assertEquals("completed", waitFor(httpOne.url(), task, "completed")["status"]!!.jsonPrimitive.content)
        } finally {
            for (http in listOf(httpOne, httpTwo)) {
                http.stop()
                http.waitBlocking()
                http.destroy()
            }
            one.destroy()
            two.destroy()
        }
    }

    @Test
    fun `a Redis that cannot be reached fails the constructor, naming it`() {
        val unreachable = assertThrows<ToolwireException.Transport> {
            Server("replica", "1", null, ServerConfig(redis = "redis://127.0.0.1:1/0"))
        }
        assertTrue(unreachable.detail.contains("redis://127.0.0.1:1/0"), unreachable.detail)
        val malformed = assertThrows<ToolwireException> {
            Server("replica", "1", null, ServerConfig(redis = "not-a-url"))
        }
        assertTrue(malformed.message!!.contains("not-a-url"), malformed.message)
    }
}
