package dev.toolwire

import dev.toolwire.testing.McpError
import dev.toolwire.testing.TestClient
import dev.toolwire.testing.testClient
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.runBlocking
import kotlinx.serialization.Serializable
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.int
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows
import java.util.Collections
import java.util.concurrent.atomic.AtomicBoolean
import java.util.concurrent.atomic.AtomicInteger

/** What a lifespan holds in these tests (a connection pool in a real server). */
class Stations(val names: Map<String, String>) : AutoCloseable {
    @Volatile
    var closed = false

    override fun close() {
        closed = true
    }
}

@Serializable
data class CityArgs(val city: String)

/** `server.lifespan(start, stop)`: its value in tools, typed tools, resources and prompts; when it starts and stops. */
class LifespanTest {
    private fun JsonObject.text() = getValue("content").jsonArray.joinToString("\n") { it.jsonObject.getValue("text").jsonPrimitive.content }

    private fun server(starts: AtomicInteger, events: MutableList<String>): Server {
        val server = Server("weather", "1")
        server.lifespan(start = {
            starts.incrementAndGet()
            events += "started"
            Stations(mapOf("oslo" to "Blindern"))
        }, stop = {
            it.close()
            events += "stopped"
        })
        server.tool(ToolDefinition("station")) { context, _ -> ToolResult.Text(context.lifespanContext<Stations>().names.getValue("oslo")) }
        server.blockingTool(ToolDefinition("blocking")) { context, _ -> ToolResult.Text("${context.lifespanContext<Stations>().names.size}") }
        server.tool("typed") { context, args: CityArgs -> context.lifespanContext<Stations>().names[args.city] ?: "none" }
        server.resource(ResourceDefinition("weather://stations", "stations")) { uri, _ ->
            listOf(ResourceContent(uri, text = lifespanContext<Stations>().names.values.joinToString()))
        }
        server.prompt(PromptDefinition("trip")) {
            PromptRendering(listOf(PromptMessageRecord(PromptRole.USER, ContentBlock.Text("near ${lifespanContext<Stations>().names.getValue("oslo")}"))))
        }
        return server
    }

    @Test
    fun `tools, typed tools, resources and prompts read the value, started once at connect and stopped at close`() = runBlocking {
        val starts = AtomicInteger()
        val events = Collections.synchronizedList(ArrayList<String>())
        val server = server(starts, events)
        val client = TestClient.connect(server)
        assertEquals(listOf("started"), events.toList())
        assertEquals("Blindern", client.callTool("station").text())
        assertEquals("1", client.callTool("blocking").text())
        assertEquals("Blindern", client.callTool("typed", """{"city":"oslo"}""").text())
        assertEquals("Blindern", client.readResource("weather://stations").getValue("contents").jsonArray[0].jsonObject.getValue("text").jsonPrimitive.content)
        assertEquals(
            "near Blindern",
            client.getPrompt("trip").getValue("messages").jsonArray[0].jsonObject.getValue("content").jsonObject.getValue("text").jsonPrimitive.content,
        )
        // A second serve shares it: it stops when the last one ends.
        val second = server.testClient(protocolVersion = "2026-07-28")
        assertEquals("Blindern", second.callTool("station").text())
        client.close()
        assertEquals(listOf("started"), events.toList())
        second.close()
        assertEquals(listOf("started", "stopped"), events.toList())
        assertEquals(1, starts.get())
        // Serving again starts it again.
        server.testClient().use { assertEquals("Blindern", it.callTool("station").text()) }
        assertEquals(listOf("started", "stopped", "started", "stopped"), events.toList())
    }

    @Test
    fun `calls on a session of connect() start it once and wait for it, and endLifespan stops it after the calls in flight`() = runBlocking {
        val server = Server("lazy", "1")
        val starting = CompletableDeferred<Unit>()
        val gate = CompletableDeferred<Unit>()
        val starts = AtomicInteger()
        val events = Collections.synchronizedList(ArrayList<String>())
        server.lifespan(start = {
            starts.incrementAndGet()
            starting.complete(Unit)
            gate.await()
            "pool"
        }, stop = { events += "stopped $it" })
        val callStarted = CompletableDeferred<Unit>()
        val finish = CompletableDeferred<Unit>()
        server.tool(ToolDefinition("use")) { context, args ->
            if (args.contains("slow")) {
                callStarted.complete(Unit)
                finish.await()
                events += "slow call done"
            }
            ToolResult.Text(context.lifespanContext<String>())
        }
        RawClient(server).use { client ->
            client.initialize()
            client.call(1, "use", "{}")
            client.call(2, "use", "{}")
            starting.await()
            gate.complete(Unit)
            val answers = listOf(client.recvObject(), client.recvObject()).sortedBy { it.getValue("id").jsonPrimitive.int }
            for (answer in answers) {
                assertEquals("pool", answer.getValue("result").jsonObject.getValue("content").jsonArray[0].jsonObject.getValue("text").jsonPrimitive.content)
            }
            assertEquals(1, starts.get())
            client.call(3, "use", """{"slow":true}""")
            callStarted.await()
            val ending = async { server.endLifespan() }
            finish.complete(Unit)
            assertEquals("pool", client.recvObject().getValue("result").jsonObject.getValue("content").jsonArray[0].jsonObject.getValue("text").jsonPrimitive.content)
            ending.await()
            assertEquals(listOf("slow call done", "stopped pool"), events.toList())
        }
    }

    @Test
    fun `a failure to start is connect's and runStdio's exception, and each call's error`() = runBlocking {
        val server = Server("broken", "1")
        server.lifespan(start = { error("no database") })
        server.tool(ToolDefinition("use")) { context, _ -> ToolResult.Text(context.lifespanContext<String>()) }
        val failed = assertThrows<IllegalStateException> { runBlocking { TestClient.connect(server) } }
        assertEquals("no database", failed.message)
        assertEquals("no database", assertThrows<IllegalStateException> { server.runStdio() }.message)
        RawClient(server).use { client ->
            client.initialize()
            client.call(1, "use", "{}")
            val result = client.recvObject().getValue("result").jsonObject
            assertEquals("true", result.getValue("isError").jsonPrimitive.content)
            assertTrue(result.text().contains("no database"), "$result")
        }
    }

    @Test
    fun `a failed start is each waiting call's error in the engine's words, a hold's exception, and the next call tries again`() = runBlocking {
        val server = Server("flaky", "1")
        val starting = CompletableDeferred<Unit>()
        val gate = CompletableDeferred<Unit>()
        val failing = AtomicBoolean(true)
        server.lifespan(start = {
            starting.complete(Unit)
            gate.await()
            check(!failing.get()) { "no database" }
            "pool"
        })
        server.tool(ToolDefinition("use")) { context, _ -> ToolResult.Text(context.lifespanContext<String>()) }
        server.resource(ResourceDefinition("pool://name", "pool")) { uri, _ -> listOf(ResourceContent(uri, text = lifespanContext<String>())) }
        val failed = "the server's lifespan failed to start: no database"
        RawClient(server).use { client ->
            client.initialize()
            client.call(1, "use", "{}")
            client.send("""{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"pool://name"}}""")
            starting.await()
            gate.complete(Unit)
            val answers = listOf(client.recvObject(), client.recvObject()).associateBy { it.getValue("id").jsonPrimitive.int }
            val call = answers.getValue(1).getValue("result").jsonObject
            assertEquals("true", call.getValue("isError").jsonPrimitive.content)
            assertEquals(failed, call.text())
            val read = answers.getValue(2).getValue("error").jsonObject
            assertEquals(-32603, read.getValue("code").jsonPrimitive.int)
            assertTrue(read.getValue("message").jsonPrimitive.content.contains(failed), "$read")
            // A hold gets the app's own exception; the generated API's, the engine's words.
            assertEquals("no database", assertThrows<IllegalStateException> { runBlocking { server.startLifespan() } }.message)
            assertEquals(failed, assertThrows<ToolwireException.Handler> { runBlocking { server.holdLifespan() } }.detail)
            failing.set(false)
            client.call(3, "use", "{}")
            assertEquals("pool", client.recvObject().getValue("result").jsonObject.text())
        }
        server.stop()
    }

    @Test
    fun `it stops after the last serve has ended, once a call in flight on a session of connect() has finished`() = runBlocking {
        val server = Server("slow", "1")
        val events = Collections.synchronizedList(ArrayList<String>())
        server.lifespan(start = {
            events += "started"
            "pool"
        }, stop = { events += "stopped $it" })
        val callStarted = CompletableDeferred<Unit>()
        val finish = CompletableDeferred<Unit>()
        server.tool(ToolDefinition("slow")) { context, _ ->
            callStarted.complete(Unit)
            finish.await()
            events += "slow call done"
            ToolResult.Text(context.lifespanContext<String>())
        }
        val first = TestClient.connect(server)
        val second = server.testClient()
        RawClient(server).use { raw ->
            raw.initialize()
            raw.call(1, "slow", "{}")
            callStarted.await()
            first.close()
            assertEquals(listOf("started"), events.toList())
            // The last serve's close waits for the call, which the lifespan outlives.
            val closing = async(Dispatchers.Default) { second.shutdown() }
            finish.complete(Unit)
            assertEquals("pool", raw.recvObject().getValue("result").jsonObject.text())
            closing.await()
            assertEquals(listOf("started", "slow call done", "stopped pool"), events.toList())
        }
    }

    @Test
    fun `serveHttp holds it from its start until it has stopped, and runHttp throws a failed start's exception`() = runBlocking {
        val events = Collections.synchronizedList(ArrayList<String>())
        val server = Server("http", "1")
        server.lifespan(start = {
            events += "started"
            "pool"
        }, stop = { events += "stopped $it" })
        val http = server.serveHttp("127.0.0.1", 0u)
        try {
            assertEquals(listOf("started"), events.toList())
            http.stop()
            http.wait()
            assertEquals(listOf("started", "stopped pool"), events.toList())
        } finally {
            http.destroy()
        }

        val broken = Server("broken-http", "1")
        broken.lifespan(start = { error("no database") })
        assertEquals("no database", assertThrows<IllegalStateException> { broken.runHttp(port = 0u) }.message)
        val failed = assertThrows<ToolwireException.Handler> { broken.serveHttp("127.0.0.1", 0u) }
        assertEquals("the server's lifespan failed to start: no database", failed.detail)
    }

    @Test
    fun `without a lifespan, lifespanContext says how to set one`() = runBlocking {
        val server = Server("none", "1")
        server.tool(ToolDefinition("use")) { context, _ -> ToolResult.Text(context.lifespanContext<String>()) }
        server.testClient().use { client ->
            val result = client.callTool("use")
            assertTrue(result.text().contains("server.lifespan(start, stop)"), "$result")
        }
        assertThrows<McpError> { runBlocking { server.testClient().use { it.request("no/such") } } }
        Unit
    }
}
