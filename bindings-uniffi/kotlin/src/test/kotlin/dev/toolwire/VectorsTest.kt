package dev.toolwire

import dev.toolwire.demo.buildConformanceServer
import dev.toolwire.demo.buildDemoServer
import dev.toolwire.testing.replayVector
import kotlinx.coroutines.runBlocking
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.int
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.DynamicTest
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.TestFactory
import org.junit.jupiter.api.assertThrows
import java.io.File

/**
 * Replays the shared golden wire vectors (tests/vectors) against the Kotlin demo server, with
 * core's replayer ([replayVector]).
 */
class VectorsTest {
    private val cases: List<JsonObject> by lazy {
        val dir = File(System.getProperty("toolwire.root") ?: "../..", "tests/vectors")
        dir.listFiles { f -> f.name.endsWith(".json") }.orEmpty().sortedBy { it.name }.flatMap { file ->
            Json.parseToJsonElement(file.readText()).jsonObject.getValue("cases").jsonArray.map { it.jsonObject }
        }
    }

    @Test
    fun `there are enough vectors`() {
        assertTrue(cases.size >= 60, "only ${cases.size} cases")
    }

    @Test
    fun `a case that does not hold fails naming it and its step`() {
        val wrong = """{"name": "wrong", "initialize": "2025-11-25", "steps": [
            {"send": {"jsonrpc": "2.0", "id": 1, "method": "ping"}},
            {"expect": {"jsonrpc": "2.0", "id": 2, "result": {}}}]}"""
        val failure = assertThrows<AssertionError> { runBlocking { replayVector(buildDemoServer(), wrong) } }
        assertTrue(failure.message.orEmpty().startsWith("wrong: step 1: expected"), failure.message)
        assertThrows<ToolwireException.InvalidArgument> { runBlocking { replayVector(buildDemoServer(), "{") } }
    }

    // The case goes as the JSON text of its parsed JsonObject: kotlinx keeps number literals as
    // written, so an id beyond 2^53 (jsonrpc/large-integer-id) reaches core exactly.
    @TestFactory
    fun vectors(): List<DynamicTest> = cases.map { vector ->
        DynamicTest.dynamicTest(vector.getValue("name").jsonPrimitive.content) {
            runBlocking { replayVector(build(vector), vector.toString()) }
        }
    }

    /** The demo of the shared contract with the case's options, or the conformance server (its tasks fixtures). */
    private fun build(vector: JsonObject): Server {
        val options = vector["options"]?.jsonObject ?: JsonObject(emptyMap())
        val config = ServerConfig(
            pageSize = options["pageSize"]?.jsonPrimitive?.int?.toUInt(),
            maxFrameBytes = options["maxFrameBytes"]?.jsonPrimitive?.int?.toULong(),
            maxDepth = options["maxDepth"]?.jsonPrimitive?.int?.toUInt(),
        )
        return when (val server = vector["server"]?.jsonPrimitive?.content ?: "demo") {
            "demo" -> buildDemoServer(config = config)
            "conformance" -> {
                assertEquals(ServerConfig(), config, "the conformance server takes no options here")
                buildConformanceServer()
            }
            else -> throw AssertionError("unknown server $server")
        }
    }
}
