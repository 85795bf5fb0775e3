// The Kotlin getting-started server (docs/getting-started/kotlin.md includes the part between
// the markers; GettingStartedTest.kt tests it).
// --8<-- [start:server]
import dev.toolwire.Description
import dev.toolwire.Server
import dev.toolwire.runStdio
import dev.toolwire.tool
import kotlinx.serialization.Serializable

@Serializable
data class Greeting(@Description("Who to greet") val name: String)

fun helloServer(): Server {
    val server = Server("hello", "1.0.0")
    server.tool("greet", description = "Greets someone by name.") { _, args: Greeting -> "Hello, ${args.name}!" }
    return server
}

fun main() = helloServer().runStdio() // serves stdio until the client hangs up
// --8<-- [end:server]
