package dev.toolwire

import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows
import org.junit.jupiter.api.io.TempDir
import java.nio.file.Files
import java.nio.file.Path
import java.security.MessageDigest

/** The Skills extension (SEP-2640) and declared extensions, from Kotlin. */
class SkillsTest {
    private fun skillMd(name: String) = "---\nname: $name\ndescription: Does things\n---\n# $name\n"

    private fun digest(bytes: ByteArray) =
        "sha256:" + MessageDigest.getInstance("SHA-256").digest(bytes).joinToString("") { "%02x".format(it) }

    private fun RawClient.request(id: Int, method: String, params: String): JsonObject {
        send("""{"jsonrpc":"2.0","id":$id,"method":"$method","params":$params}""")
        return recvObject()
    }

    // --8<-- [start:from-code]
    @Test
    fun `a skill from code is listed, described and read`() {
        val server = Server("skills", "1")
        val md = skillMd("invoices").toByteArray()
        server.addSkill("acme/invoices", md, mapOf("templates/a.md" to "# A\n".toByteArray(), "logo.bin" to byteArrayOf(0, -1)))
        RawClient(server).use { client ->
            val caps = client.initialize().getValue("capabilities").jsonObject
            assertEquals(Json.parseToJsonElement("""{"directoryRead":true}"""), caps.getValue("extensions").jsonObject["io.modelcontextprotocol/skills"])
            val skills = client.request(1, "skills/list", "{}").getValue("result").jsonObject.getValue("skills")
            val expected = """[{"uri":"skill://acme/invoices/SKILL.md","frontmatter":{"name":"invoices","description":"Does things"},"resources":[""" +
                """{"uri":"skill://acme/invoices/SKILL.md","digest":"${digest(md)}","size":${md.size}},""" +
                """{"uri":"skill://acme/invoices/logo.bin","digest":"${digest(byteArrayOf(0, -1))}","size":2},""" +
                """{"uri":"skill://acme/invoices/templates/a.md","digest":"${digest("# A\n".toByteArray())}","size":4}]}]"""
            assertEquals(Json.parseToJsonElement(expected), skills)
            val blob = client.request(2, "resources/read", """{"uri":"skill://acme/invoices/logo.bin"}""")
            assertEquals("AP8=", blob.getValue("result").jsonObject.getValue("contents").jsonArray[0].jsonObject.getValue("blob").jsonPrimitive.content)
            val unknown = client.request(3, "skills/get", """{"uri":"skill://acme/SKILL.md"}""")
            assertEquals("-32602", unknown.getValue("error").jsonObject.getValue("code").toString())
        }
        assertTrue(server.removeSkill("acme/invoices"))
        assertFalse(server.removeSkill("acme/invoices"))
    }
    // --8<-- [end:from-code]

    @Test
    fun `what the spec refuses is a Registration error naming it`() {
        val server = Server("skills", "1")
        val cases = listOf(
            Triple("pdf", skillMd("other"), mapOf<String, String>()) to "must be its name",
            Triple("pdf", "no frontmatter", mapOf<String, String>()) to "frontmatter",
            Triple("pdf", skillMd("pdf"), mapOf("../escape.md" to "x")) to "`.` and `..`",
        )
        for ((case, expected) in cases) {
            val (path, md, files) = case
            val err = assertThrows<ToolwireException.Registration> {
                server.addSkill(path, md.toByteArray(), files.mapValues { it.value.toByteArray() })
            }
            assertTrue(err.message!!.contains(expected), "$expected: ${err.message}")
        }
    }

    // --8<-- [start:tree]
    @Test
    fun `a tree is loaded, reloaded and kept inside its root`(@TempDir dir: Path) {
        val root = dir.resolve("skills")
        Files.createDirectories(root.resolve("pdf/templates"))
        Files.writeString(root.resolve("pdf/SKILL.md"), skillMd("pdf"))
        Files.writeString(root.resolve("pdf/templates/invoice.md"), "v1")
        val server = Server("skills", "1")
        assertEquals(1u, server.loadSkills(root.toString()))
        RawClient(server).use { client ->
            client.initialize()
            val listing = client.request(1, "resources/directory/read", """{"uri":"skill://pdf"}""")
            val names = listing.getValue("result").jsonObject.getValue("resources").jsonArray.map {
                it.jsonObject.getValue("name").jsonPrimitive.content to it.jsonObject.getValue("mimeType").jsonPrimitive.content
            }
            assertEquals(listOf("SKILL.md" to "text/markdown", "templates" to "inode/directory"), names)
            Files.writeString(root.resolve("pdf/templates/invoice.md"), "v2")
            assertEquals(1u, server.loadSkills(root.toString()))
            assertEquals("notifications/resources/list_changed", client.recvObject().getValue("method").jsonPrimitive.content)
            val read = client.request(2, "resources/read", """{"uri":"skill://pdf/templates/invoice.md"}""")
            assertEquals("v2", read.getValue("result").jsonObject.getValue("contents").jsonArray[0].jsonObject.getValue("text").jsonPrimitive.content)
            Files.writeString(dir.resolve("secret.txt"), "not yours")
            Files.createSymbolicLink(root.resolve("pdf/secret.txt"), dir.resolve("secret.txt"))
            val err = assertThrows<ToolwireException.Registration> { server.loadSkills(root.toString()) }
            assertTrue(err.message!!.contains("leads out of the skills directory"), err.message)
        }
    }
    // --8<-- [end:tree]

    // --8<-- [start:extensions]
    @Test
    fun `a tool sees the extensions the client declared`() {
        val server = Server("ext", "1")
        server.declareExtension("com.example/widgets", """{"colors":["red"]}""")
        server.tool(ToolDefinition(name = "which")) { ctx, _ ->
            ToolResult.Structured("""{"declared":${ctx.clientExtensionJson("com.example/widgets") ?: "null"}}""")
        }
        RawClient(server).use { client ->
            val init = client.initialize(capabilities = """{"extensions":{"com.example/widgets":{"v":2}}}""")
            assertEquals(
                Json.parseToJsonElement("""{"com.example/widgets":{"colors":["red"]}}"""),
                init.getValue("capabilities").jsonObject.getValue("extensions"),
            )
            client.call(1, "which", "{}")
            val result = client.recvObject().getValue("result").jsonObject
            assertEquals(Json.parseToJsonElement("""{"declared":{"v":2}}"""), result.getValue("structuredContent"))
        }
        assertThrows<ToolwireException.Registration> { server.declareExtension("widgets", "{}") }
        assertThrows<ToolwireException.Registration> { server.declareExtension("com.example/x", "not json") }
    }
    // --8<-- [end:extensions]

    @Test
    fun `a watched tree is served again when it changes`(@TempDir dir: Path) {
        Files.createDirectories(dir.resolve("pdf"))
        Files.writeString(dir.resolve("pdf/SKILL.md"), skillMd("pdf"))
        val server = Server("skills", "1")
        assertEquals(1u, server.watchSkills(dir.toString(), 10u))
        RawClient(server).use { client ->
            client.initialize()
            Files.createDirectories(dir.resolve("notes"))
            Files.writeString(dir.resolve("notes/SKILL.md"), skillMd("notes"))
            // The wait is for the notification the watch's reload sends.
            assertEquals("notifications/resources/list_changed", client.recvObject().getValue("method").jsonPrimitive.content)
            val skills = client.request(1, "skills/list", "{}").getValue("result").jsonObject.getValue("skills").jsonArray
            assertEquals(listOf("skill://notes/SKILL.md", "skill://pdf/SKILL.md"), skills.map { it.jsonObject.getValue("uri").jsonPrimitive.content })
        }
        assertThrows<ToolwireException> { server.watchSkills(dir.toString(), 0u) }
    }
}
