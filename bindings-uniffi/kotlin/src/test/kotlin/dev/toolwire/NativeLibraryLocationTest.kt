package dev.toolwire

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.io.TempDir
import java.io.File

/** JNA's search path for bare library names, worked out from ld.so.conf instead of `ldconfig -p`. */
class NativeLibraryLocationTest {
    @TempDir
    lateinit var root: File

    private fun write(path: String, text: String) = File(root, path).apply { parentFile.mkdirs() }.writeText(text)

    private fun directories(vararg paths: String) = paths.forEach { File(root, it).mkdirs() }

    @Test
    fun `every directory ldconfig names is searched, and JNA was handed that path`() {
        // What JNA runs itself on Linux: the directories of the libraries in ld.so.cache.
        val ldconfig = ProcessBuilder("/sbin/ldconfig", "-p").start()
        val named = ldconfig.inputStream.bufferedReader().readLines()
            .mapNotNull { line -> line.substringAfter(" => ", "").takeIf { it.isNotEmpty() }?.let { File(it).parent } }
            .toSet()
        assertEquals(0, ldconfig.waitFor())
        assertTrue(named.isNotEmpty(), "ldconfig -p named no library")
        val ours = NativeLibraryLocation.linuxPlatformPath(File("/"), 64)
        assertEquals(emptySet<String>(), named - ours.toSet(), "ours: $ours")
        // Once the library is in use, JNA searches exactly those (nothing set the property before).
        Server("t", "1", null, ServerConfig()).close()
        assertEquals(ours.joinToString(File.pathSeparator), System.getProperty("jna.platform.library.path"))
    }

    @Test
    fun `ld-so-conf is read as ldconfig reads it`() {
        write(
            "etc/ld.so.conf",
            """
            # a comment
            include /etc/ld.so.conf.d/*.conf
            /opt/a:/opt/b,/opt/missing   # no such directory: left out
            hwcap 0 nosegneg
            /opt/c=libc6	/opt/c/
            include local.conf
            """.trimIndent(),
        )
        write("etc/ld.so.conf.d/b.conf", "/opt/d/\n")
        write("etc/ld.so.conf.d/a.conf", "/opt/e\n/opt/a\n")
        write("etc/ld.so.conf.d/notes.txt", "/opt/f\n")
        write("etc/local.conf", "/opt/g\n")
        directories("opt/a", "opt/b", "opt/c", "opt/d", "opt/e", "opt/f", "opt/g", "usr/lib64", "lib")
        assertEquals(
            listOf("/opt/e", "/opt/a", "/opt/d", "/opt/b", "/opt/c", "/opt/g", "/usr/lib64", "/lib"),
            NativeLibraryLocation.linuxPlatformPath(root, 64),
        )
    }

    @Test
    fun `include patterns match file names as glob does`() {
        fun matches(glob: String, name: String) = NativeLibraryLocation.globMatches(glob, 0, name, 0)
        assertTrue(matches("*.conf", "libc.conf"))
        assertTrue(matches("*.conf", ".conf"))
        assertFalse(matches("*.conf", "libc.conf~"))
        assertFalse(matches("*.conf", "libc.cnf"))
        assertTrue(matches("x86_64-*-gnu.conf", "x86_64-linux-gnu.conf"))
        assertTrue(matches("?.conf", "a.conf"))
        assertFalse(matches("?.conf", "ab.conf"))
        assertTrue(matches("[a-c]*", "brew"))
        assertFalse(matches("[a-c]*", "drew"))
        assertTrue(matches("[!a-c]*", "drew"))
        assertTrue(matches("[^a]x", "bx"))
        assertTrue(matches("[]]x", "]x"))
        assertTrue(matches("a[b", "a[b"))
        assertFalse(matches("a[b", "ab"))
        assertTrue(matches("*", ""))
        assertFalse(matches("?", ""))
    }

    @Test
    fun `an include loop ends, and no configuration leaves JNA's own directories`() {
        write("etc/ld.so.conf", "include ld.so.conf.d/*.conf\n/opt/a\n")
        write("etc/ld.so.conf.d/loop.conf", "include /etc/ld.so.conf\n")
        directories("opt/a", "usr/lib32", "usr/lib")
        assertEquals(listOf("/opt/a", "/usr/lib32", "/usr/lib"), NativeLibraryLocation.linuxPlatformPath(root, 32))
        File(root, "etc").deleteRecursively()
        assertEquals(listOf("/usr/lib32", "/usr/lib"), NativeLibraryLocation.linuxPlatformPath(root, 32))
    }
}
