package dev.toolwire

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Assumptions.assumeTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.io.TempDir
import com.sun.jna.Platform
import java.io.File
import java.util.concurrent.TimeUnit

/** JNA's search path for bare library names, worked out from ld.so.conf instead of `ldconfig -p`. */
class NativeLibraryLocationTest {
    @TempDir
    lateinit var root: File

    private fun write(path: String, text: String) = File(root, path).apply { parentFile.mkdirs() }.writeText(text)

    private fun directories(vararg paths: String) = paths.forEach { File(root, it).mkdirs() }

    @Test
    fun `JNA is handed the path it would work out itself, in its order`() {
        // JNA runs /sbin/ldconfig itself; where there is none (musl), it has nothing to add.
        assumeTrue(File("/sbin/ldconfig").canExecute(), "no /sbin/ldconfig here")
        val java = File(System.getProperty("java.home"), "bin/java").path
        val process = ProcessBuilder(java, "-cp", System.getProperty("java.class.path"), "dev.toolwire.JnaOwnPlatformPath")
            .redirectError(ProcessBuilder.Redirect.INHERIT)
            .start()
        val jnas = process.inputStream.bufferedReader().readText().trim().split(File.pathSeparator).filter { it.isNotEmpty() }
        assertTrue(process.waitFor(60, TimeUnit.SECONDS))
        assertEquals(0, process.exitValue())
        assertTrue(jnas.isNotEmpty(), "JNA worked out no path")
        val multiArch = NativeLibraryLocation.jnaMultiArch()
        val bits = if (Platform.is64Bit()) 64 else 32
        val ours = NativeLibraryLocation.linuxPlatformPath(File("/"), bits, multiArch)
        val fixedDirectories = listOf("/usr/lib/$multiArch", "/lib/$multiArch", "/usr/lib$bits", "/lib$bits", "/usr/lib", "/lib")
        // JNA's fixed directories come first in both, in the same order; then every directory
        // of a cached library (JNA's) is in ours, which may add configured ones with none yet.
        val fixed = jnas.takeWhile { it in fixedDirectories }
        assertEquals(fixed, ours.take(fixed.size), "ours: $ours")
        assertEquals(emptySet<String>(), jnas.toSet() - ours.toSet(), "ours: $ours")
        // Once the library is in use in this JVM, JNA was handed exactly ours.
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
            /opt/a:/opt/b   # one directory per line: no directory has this name
            HWCAP 0 nosegneg
               /opt/c=libc6
            /opt/d///  ${"\t"}
            includes/not/an/include
            include${"\t"}local.conf   other.conf
            """.trimIndent(),
        )
        write("etc/ld.so.conf.d/b.conf", "/opt/e\n")
        write("etc/ld.so.conf.d/a.conf", "/opt/f\n/opt/c\n")
        write("etc/ld.so.conf.d/.hidden.conf", "/opt/hidden\n")
        write("etc/ld.so.conf.d/notes.txt", "/opt/notes\n")
        write("etc/local.conf", "/opt/g\n")
        write("etc/other.conf", "/opt/h\n")
        directories(
            "opt/a", "opt/b", "opt/c", "opt/d", "opt/e", "opt/f", "opt/g", "opt/h", "opt/hidden", "opt/notes",
            "usr/lib/test-linux-gnu", "lib64", "lib", "opt/f/glibc-hwcaps/x86-64-v3", "opt/f/glibc-hwcaps/x86-64-v2",
        )
        assertEquals(
            listOf(
                "/usr/lib/test-linux-gnu", "/lib64", "/usr/lib", "/lib", "/opt/f", "/opt/c", "/opt/e", "/opt/d", "/opt/g", "/opt/h",
                "/opt/f/glibc-hwcaps/x86-64-v2", "/opt/f/glibc-hwcaps/x86-64-v3",
            ),
            NativeLibraryLocation.linuxPlatformPath(root, 64, "test-linux-gnu"),
        )
    }

    @Test
    fun `include patterns match file names as glob does`() {
        fun matches(glob: String, name: String) = NativeLibraryLocation.globMatches(glob, name)
        assertTrue(matches("*.conf", "libc.conf"))
        assertFalse(matches("*.conf", ".conf"), "a leading dot is matched only by a dot")
        assertFalse(matches("*", ".hidden"))
        assertTrue(matches(".*", ".hidden"))
        assertTrue(matches("\\.h*", ".hidden"))
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
        assertTrue(matches("\\*", "*"))
        assertFalse(matches("\\*", "x"))
        assertTrue(matches("*", ""))
        assertFalse(matches("?", ""))
    }

    @Test
    fun `an include loop ends, and no configuration leaves JNA's own directories`() {
        write("etc/ld.so.conf", "include ld.so.conf.d/*.conf\n/opt/a\n")
        write("etc/ld.so.conf.d/loop.conf", "include /etc/ld.so.conf\n")
        directories("opt/a", "usr/lib32", "usr/lib")
        assertEquals(listOf("/usr/lib32", "/usr/lib", "/opt/a"), NativeLibraryLocation.linuxPlatformPath(root, 32, "i386-linux-gnu"))
        // A file too large to be a configuration is not read (the bound on what a start reads).
        File(root, "etc/ld.so.conf").writeText("/opt/a\n" + "#".repeat(1 shl 20))
        assertEquals(listOf("/usr/lib32", "/usr/lib"), NativeLibraryLocation.linuxPlatformPath(root, 32, "i386-linux-gnu"))
        File(root, "etc").deleteRecursively()
        assertEquals(listOf("/usr/lib32", "/usr/lib"), NativeLibraryLocation.linuxPlatformPath(root, 32, "i386-linux-gnu"))
    }
}
