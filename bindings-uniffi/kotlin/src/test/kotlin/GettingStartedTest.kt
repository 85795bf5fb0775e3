// The test of docs/getting-started/kotlin.md, which includes the part between the markers.
// --8<-- [start:test]
import dev.toolwire.testing.TestClient
import kotlinx.coroutines.runBlocking
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Test

class HelloTest {
    @Test
    fun greet() = runBlocking {
        TestClient.connect(helloServer()).use { client ->
            val result = client.callTool("greet", """{"name":"Ada"}""")
            assertEquals("Hello, Ada!", result["content"]!!.jsonArray[0].jsonObject["text"]!!.jsonPrimitive.content)
        }
    }
}
// --8<-- [end:test]
