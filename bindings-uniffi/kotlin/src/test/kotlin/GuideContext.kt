// The Kotlin server of docs/guides/context.md (which includes the part between the markers;
// GuideContextTest.kt tests it).
// --8<-- [start:server]
import dev.toolwire.LogLevel
import dev.toolwire.Server
import dev.toolwire.runStdio
import dev.toolwire.tool
import kotlinx.serialization.Serializable
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.boolean
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive

@Serializable
data class Booking(val city: String, val nights: Int)

const val CONFIRM = """{"type":"object","properties":{"confirm":{"type":"boolean"}},"required":["confirm"]}"""

fun travelServer(): Server {
    val server = Server("travel", "1.0.0")
    server.tool("book", description = "Books a hotel once the user confirms the price.") { context, args: Booking ->
        context.log(LogLevel.INFO, "searching ${args.city}", null) // a log message, at the level the client set
        listOf("searching", "comparing", "holding a room").forEachIndexed { step, doing ->
            context.progress(step + 1.0, 3.0, doing) // sent if the client asked for progress
        }
        // Asks the user through the client; a cancelled call cancels this coroutine here.
        val question = """{"message":"Book ${args.nights} nights in ${args.city} for 480 EUR?","requestedSchema":$CONFIRM}"""
        val answer = Json.parseToJsonElement(context.elicit(question)).jsonObject
        val confirmed = answer["content"]?.jsonObject?.get("confirm")?.jsonPrimitive?.boolean == true
        if (answer["action"]?.jsonPrimitive?.content != "accept" || !confirmed) "Not booked." else "Booked ${args.nights} nights in ${args.city}."
    }
    return server
}

fun main() = travelServer().runStdio()
// --8<-- [end:server]
