// The Kotlin server of docs/guides/auth.md (which includes the part between the markers;
// GuideAuthTest.kt tests it).
// --8<-- [start:server]
import dev.toolwire.BearerTokenValidator
import dev.toolwire.HttpServerOptions
import dev.toolwire.Server
import dev.toolwire.TokenGrant
import dev.toolwire.TokenVerdict
import dev.toolwire.ToolDefinition
import dev.toolwire.ToolResult
import dev.toolwire.runHttp
import dev.toolwire.tool

// What your authorization server issued (in a real app: verify a JWT, or ask the server).
val tokens = mapOf("secret-ada" to TokenGrant("ada", listOf("notes")), "secret-guest" to TokenGrant("guest", listOf()))

val checkToken = object : BearerTokenValidator {
    override fun validate(token: String): TokenVerdict {
        val grant = tokens[token] ?: return TokenVerdict.Invalid // 401: invalid or expired
        if ("notes" !in grant.scopes) return TokenVerdict.InsufficientScope("notes") // 403, naming it
        return TokenVerdict.Granted(grant) // the subject is the caller's principal
    }
}

val authOptions = HttpServerOptions(authorizationServers = listOf("https://auth.example.com"))

fun notesAuthServer(): Server {
    val server = Server("notes", "1.0.0")
    server.tool(ToolDefinition("count_notes")) { _, _ -> ToolResult.Text("3") }
    return server
}

fun main() = notesAuthServer().runHttp("127.0.0.1", 8000u, authOptions, checkToken)
// --8<-- [end:server]
