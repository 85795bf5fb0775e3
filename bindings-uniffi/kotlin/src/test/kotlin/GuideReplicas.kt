// The Kotlin replica of docs/guides/replicas.md (which includes the part between the markers;
// GuideReplicasTest.kt tests it).
// --8<-- [start:server]
import dev.toolwire.Server
import dev.toolwire.ServerConfig
import dev.toolwire.TaskSupport
import dev.toolwire.runHttp
import dev.toolwire.tool
import kotlinx.serialization.Serializable
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.boolean
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive

@Serializable
data class Folder(val folder: String)

/** One replica: every replica gets the same Redis and the same requestState keys. */
fun replica(redisUrl: String, stateKeys: List<String>): Server {
    val server = Server("archive", "1.0.0", config = ServerConfig(redis = redisUrl, requestStateKeys = stateKeys))
    val confirm = """{"type":"object","properties":{"confirm":{"type":"boolean"}},"required":["confirm"]}"""
    server.tool("archive", description = "Archives a folder once the user confirms.", taskSupport = TaskSupport.OPTIONAL) { context, args: Folder ->
        val answer = Json.parseToJsonElement(context.elicit("""{"message":"Archive ${args.folder}?","requestedSchema":$confirm}""")).jsonObject
        val confirmed = answer["action"]?.jsonPrimitive?.content == "accept" &&
            answer["content"]?.jsonObject?.get("confirm")?.jsonPrimitive?.boolean == true
        if (confirmed) "Archived ${args.folder}." else "${args.folder} left as it was."
    }
    return server
}

// The first key seals, all open: add the new key second, then move it first, to rotate.
fun main() = replica(System.getenv("REDIS_URL"), System.getenv("STATE_KEYS").split(",")).runHttp("127.0.0.1", 8000u) { url -> println("serving $url") }
// --8<-- [end:server]
