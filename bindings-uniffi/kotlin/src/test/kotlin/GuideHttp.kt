// The Kotlin server of docs/guides/http.md (which includes the part between the markers;
// GuideHttpTest.kt tests it).
// --8<-- [start:server]
import dev.toolwire.Server
import dev.toolwire.runHttp
import dev.toolwire.tool
import kotlinx.serialization.Serializable

@Serializable
data class Note(val text: String)

fun notesHttpServer(): Server {
    val notes = mutableListOf<String>()
    val server = Server("notes", "1.0.0")
    server.tool("add_note", description = "Adds a note.") { context, note: Note ->
        context.progress(1.0, 1.0, "saved") // on the call's SSE stream, when the client asked
        synchronized(notes) {
            notes += note.text
            "${notes.size} notes"
        }
    }
    return server
}

// The engine serves HTTP itself at http://127.0.0.1:8000/mcp until the JVM stops (Ctrl-C).
fun main() = notesHttpServer().runHttp("127.0.0.1", 8000u) { url -> println("serving $url") }
// --8<-- [end:server]
