import dev.toolwire.Server
import dev.toolwire.ToolDefinition
import dev.toolwire.ToolResult
import dev.toolwire.runStdio
import dev.toolwire.tool

private val schema = """{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer"}},"required":["city"]}"""

fun main() {
    val server = Server("weather", "1.0.0")
    server.tool(ToolDefinition(name = "forecast", description = "Forecast for a city.", inputSchemaJson = schema)) { _, args ->
        // args passed the schema; any JSON library reads it (this example needs none).
        val city = Regex(""""city"\s*:\s*"([^"]*)"""").find(args)!!.groupValues[1]
        val days = Regex(""""days"\s*:\s*(\d+)""").find(args)?.groupValues?.get(1)?.toInt() ?: 3
        ToolResult.Structured("""{"city":"$city","celsius":${List(days) { 20.5 }}}""")
    }
    server.runStdio()
}
