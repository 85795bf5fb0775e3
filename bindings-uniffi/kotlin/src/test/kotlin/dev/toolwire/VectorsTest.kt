package dev.toolwire

import dev.toolwire.demo.buildConformanceServer
import dev.toolwire.demo.buildDemoServer
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonNull
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.booleanOrNull
import kotlinx.serialization.json.doubleOrNull
import kotlinx.serialization.json.int
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.DynamicTest
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.TestFactory
import java.io.File

/** Replays the shared golden wire vectors (tests/vectors) against the Kotlin demo server. */
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

    @TestFactory
    fun vectors(): List<DynamicTest> = cases.map { vector ->
        DynamicTest.dynamicTest(vector.getValue("name").jsonPrimitive.content) { replay(vector) }
    }

    private fun replay(vector: JsonObject) {
        val options = vector["options"]?.jsonObject ?: JsonObject(emptyMap())
        val config = ServerConfig(
            pageSize = options["pageSize"]?.jsonPrimitive?.int?.toUInt(),
            maxFrameBytes = options["maxFrameBytes"]?.jsonPrimitive?.int?.toULong(),
            maxDepth = options["maxDepth"]?.jsonPrimitive?.int?.toUInt(),
        )
        val captured = Captured()
        RawClient(build(vector, config)).use { client ->
            vector["initialize"]?.jsonPrimitive?.content?.let { version ->
                val caps = vector["clientCapabilities"]?.toString() ?: "{}"
                val result = client.initialize(version, caps)
                assertEquals(version, result.getValue("protocolVersion").jsonPrimitive.content)
            }
            for ((index, original) in vector.getValue("steps").jsonArray.withIndex()) {
                val where = "step $index"
                val step = captured.resolve(original).jsonObject
                when {
                    "send" in step -> client.send(step.getValue("send").toString())
                    "sendRaw" in step -> client.send(step.getValue("sendRaw").jsonPrimitive.content)
                    "sendHex" in step -> client.connection.handleFrameBytes(hex(step.getValue("sendHex").jsonPrimitive.content))
                    "expect" in step -> {
                        val got = client.recv()
                        assertTrue(matches(step.getValue("expect"), got), "$where: expected ${step["expect"]}\n got $got")
                        captured.record(step.getValue("expect"), got)
                    }
                    "expectUnordered" in step -> {
                        val patterns = step.getValue("expectUnordered").jsonArray
                        val got = patterns.map { client.recv() }
                        assertTrue(matchesUnordered(patterns, got), "$where: got $got")
                    }
                    "expectUnorderedArray" in step -> {
                        val got = client.recv()
                        assertTrue(
                            got is JsonArray && matchesUnordered(step.getValue("expectUnorderedArray").jsonArray, got),
                            "$where: got $got",
                        )
                    }
                    "collect" in step -> {
                        var seen = 0
                        while (true) {
                            val got = client.recv()
                            if (matches(step.getValue("until"), got)) {
                                captured.record(step.getValue("until"), got)
                                break
                            }
                            assertTrue(matches(step.getValue("collect"), got), "$where: unexpected $got")
                            seen++
                        }
                        val min = step["min"]?.jsonPrimitive?.int ?: 0
                        val max = step["max"]?.jsonPrimitive?.int ?: Int.MAX_VALUE
                        assertTrue(seen in min..max, "$where: collected $seen")
                    }
                    else -> throw AssertionError("unknown step $step")
                }
            }
            assertEquals(emptyList<JsonElement>(), client.finish(), "unexpected frames after the last step")
        }
    }

    /** The demo of the shared contract, or the conformance server (its tasks fixtures). */
    private fun build(vector: JsonObject, config: ServerConfig): Server =
        when (val server = vector["server"]?.jsonPrimitive?.content ?: "demo") {
            "demo" -> buildDemoServer(config = config)
            "conformance" -> {
                assertEquals(ServerConfig(), config, "the conformance server takes no options here")
                buildConformanceServer()
            }
            else -> throw AssertionError("unknown server $server")
        }

    /**
     * Strings a case captured in an expectation (`"$capture:NAME"`, e.g. a task id) and uses in
     * later steps (`"$var:NAME"`, in what it sends and what it expects).
     */
    private class Captured {
        private val values = mutableMapOf<String, String>()

        fun resolve(value: JsonElement): JsonElement = when {
            value is JsonPrimitive && value.isString && value.content.startsWith("\$var:") -> {
                val name = value.content.removePrefix("\$var:")
                JsonPrimitive(values[name] ?: throw AssertionError("${value.content}: nothing captured as $name yet"))
            }
            value is JsonArray -> JsonArray(value.map { resolve(it) })
            value is JsonObject -> JsonObject(value.mapValues { resolve(it.value) })
            else -> value
        }

        /** After `actual` matched `pattern`: what each `"$capture:NAME"` stood for (the same string each time). */
        fun record(pattern: JsonElement, actual: JsonElement) {
            when {
                pattern is JsonPrimitive && pattern.isString && pattern.content.startsWith("\$capture:") -> {
                    val name = pattern.content.removePrefix("\$capture:")
                    val got = (actual as JsonPrimitive).content
                    val known = values.getOrPut(name) { got }
                    assertEquals(known, got, "$name was captured before as another value")
                }
                pattern is JsonArray && actual is JsonArray -> pattern.zip(actual).forEach { (p, a) -> record(p, a) }
                pattern is JsonObject && actual is JsonObject ->
                    pattern.forEach { (key, p) -> actual[key]?.let { record(p, it) } }
            }
        }
    }

    private fun hex(text: String) = ByteArray(text.length / 2) { text.substring(it * 2, it * 2 + 2).toInt(16).toByte() }

    private fun matchesUnordered(patterns: List<JsonElement>, actual: List<JsonElement>): Boolean {
        if (patterns.size != actual.size) return false
        val used = BooleanArray(actual.size)
        return patterns.all { pattern ->
            val i = actual.indices.firstOrNull { !used[it] && matches(pattern, actual[it]) } ?: return false
            used[i] = true
            true
        }
    }

    private fun matches(pattern: JsonElement, actual: JsonElement): Boolean {
        if (pattern is JsonPrimitive && pattern.isString) {
            val p = pattern.content
            when {
                p == "\$any" -> return true
                p == "\$string" -> return actual is JsonPrimitive && actual.isString
                p == "\$number" -> return actual is JsonPrimitive && !actual.isString && actual.doubleOrNull != null
                p.startsWith("\$capture:") -> return actual is JsonPrimitive && actual.isString
                p.startsWith("\$prefix:") ->
                    return actual is JsonPrimitive && actual.isString && actual.content.startsWith(p.removePrefix("\$prefix:"))
            }
        }
        return when (pattern) {
            is JsonArray -> actual is JsonArray && pattern.size == actual.size &&
                pattern.indices.all { matches(pattern[it], actual[it]) }
            is JsonObject -> actual is JsonObject && pattern.keys == actual.keys &&
                pattern.all { (key, value) -> matches(value, actual.getValue(key)) }
            is JsonNull -> actual is JsonNull
            is JsonPrimitive -> actual is JsonPrimitive && actual !is JsonNull && samePrimitive(pattern, actual)
        }
    }

    private fun samePrimitive(a: JsonPrimitive, b: JsonPrimitive): Boolean = when {
        a.isString || b.isString -> a.isString && b.isString && a.content == b.content
        a.booleanOrNull != null || b.booleanOrNull != null -> a.booleanOrNull == b.booleanOrNull
        else -> a.doubleOrNull != null && a.doubleOrNull == b.doubleOrNull
    }
}
