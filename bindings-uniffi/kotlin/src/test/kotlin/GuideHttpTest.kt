// The test of docs/guides/http.md, which includes the part between the markers.
// --8<-- [start:test]
import dev.toolwire.HttpServerOptions
import java.net.URI
import java.net.http.HttpClient
import java.net.http.HttpRequest
import java.net.http.HttpResponse
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Test

class NotesHttpTest {
    @Test
    fun `any HTTP client speaks to it - JSON-RPC in a POST`() {
        // Port 0: a free one. jsonResponse: every answer one JSON body (by default one that is
        // not ready at once streams as SSE, with the call's progress and logs before it).
        notesHttpServer().serveHttp("127.0.0.1", 0u, HttpServerOptions(jsonResponse = true)).use { http ->
            val client = HttpClient.newHttpClient()
            fun post(message: String, session: String? = null): HttpResponse<String> {
                val request = HttpRequest.newBuilder(URI(http.url()))
                    .header("content-type", "application/json")
                    .header("accept", "application/json, text/event-stream")
                if (session != null) request.header("mcp-session-id", session).header("mcp-protocol-version", "2025-11-25")
                return client.send(request.POST(HttpRequest.BodyPublishers.ofString(message)).build(), HttpResponse.BodyHandlers.ofString())
            }
            val init = post("""{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"jdk","version":"1"}}}""")
            val session = init.headers().firstValue("mcp-session-id").get() // the session the server opened
            assertEquals(202, post("""{"jsonrpc":"2.0","method":"notifications/initialized"}""", session).statusCode())
            val call = post("""{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add_note","arguments":{"text":"buy milk"}}}""", session)
            val result = Json.parseToJsonElement(call.body()).jsonObject["result"]!!.jsonObject
            assertEquals("1 notes", result["content"]!!.jsonArray[0].jsonObject["text"]!!.jsonPrimitive.content)
            http.stop()
            http.waitBlocking() // its sessions have ended
        }
    }
}
// --8<-- [end:test]
