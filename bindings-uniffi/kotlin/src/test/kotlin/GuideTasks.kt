// The Kotlin server of docs/guides/tasks.md (which includes the part between the markers;
// GuideTasksTest.kt tests it).
// --8<-- [start:server]
import dev.toolwire.Server
import dev.toolwire.ServerConfig
import dev.toolwire.TaskSupport
import dev.toolwire.runStdio
import dev.toolwire.tool
import kotlinx.serialization.Serializable
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.boolean
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive

@Serializable
data class Archive(val folder: String)

const val ARCHIVE_CONFIRM = """{"type":"object","properties":{"confirm":{"type":"boolean"}},"required":["confirm"]}"""

fun archiveServer(): Server {
    // Finished tasks are kept 15 minutes for their clients to fetch (default: an hour), and clients
    // are told to poll every 100 ms: a confirmation is quick (default: every second).
    val server = Server("archive", "1.0.0", config = ServerConfig(taskTtlMs = 15uL * 60_000uL, taskPollIntervalMs = 100uL))
    // A task for clients that can follow one.
    server.tool("archive", description = "Archives a folder once the user confirms.", taskSupport = TaskSupport.OPTIONAL) { context, args: Archive ->
        val answer = Json.parseToJsonElement(context.elicit("""{"message":"Archive ${args.folder}?","requestedSchema":$ARCHIVE_CONFIRM}""")).jsonObject
        val confirmed = answer["content"]?.jsonObject?.get("confirm")?.jsonPrimitive?.boolean == true
        if (answer["action"]?.jsonPrimitive?.content != "accept" || !confirmed) {
            "${args.folder} left as it was."
        } else {
            context.progress(1.0, 2.0, "packing") // in a task: its status message
            "Archived ${args.folder}."
        }
    }
    return server
}

fun main() = archiveServer().runStdio()
// --8<-- [end:server]
