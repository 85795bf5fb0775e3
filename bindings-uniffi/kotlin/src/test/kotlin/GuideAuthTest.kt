// The test of docs/guides/auth.md, which includes the part between the markers.
// --8<-- [start:test]
import java.net.URI
import java.net.http.HttpClient
import java.net.http.HttpRequest
import java.net.http.HttpResponse
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

const val INITIALIZE = """{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"""

class NotesAuthTest {
    @Test
    fun `a bearer token guards the endpoint`() {
        notesAuthServer().serveHttp("127.0.0.1", 0u, authOptions, checkToken).use { http ->
            val client = HttpClient.newHttpClient()
            fun post(token: String?): HttpResponse<String> {
                val request = HttpRequest.newBuilder(URI(http.url()))
                    .header("content-type", "application/json")
                    .header("accept", "application/json, text/event-stream")
                if (token != null) request.header("authorization", "Bearer $token")
                return client.send(request.POST(HttpRequest.BodyPublishers.ofString(INITIALIZE)).build(), HttpResponse.BodyHandlers.ofString())
            }
            // No token: 401, and the challenge says where the metadata is.
            val refused = post(null)
            assertEquals(401, refused.statusCode())
            val challenge = refused.headers().firstValue("www-authenticate").get()
            val metadataUrl = Regex("resource_metadata=\"([^\"]+)\"").find(challenge)!!.groupValues[1]
            // The protected-resource metadata (RFC 9728) names the authorization server.
            val metadata = client.send(HttpRequest.newBuilder(URI(metadataUrl)).build(), HttpResponse.BodyHandlers.ofString())
            val servers = Json.parseToJsonElement(metadata.body()).jsonObject["authorization_servers"]!!.jsonArray
            assertEquals(listOf("https://auth.example.com"), servers.map { it.jsonPrimitive.content })

            // A token without the scope: 403, naming it.
            val guest = post("secret-guest")
            assertEquals(403, guest.statusCode())
            assertTrue(guest.headers().firstValue("www-authenticate").get().contains("scope=\"notes\""))

            // A good token: served.
            val ada = post("secret-ada")
            assertEquals(200, ada.statusCode())
            val result = Json.parseToJsonElement(ada.body()).jsonObject["result"]!!.jsonObject
            assertEquals("notes", result["serverInfo"]!!.jsonObject["name"]!!.jsonPrimitive.content)
            http.stop()
            http.waitBlocking()
        }
    }
}
// --8<-- [end:test]
