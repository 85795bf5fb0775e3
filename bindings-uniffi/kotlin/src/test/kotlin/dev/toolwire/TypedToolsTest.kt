package dev.toolwire

import dev.toolwire.testing.McpError
import dev.toolwire.testing.TestClient
import dev.toolwire.testing.testClient
import kotlinx.coroutines.runBlocking
import kotlinx.serialization.Contextual
import kotlinx.serialization.SerialName
import kotlinx.serialization.Serializable
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows
import java.util.UUID

@Serializable
data class ForecastArgs(@Description("City name") val city: String, @Minimum(1.0) @Maximum(7.0) val days: Int = 3)

@Serializable
data class Forecast(val city: String, val temperatures: List<Double>)

@Serializable
enum class TempUnit { @SerialName("celsius") CELSIUS, FAHRENHEIT }

@Serializable
data class Place(val name: String, val lat: Double? = null)

@Serializable
data class Shapes(
    val unit: TempUnit,
    val maybe: String?,
    val tags: List<String> = emptyList(),
    val uniqueTags: Set<String> = emptySet(),
    val counts: Map<String, Long> = emptyMap(),
    val where: Place,
    @SerialName("is_public") val isPublic: Boolean = false,
    @MinLength(2) @MaxLength(5) @Pattern("^[a-z]+$") val code: String = "ab",
    @MinItems(1) val places: List<Place?> = listOf(null),
    val initial: Char = 'x',
    val id: Ident = Ident("a"),
)

@Serializable
@JvmInline
value class Ident(val value: String)

@Description("A tree of tasks")
@Serializable
data class TaskTree(val title: String, val children: List<TaskTree> = emptyList())

@Serializable
data class Project(val name: String, val root: TaskTree, val lead: Person? = null)

@Serializable
data class Person(val name: String, val manager: Person? = null)

@Serializable
sealed class Shape {
    @Serializable
    data class Circle(val r: Double) : Shape()
}

@Serializable
data class WithSealed(val name: String, val shape: Shape)

@Serializable
data class WithContextual(@Contextual val id: UUID)

@Serializable
data class WithIntKeys(val byId: Map<Int, String>)

@Serializable
data class MisplacedLimit(@MinLength(1) val count: Int)

@Serializable
data class Empty(val unused: Boolean = false)

class NotSerializable(val x: Int)

/** Typed tools (`server.tool<A, R>(name) { context, args -> }`), driven by the typed test client. */
class TypedToolsTest {
    private fun json(text: String) = Json.parseToJsonElement(text)

    private fun forecastServer(): Server {
        val server = Server("weather", "1.0.0")
        server.tool("forecast", description = "Daily forecast for a city.") { context, args: ForecastArgs ->
            context.progress(1.0, args.days.toDouble(), "fetching")
            Forecast(args.city, List(args.days) { 20.0 + it })
        }
        return server
    }

    private fun JsonObject.text() = getValue("content").jsonArray.joinToString("\n") { it.jsonObject.getValue("text").jsonPrimitive.content }

    private fun JsonObject.isError() = this["isError"]?.jsonPrimitive?.content == "true"

    @Test
    fun `the forecast server's tools list is the golden one`() = runBlocking {
        val golden = json(javaClass.getResource("/forecast/tools-list.json")!!.readText()).jsonObject
        TestClient.connect(forecastServer()).use { client ->
            assertEquals(golden.getValue("tools"), JsonArray(client.listTools()))
        }
    }

    @Test
    fun `days out of range is an isError result naming days, and the handler does not run`() = runBlocking {
        forecastServer().testClient().use { client ->
            val result = client.callTool("forecast", """{"city":"Oslo","days":9}""")
            assertTrue(result.isError(), "$result")
            assertTrue(result.text().contains("/days"), result.text())
            assertFalse(result.containsKey("structuredContent"))
        }
    }

    @Test
    fun `a call returns structuredContent, with the default and progress`() = runBlocking {
        forecastServer().testClient().use { client ->
            val progress = mutableListOf<Triple<Double, Double?, String?>>()
            val result = client.callTool("forecast", """{"city":"Oslo"}""") { done, total, message -> progress += Triple(done, total, message) }
            assertFalse(result.isError(), "$result")
            assertEquals(json("""{"city":"Oslo","temperatures":[20.0,21.0,22.0]}"""), result.getValue("structuredContent"))
            // Older clients read the same JSON as text.
            assertEquals(result.getValue("structuredContent"), json(result.text()))
            assertEquals(listOf(Triple(1.0, 3.0, "fetching")), progress)
        }
    }

    @Test
    fun `the 2026-07-28 era calls the same typed tool`() = runBlocking {
        forecastServer().testClient(protocolVersion = "2026-07-28").use { client ->
            val result = client.callTool("forecast", """{"city":"Paris","days":1}""")
            assertEquals(json("""{"city":"Paris","temperatures":[20.0]}"""), result.getValue("structuredContent"))
        }
    }

    private fun schemaOf(register: (Server) -> Unit, key: String = "inputSchema"): JsonObject = runBlocking {
        val server = Server("schemas", "1")
        register(server)
        server.testClient().use { client -> client.listTools().single().getValue(key).jsonObject }
    }

    @Test
    fun `enums, nullables, lists, sets, maps, nested classes, serial names, limits, chars and value classes`() {
        val schema = schemaOf({ it.tool("shapes") { _, _: Shapes -> "ok" } })
        val expected = json(
            """
            {"type":"object","additionalProperties":false,
             "properties":{
               "unit":{"type":"string","enum":["celsius","FAHRENHEIT"]},
               "maybe":{"anyOf":[{"type":"string"},{"type":"null"}]},
               "tags":{"type":"array","items":{"type":"string"}},
               "uniqueTags":{"type":"array","items":{"type":"string"},"uniqueItems":true},
               "counts":{"type":"object","additionalProperties":{"type":"integer"}},
               "where":{"type":"object","additionalProperties":false,
                        "properties":{"name":{"type":"string"},"lat":{"anyOf":[{"type":"number"},{"type":"null"}]}},
                        "required":["name"]},
               "is_public":{"type":"boolean"},
               "code":{"type":"string","minLength":2,"maxLength":5,"pattern":"^[a-z]+$"},
               "places":{"type":"array","minItems":1,"items":{"anyOf":[
                  {"type":"object","additionalProperties":false,
                   "properties":{"name":{"type":"string"},"lat":{"anyOf":[{"type":"number"},{"type":"null"}]}},
                   "required":["name"]},
                  {"type":"null"}]}},
               "initial":{"type":"string","minLength":1,"maxLength":1},
               "id":{"type":"string"}
             },
             "required":["unit","maybe","where"]}
            """,
        )
        assertEquals(expected, schema)
    }

    @Test
    fun `the engine checks the derived schema and the handler gets the decoded class`() = runBlocking {
        val server = Server("schemas", "1")
        server.tool("shapes") { _, args: Shapes -> "${args.unit} ${args.maybe} ${args.where} ${args.isPublic} ${args.id} ${args.uniqueTags}" }
        server.testClient().use { client ->
            val ok = client.callTool(
                "shapes",
                """{"unit":"celsius","maybe":null,"where":{"name":"Oslo"},"is_public":true,"id":"i-1","uniqueTags":["a","b"]}""",
            )
            assertEquals("CELSIUS null Place(name=Oslo, lat=null) true Ident(value=i-1) [a, b]", ok.text())
            for ((arguments, path) in listOf(
                """{"unit":"kelvin","maybe":null,"where":{"name":"Oslo"}}""" to "/unit",
                """{"unit":"celsius","where":{"name":"Oslo"}}""" to "maybe",
                """{"unit":"celsius","maybe":null,"where":{"name":"Oslo","extra":1}}""" to "/where",
                """{"unit":"celsius","maybe":null,"where":{"name":"Oslo"},"uniqueTags":["a","a"]}""" to "/uniqueTags",
                """{"unit":"celsius","maybe":null,"where":{"name":"Oslo"},"code":"ABC"}""" to "/code",
            )) {
                val failed = client.callTool("shapes", arguments)
                assertTrue(failed.isError(), "$arguments: $failed")
                assertTrue(failed.text().contains(path), "$arguments: ${failed.text()}")
            }
        }
    }

    @Test
    fun `recursive classes go through defs, the root itself through #, and calls decode them`() = runBlocking {
        val server = Server("schemas", "1")
        server.tool("tree") { _, tree: TaskTree -> "${tree.title}:${tree.children.size}:${tree.children.firstOrNull()?.children?.size}" }
        server.tool("project") { _, project: Project -> project.lead?.manager?.name ?: "none" }
        server.testClient().use { client ->
            val tools = client.listTools().associateBy { it.getValue("name").jsonPrimitive.content }
            assertEquals(
                json(
                    """{"type":"object","description":"A tree of tasks","additionalProperties":false,
                        "properties":{"title":{"type":"string"},"children":{"type":"array","items":{"${'$'}ref":"#"}}},
                        "required":["title"]}""",
                ),
                tools.getValue("tree").getValue("inputSchema"),
            )
            val taskTree = """{"type":"object","description":"A tree of tasks","additionalProperties":false,
                "properties":{"title":{"type":"string"},"children":{"type":"array","items":{"${'$'}ref":"#/${'$'}defs/TaskTree"}}},
                "required":["title"]}"""
            val person = """{"type":"object","additionalProperties":false,
                "properties":{"name":{"type":"string"},"manager":{"anyOf":[{"${'$'}ref":"#/${'$'}defs/Person"},{"type":"null"}]}},
                "required":["name"]}"""
            assertEquals(
                json(
                    """{"type":"object","additionalProperties":false,
                        "properties":{"name":{"type":"string"},"root":{"${'$'}ref":"#/${'$'}defs/TaskTree"},
                                      "lead":{"anyOf":[{"${'$'}ref":"#/${'$'}defs/Person"},{"type":"null"}]}},
                        "required":["name","root"],
                        "${'$'}defs":{"TaskTree":$taskTree,"Person":$person}}""",
                ),
                tools.getValue("project").getValue("inputSchema"),
            )
            assertEquals("a:2:1", client.callTool("tree", """{"title":"a","children":[{"title":"b","children":[{"title":"c"}]},{"title":"d"}]}""").text())
            val deep = client.callTool("tree", """{"title":"a","children":[{"title":"b","children":[{"title":7}]}]}""")
            assertTrue(deep.isError() && deep.text().contains("/children/0/children/0/title"), deep.text())
            assertEquals(
                "Grace",
                client.callTool("project", """{"name":"p","root":{"title":"t"},"lead":{"name":"Ada","manager":{"name":"Grace"}}}""").text(),
            )
        }
    }

    @Test
    fun `what the schema cannot say fails at registration, naming the property`() {
        val server = Server("schemas", "1")
        val cases = listOf<Pair<() -> Unit, List<String>>>(
            { server.tool("sealed") { _, _: WithSealed -> "" } } to listOf("WithSealed.shape", "polymorphic", "sealed"),
            { server.tool("contextual") { _, _: WithContextual -> "" } } to listOf("WithContextual.id", "contextual"),
            { server.tool("intKeys") { _, _: WithIntKeys -> "" } } to listOf("WithIntKeys.byId", "keys"),
            { server.tool("limit") { _, _: MisplacedLimit -> "" } } to listOf("MisplacedLimit.count", "@MinLength", "integer"),
            { server.tool("notSerializable") { _, _: NotSerializable -> "" } } to listOf("NotSerializable", "@Serializable"),
            { server.tool("list") { _, _: Empty -> listOf("a") } } to listOf("output", "object"),
            { server.tool("notSerializableResult") { _, _: Empty -> NotSerializable(1) } } to listOf("output", "NotSerializable"),
        )
        for ((register, words) in cases) {
            val error = assertThrows<ToolwireException.Registration> { register() }
            for (word in words) assertTrue(error.detail.contains(word), "${error.detail} lacks $word")
        }
        assertEquals(emptyList<String>(), server.toolNames())
    }

    @Test
    fun `String, ToolResult and Unit results, a throw, and a blocking typed tool`() = runBlocking {
        val server = Server("results", "1")
        server.tool("text") { _, _: Empty -> "plain" }
        server.tool("whole") { _, _: Empty -> ToolResult.Error("told") }
        server.tool("nothing") { _, _: Empty -> }
        server.tool<Empty, String>("throws") { _, _ -> error("boom") }
        server.blockingTool("blocking") { _, args: ForecastArgs -> Forecast(args.city, listOf(1.0)) }
        server.testClient().use { client ->
            assertEquals(json("""[{"type":"text","text":"plain"}]"""), client.callTool("text").getValue("content"))
            val told = client.callTool("whole")
            assertTrue(told.isError())
            assertEquals("told", told.text())
            val nothing = client.callTool("nothing")
            assertEquals(json("[]"), nothing.getValue("content"))
            assertFalse(nothing.isError())
            val thrown = client.callTool("throws")
            assertTrue(thrown.isError() && thrown.text().contains("boom"), "$thrown")
            assertEquals(json("""{"city":"Rome","temperatures":[1.0]}"""), client.callTool("blocking", """{"city":"Rome"}""").getValue("structuredContent"))
            val unknown = assertThrows<McpError> { runBlocking { client.callTool("missing") } }
            assertEquals(-32602, unknown.code)
        }
    }
}
