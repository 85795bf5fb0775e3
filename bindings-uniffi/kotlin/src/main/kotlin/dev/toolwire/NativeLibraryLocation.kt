// Where JNA loads the engine's library from.
package dev.toolwire

import com.sun.jna.Platform
import java.io.File
import java.net.JarURLConnection
import java.nio.file.Files
import java.nio.file.StandardCopyOption
import java.util.zip.CRC32
import java.util.zip.CheckedInputStream

/**
 * The library JNA is to load, for the generated bindings (their `findLibraryName`, patched at
 * build time by PatchBindings.java) and [NativeLink] alike.
 *
 * The jar carries the library as a resource. Left to itself, JNA copies a resource library to
 * a new temporary file at every start (inflating and writing the whole library, over 10 MB, and
 * deleting it once loaded): the largest part of a server's start after the JVM's own. Here the
 * first start copies it once into the user's cache directory, named by the jar entry's CRC-32
 * and size, and every start after that loads that copy by its path.
 *
 * - `uniffi.component.toolwire.libraryOverride` (a name or a path) still wins: the generated
 *   code reads it before it asks here.
 * - A library on the class path as a plain file (target/classes in the tests) is loaded where
 *   it is.
 * - The copies go in `toolwire/` under `$XDG_CACHE_HOME` or `~/.cache` on Linux,
 *   `~/Library/Caches` on macOS, `%LOCALAPPDATA%` on Windows, or under the directory
 *   `-Dtoolwire.library.cache=DIR` names; `-Dtoolwire.library.cache=false` keeps JNA's own
 *   extraction at every start.
 * - When the copy cannot be made (no writable cache directory, no resource) JNA's own search
 *   and extraction run, as before.
 *
 * JNA's own native part (libjnidispatch, in JNA's jar) is copied out at every start the same
 * way, and that copy's temporary file name is what first initialises `SecureRandom` in most
 * processes. [prepare], which the generated code calls before its first use of JNA (patched in
 * too), keeps a copy of it in the same cache and points `jna.boot.library.path` there, unless
 * that property is already set (it has no effect when the app had JNA initialised already).
 *
 * A copy is written under a name of its own and renamed into place, so servers starting at
 * once never load a partial file; its CRC-32 is checked while it is written. Copies of other
 * versions are left where they are.
 */
internal object NativeLibraryLocation {
    private const val NAME = "toolwire_uniffi"

    /** What to hand JNA: a path when one was found, else the plain name (JNA's own search). */
    @JvmStatic
    val library: String by lazy { System.getProperty("uniffi.component.toolwire.libraryOverride") ?: locate() }

    @Volatile private var prepared = false

    /**
     * Before the first use of JNA: JNA's native part from the cache (see above). Cheap once
     * done; the generated code calls it before each call into the library.
     */
    @JvmStatic
    fun prepare() {
        if (prepared) return
        synchronized(this) {
            if (prepared) return
            try {
                prepareDispatch()
            } finally {
                prepared = true
            }
        }
    }

    private fun prepareDispatch() {
        val cacheSetting = System.getProperty("toolwire.library.cache")
        if (cacheSetting == "false" || System.getProperty("jna.boot.library.path") != null) return
        // Read by Native's static initialiser: no effect once JNA is in use (set anyway).
        val loader = NativeLibraryLocation::class.java.classLoader ?: return
        // (Spelled out rather than String.replace: kotlin.text's facade is a large class to load.)
        val fileName = if (Platform.isMac()) "libjnidispatch.jnilib" else System.mapLibraryName("jnidispatch")
        val copy = resourceFile(loader, "com/sun/jna/${Platform.RESOURCE_PREFIX}/$fileName", fileName, cacheSetting) ?: return
        System.setProperty("jna.boot.library.path", File(copy).parent)
    }

    private fun locate(): String {
        val cacheSetting = System.getProperty("toolwire.library.cache")
        if (cacheSetting == "false") return NAME
        val loader = NativeLibraryLocation::class.java.classLoader ?: return NAME
        val fileName = System.mapLibraryName(NAME)
        return resourceFile(loader, "${Platform.RESOURCE_PREFIX}/$fileName", fileName, cacheSetting) ?: NAME
    }

    /** The resource as a file: where it is, or a cached copy of the jar entry; null when neither. */
    private fun resourceFile(loader: ClassLoader, resource: String, fileName: String, cacheSetting: String?): String? {
        val url = loader.getResource(resource) ?: return null
        return try {
            when (url.protocol) {
                "file" -> File(url.toURI()).path
                "jar" -> cachedCopy(url.openConnection() as JarURLConnection, fileName, cacheSetting)
                else -> null
            }
        } catch (_: Exception) {
            null
        }
    }

    private fun cachedCopy(connection: JarURLConnection, fileName: String, cacheSetting: String?): String? {
        val entry = connection.jarEntry
        val size = entry.size
        val crc = entry.crc
        if (size <= 0 || crc < 0) return null
        // Absolute: JNA takes a relative path for a bare library name.
        val root = cacheSetting?.takeIf { it.isNotEmpty() }?.let { File(it).absoluteFile }
            ?: defaultCacheRoot() ?: return null
        val directory = File(root, "toolwire/${java.lang.Long.toHexString(crc)}-$size")
        val library = File(directory, fileName)
        if (library.length() == size) return library.path
        Files.createDirectories(directory.toPath())
        val partial = File(directory, "$fileName.${ProcessHandle.current().pid()}.partial")
        try {
            val checksum = CRC32()
            CheckedInputStream(connection.inputStream, checksum).use { input ->
                Files.copy(input, partial.toPath(), StandardCopyOption.REPLACE_EXISTING)
            }
            if (checksum.value != crc || partial.length() != size) return null
            partial.setExecutable(true)
            try {
                Files.move(partial.toPath(), library.toPath(), StandardCopyOption.ATOMIC_MOVE)
            } catch (e: java.io.IOException) {
                // Another process put its copy there first (or, on Windows, has it loaded).
                if (library.length() != size) throw e
            }
        } finally {
            partial.delete()
        }
        return library.path
    }

    private fun defaultCacheRoot(): File? {
        val home = System.getProperty("user.home")?.takeIf { it.isNotEmpty() }
        return when {
            Platform.isWindows() -> System.getenv("LOCALAPPDATA")?.takeIf { it.isNotEmpty() }?.let(::File)
                ?: home?.let { File(it, "AppData\\Local") }
            Platform.isMac() -> home?.let { File(it, "Library/Caches") }
            else -> System.getenv("XDG_CACHE_HOME")?.takeIf { File(it).isAbsolute }?.let(::File)
                ?: home?.let { File(it, ".cache") }
        }
    }
}
