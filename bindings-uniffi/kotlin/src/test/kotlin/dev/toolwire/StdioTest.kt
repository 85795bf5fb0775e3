package dev.toolwire

import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.int
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import java.io.File
import java.util.concurrent.TimeUnit

/** The Kotlin demo as a real process on stdio (the `runStdio` driver path). */
class StdioTest {
    private fun startDemo(
        mainClass: String = "dev.toolwire.demo.DemoKt",
        stderr: File? = null,
        jvmOptions: List<String> = emptyList(),
    ): Process {
        val java = File(System.getProperty("java.home"), "bin/java").path
        val builder = ProcessBuilder(listOf(java) + jvmOptions + listOf("-cp", System.getProperty("java.class.path"), mainClass))
        builder.environment().remove("TOOLWIRE_PORTABLE_IO")
        if (stderr == null) {
            builder.redirectError(ProcessBuilder.Redirect.INHERIT)
        } else {
            // The portable paths (what macOS runs: a pipe instead of Linux's eventfd), with the
            // engine's debug log kept to show they were taken.
            builder.environment()["TOOLWIRE_PORTABLE_IO"] = "1"
            builder.environment()["TOOLWIRE_LOG"] = "debug"
            builder.redirectError(stderr)
        }
        return builder.start()
    }

    private fun Process.send(vararg lines: String) {
        val out = outputStream
        for (line in lines) out.write((line + "\n").toByteArray())
        out.flush()
    }

    private fun Process.answers(): List<JsonObject> =
        inputStream.bufferedReader().readLines().map { Json.parseToJsonElement(it).jsonObject }

    private val initialize =
        """{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"""
    private val initialized = """{"jsonrpc":"2.0","method":"notifications/initialized"}"""

    @Test
    fun `serves until EOF, answers every call and exits`() = servesUntilEof(portable = false)

    @Test
    fun `the portable stdio paths serve the same`() = servesUntilEof(portable = true)

    private fun servesUntilEof(portable: Boolean) {
        val stderr = if (portable) File.createTempFile("toolwire-stdio", ".log").also { it.deleteOnExit() } else null
        val demo = startDemo(stderr = stderr)
        demo.send(
            initialize,
            initialized,
            """{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"héllo"}}}""",
            """{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":250},"_meta":{"progressToken":"p"}}}""",
            """{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"fail","arguments":{"message":"on purpose"}}}""",
            """{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}""",
            """{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":30000}}}""",
            """{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}""",
            "{not json",
        )
        demo.outputStream.close()
        val answers = demo.answers()
        assertTrue(demo.waitFor(15, TimeUnit.SECONDS), "the demo must exit once stdin ends")
        assertEquals(0, demo.exitValue())
        val byId = answers.filter { "id" in it }.associateBy { it["id"].toString() }
        assertEquals("héllo", text(byId.getValue("1")))
        assertEquals("slept 250 ms", text(byId.getValue("2")))
        assertEquals("on purpose", text(byId.getValue("3")))
        assertEquals(3, byId.getValue("4").getValue("result").jsonObject.getValue("structuredContent").jsonObject.getValue("sum").jsonPrimitive.int)
        assertTrue("5" !in byId, "a cancelled call is not answered")
        assertEquals(-32700, byId.getValue("null").getValue("error").jsonObject.getValue("code").jsonPrimitive.int)
        val progress = answers.filter { it["method"]?.jsonPrimitive?.content == "notifications/progress" }
        assertEquals(listOf(100, 200), progress.map { it.getValue("params").jsonObject.getValue("progress").jsonPrimitive.int })
        if (stderr != null) {
            assertTrue("the portable bell" in stderr.readText(), "the portable path was not taken")
        }
    }

    @Test
    fun `a server of tools lists them without coroutines, callback interfaces or a subprocess`() {
        // What a start does not load is what it does not pay for: kotlinx.coroutines is loaded
        // at the first call that needs it, a callback interface when an object of it is passed,
        // and no process is spawned (JNA's `ldconfig -p`; see NativeLibraryLocation).
        val classes = File.createTempFile("toolwire-classes", ".log").also { it.deleteOnExit() }
        val demo = startDemo(jvmOptions = listOf("-Xlog:class+load=info:file=${classes.path}"))
        demo.send(initialize, initialized, """{"jsonrpc":"2.0","id":1,"method":"tools/list"}""")
        demo.outputStream.close()
        val byId = demo.answers().associateBy { it["id"].toString() }
        assertTrue(demo.waitFor(15, TimeUnit.SECONDS))
        val tools = byId.getValue("1").getValue("result").jsonObject.getValue("tools").jsonArray
        assertTrue(tools.any { it.jsonObject.getValue("name").jsonPrimitive.content == "echo" }, tools.toString())
        val loaded = classes.readLines()
        assertTrue(loaded.any { " dev.toolwire.UniffiLib " in it }, "the class-load log must show the library's classes")
        assertEquals(
            emptyList<String>(),
            loaded.filter { " kotlinx.coroutines." in it || ".uniffiCallbackInterface" in it || " java.lang.ProcessImpl " in it },
        )
    }

    @Test
    fun `a burst of calls in one write is answered in full, in slices`() {
        val demo = startDemo()
        val burst = (1..300).joinToString("\n") { i ->
            // Every third call carries a long argument, so slices and reads end mid-frame.
            val text = if (i % 3 == 0) "x".repeat(5_000) + i else "call $i"
            """{"jsonrpc":"2.0","id":$i,"method":"tools/call","params":{"name":"echo","arguments":{"text":"$text"}}}"""
        }
        // Written from another thread: the answers fill our end of the pipe meanwhile.
        val writer = Thread {
            demo.send(initialize, initialized, burst)
            demo.outputStream.close()
        }
        writer.start()
        val answers = demo.answers().filter { it["id"]?.toString() != "0" }
        writer.join()
        assertTrue(demo.waitFor(15, TimeUnit.SECONDS))
        assertEquals((1..300).toList(), answers.map { it.getValue("id").jsonPrimitive.int }.sorted())
        for (answer in answers) {
            val i = answer.getValue("id").jsonPrimitive.int
            assertEquals(if (i % 3 == 0) "x".repeat(5_000) + i else "call $i", text(answer))
        }
    }

    @Test
    fun `content-block results are answered on the stdio path too`() {
        val demo = startDemo("dev.toolwire.ContentServerKt")
        demo.send(
            initialize,
            initialized,
            """{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"blocks","arguments":{}}}""",
            """{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"text","arguments":{}}}""",
        )
        demo.outputStream.close()
        val byId = demo.answers().associateBy { it["id"].toString() }
        assertTrue(demo.waitFor(15, TimeUnit.SECONDS))
        val blocks = byId.getValue("1").getValue("result").jsonObject
        assertEquals(listOf("text", "image"), blocks.getValue("content").jsonArray.map { it.jsonObject.getValue("type").jsonPrimitive.content })
        assertEquals(2, blocks.getValue("structuredContent").jsonObject.getValue("n").jsonPrimitive.int)
        assertEquals("plain", text(byId.getValue("2")))
    }

    @Test
    fun `SIGTERM lets calls in flight answer before the process exits`() {
        val demo = startDemo()
        demo.send(
            initialize,
            initialized,
            """{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":400}}}""",
            """{"jsonrpc":"2.0","id":2,"method":"ping"}""",
        )
        // Frames are handled in order: once the ping is answered, the call is in flight.
        val reader = demo.inputStream.bufferedReader()
        assertTrue(reader.readLine().contains("\"id\":0"))
        assertTrue(reader.readLine().contains("\"id\":2"))
        // (Process.destroy() would also close our end of its pipes.)
        assertEquals(0, ProcessBuilder("kill", "-TERM", demo.pid().toString()).start().waitFor())
        val rest = reader.readLines().map { Json.parseToJsonElement(it).jsonObject }
        assertTrue(demo.waitFor(15, TimeUnit.SECONDS))
        assertEquals("slept 400 ms", text(rest.single { it["id"]?.toString() == "1" }))
    }

    private fun text(answer: JsonObject) =
        answer.getValue("result").jsonObject.getValue("content").jsonArray[0].jsonObject.getValue("text").jsonPrimitive.content
}
