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
 *
 * On Linux, JNA's first use also runs `ldconfig -p` in a subprocess to learn the directories
 * it searches for libraries loaded by bare name (`jna.platform.library.path`): 40–60 ms of a
 * start here, for a library JNA is handed by path. [prepare] sets that property first, when
 * it is unset, as JNA would: its six fixed directories first, in its order, then the
 * directories of `/etc/ld.so.conf` and its includes (what `ldconfig` builds its cache from) and
 * their `glibc-hwcaps` subdirectories, instead of those of the libraries in the cache. Another
 * library the app loads through JNA by bare name is found in the same place; one in a configured
 * directory that `ldconfig` has not been run over since is now found too. Setting the property
 * yourself, or `-Dtoolwire.library.cache=false`, keeps JNA's own search.
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
                preparePlatformPath()
                prepareDispatch()
            } finally {
                prepared = true
            }
        }
    }

    /** JNA's search path for bare library names, set before JNA would run `ldconfig -p` for it. */
    private fun preparePlatformPath() {
        if (System.getProperty("toolwire.library.cache") == "false" || !Platform.isLinux()) return
        if (System.getProperty(PLATFORM_PATH) != null) return
        try {
            // Platform, not Native: Native's first touch loads JNA's native part (prepareDispatch).
            val directories = linuxPlatformPath(File("/"), if (Platform.is64Bit()) 64 else 32, jnaMultiArch())
            if (directories.isEmpty()) return
            val joined = StringBuilder()
            for (directory in directories) {
                if (joined.length > 0) joined.append(File.pathSeparatorChar)
                joined.append(directory)
            }
            System.setProperty(PLATFORM_PATH, joined.toString())
        } catch (_: Exception) {
            // An unreadable or odd configuration (a bad glob): JNA runs ldconfig as before.
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

    private const val PLATFORM_PATH = "jna.platform.library.path"
    private const val MAX_CONF_BYTES = 1L shl 20

    /**
     * The directories JNA would search for a library loaded by bare name on Linux, without
     * running `ldconfig -p`: JNA's fixed six (`/usr/lib/MULTIARCH`, `/lib/MULTIARCH`,
     * `/usr/libBITS`, `/libBITS`, `/usr/lib`, `/lib`), then those `/etc/ld.so.conf` names
     * (following `include`s), then every `glibc-hwcaps` subdirectory of those; only those that
     * exist, each once. [root] stands for `/` (tests read a made-up tree). Written with the JDK's
     * string and file functions only: kotlin.text's and kotlin.io's facades are large to load.
     */
    internal fun linuxPlatformPath(root: File, bits: Int, multiArch: String): List<String> {
        val found = LinkedHashSet<String>()
        for (name in arrayOf("/usr/lib/$multiArch", "/lib/$multiArch", "/usr/lib$bits", "/lib$bits", "/usr/lib", "/lib")) {
            found.add(name)
        }
        readLdConf(root, File(root, "etc/ld.so.conf"), found, depth = 0)
        // ldconfig caches the libraries of each directory's glibc-hwcaps subdirectories too.
        for (directory in ArrayList(found)) {
            val variants = File(root, directory.substring(1) + "/glibc-hwcaps").list() ?: continue
            java.util.Arrays.sort(variants)
            for (variant in variants) found.add("$directory/glibc-hwcaps/$variant")
        }
        return found.filter { File(root, it.substring(1)).isDirectory }
    }

    /** JNA's own name for this machine's multiarch directories (its `getMultiArchPath`). */
    internal fun jnaMultiArch(): String {
        val kernel = if (Platform.iskFreeBSD()) "-kfreebsd" else if (Platform.isGNU()) "" else "-linux"
        var cpu = Platform.ARCH
        var libc = "-gnu"
        if (Platform.isIntel()) {
            cpu = if (Platform.is64Bit()) "x86_64" else "i386"
        } else if (Platform.isPPC()) {
            cpu = if (Platform.is64Bit()) "powerpc64" else "powerpc"
        } else if (Platform.isARM()) {
            cpu = "arm"
            libc = "-gnueabi"
        } else if (Platform.ARCH == "mips64el") {
            libc = "-gnuabi64"
        }
        return cpu + kernel + libc
    }

    /**
     * One ld.so.conf file's directories into [into], as glibc's ldconfig reads it: a directory
     * per line (`DIR=TYPE` names a type), `include PATTERN…` with the matching files read in
     * name order, `hwcap` lines ignored, `#` starting a comment.
     */
    private fun readLdConf(root: File, file: File, into: MutableSet<String>, depth: Int) {
        // ldconfig stops deep include chains too; a loop of includes ends here. A configuration
        // file is a few lines: one past MAX_CONF_BYTES is not read, and JNA's search loses it.
        if (depth > 8 || !file.isFile || file.length() > MAX_CONF_BYTES) return
        val text = try {
            // Paths are bytes: Latin-1 keeps each one as it is.
            String(Files.readAllBytes(file.toPath()), Charsets.ISO_8859_1)
        } catch (_: java.io.IOException) {
            return
        }
        val lines = java.util.StringTokenizer(text, "\n")
        while (lines.hasMoreTokens()) {
            val line = withoutComment(lines.nextToken())
            var start = 0
            while (start < line.length && Character.isWhitespace(line[start])) start++
            if (start == line.length) continue
            if (startsWithWord(line, start, "include", ignoreCase = false)) {
                val patterns = java.util.StringTokenizer(line.substring(start + 8), " \t")
                while (patterns.hasMoreTokens()) {
                    for (included in includedFiles(root, file, patterns.nextToken())) readLdConf(root, included, into, depth + 1)
                }
                continue
            }
            if (startsWithWord(line, start, "hwcap", ignoreCase = true)) continue
            val directory = directoryOf(line.substring(start))
            if (directory != null) into.add(directory)
        }
    }

    /** Whether [word] (then a space or tab) starts [line] at [start]. */
    private fun startsWithWord(line: String, start: Int, word: String, ignoreCase: Boolean): Boolean {
        val end = start + word.length
        if (end >= line.length || (line[end] != ' ' && line[end] != '\t')) return false
        for (i in 0 until word.length) {
            val c = line[start + i]
            if (c != word[i] && !(ignoreCase && Character.toLowerCase(c) == word[i])) return false
        }
        return true
    }

    private fun withoutComment(line: String): String {
        for (i in 0 until line.length) if (line[i] == '#') return line.substring(0, i)
        return line
    }

    /** An absolute directory without its `=TYPE`, trailing blanks and slashes; null for anything else. */
    private fun directoryOf(entry: String): String? {
        if (entry.length == 0 || entry[0] != '/') return null
        var end = entry.length
        for (i in 0 until entry.length) {
            if (entry[i] == '=') {
                end = i
                break
            }
        }
        while (end > 0 && Character.isWhitespace(entry[end - 1])) end--
        while (end > 1 && entry[end - 1] == '/') end--
        return entry.substring(0, end)
    }

    /**
     * The files an `include` pattern names, relative to [from]'s directory. Only its last part
     * may be a glob, as in every distribution's include of `ld.so.conf.d`; glob(3) would take
     * one in any part.
     */
    private fun includedFiles(root: File, from: File, pattern: String): List<File> {
        val files = ArrayList<File>()
        val path = if (pattern[0] == '/') File(root, pattern.substring(1)) else File(from.parentFile, pattern)
        val directory = path.parentFile ?: return files
        val names = directory.list() ?: return files
        java.util.Arrays.sort(names)
        for (name in names) if (globMatches(path.name, name)) files.add(File(directory, name))
        return files
    }

    /**
     * Whether the file [name] matches [glob], as glob(3) without flags reads a name: `*`, `?`,
     * `[…]` (ranges, `!` or `^` negating), a backslash quoting the next character, and a leading `.`
     * matched only by a `.` written in the pattern. (The JDK's glob matcher compiles a regex
     * through lambdas, a cost at the very start of a process.)
     */
    internal fun globMatches(glob: String, name: String): Boolean {
        if (name.length > 0 && name[0] == '.') {
            val literalDot = (glob.length > 0 && glob[0] == '.') || (glob.length > 1 && glob[0] == '\\' && glob[1] == '.')
            if (!literalDot) return false
        }
        return globMatches(glob, 0, name, 0)
    }

    private fun globMatches(glob: String, g: Int, name: String, n: Int): Boolean {
        if (g == glob.length) return n == name.length
        when (glob[g]) {
            '\\' -> {
                // A trailing backslash stands for itself.
                val literal = if (g + 1 < glob.length) glob[g + 1] else '\\'
                val next = if (g + 1 < glob.length) g + 2 else g + 1
                return n < name.length && name[n] == literal && globMatches(glob, next, name, n + 1)
            }
            '*' -> {
                for (rest in n..name.length) if (globMatches(glob, g + 1, name, rest)) return true
                return false
            }
            '?' -> return n < name.length && globMatches(glob, g + 1, name, n + 1)
            '[' -> {
                if (n == name.length) return false
                var i = g + 1
                val negated = i < glob.length && (glob[i] == '!' || glob[i] == '^')
                if (negated) i++
                var matched = false
                var first = true
                while (i < glob.length && (first || glob[i] != ']')) {
                    first = false
                    val low = glob[i]
                    if (i + 2 < glob.length && glob[i + 1] == '-' && glob[i + 2] != ']') {
                        if (name[n] in low..glob[i + 2]) matched = true
                        i += 3
                    } else {
                        if (name[n] == low) matched = true
                        i++
                    }
                }
                // No closing bracket: the `[` is a plain character.
                if (i == glob.length) return name[n] == '[' && globMatches(glob, g + 1, name, n + 1)
                return matched != negated && globMatches(glob, i + 1, name, n + 1)
            }
            else -> return n < name.length && name[n] == glob[g] && globMatches(glob, g + 1, name, n + 1)
        }
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
