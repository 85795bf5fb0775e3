// The Kotlin server of docs/guides/resources.md (which includes the part between the markers;
// GuideResourcesTest.kt tests it).
// --8<-- [start:server]
import dev.toolwire.ContentBlock
import dev.toolwire.PromptArgumentDefinition
import dev.toolwire.PromptDefinition
import dev.toolwire.PromptMessageRecord
import dev.toolwire.PromptRendering
import dev.toolwire.PromptRole
import dev.toolwire.ResourceContent
import dev.toolwire.ResourceDefinition
import dev.toolwire.Server
import dev.toolwire.ToolwireException
import dev.toolwire.prompt
import dev.toolwire.promptCompletion
import dev.toolwire.resource
import dev.toolwire.runStdio
import dev.toolwire.templateCompletion

val notes = mapOf("2026-11-22" to "Busy: three meetings.", "2026-11-23" to "Quiet.")

fun notesServer(): Server {
    val server = Server("notes", "1.0.0")
    server.resource(ResourceDefinition("notes://readme", "readme", mimeType = "text/plain")) { uri, _ ->
        listOf(ResourceContent(uri, text = "One note a day, at notes://day/{date}."))
    }
    // A template: its variables come as the second parameter.
    server.resource(ResourceDefinition("notes://day/{date}", "notes of a day", mimeType = "text/plain")) { uri, variables ->
        val date = variables.getValue("date")
        val text = notes[date] ?: throw ToolwireException.NotFound("no notes on $date") // the client gets -32002
        listOf(ResourceContent(uri, text = text))
    }
    server.templateCompletion("notes://day/{date}") { _, value, _ -> notes.keys.filter { it.startsWith(value) } }

    val arguments = listOf(
        PromptArgumentDefinition("date", "The day, as YYYY-MM-DD.", required = true),
        PromptArgumentDefinition("tone", "How long the summary may be."),
    )
    server.prompt(PromptDefinition("summarize", description = "Summarize a day's notes.", arguments = arguments)) { args ->
        val date = args.getValue("date")
        val text = "Summarize the notes of $date (${args["tone"] ?: "short"}): ${notes[date] ?: "none"}"
        PromptRendering(listOf(PromptMessageRecord(PromptRole.USER, ContentBlock.Text(text))))
    }
    server.promptCompletion("summarize") { argument, value, _ ->
        if (argument == "tone") listOf("short", "detailed").filter { it.startsWith(value) } else emptyList()
    }
    return server
}

fun main() = notesServer().runStdio()
// --8<-- [end:server]
