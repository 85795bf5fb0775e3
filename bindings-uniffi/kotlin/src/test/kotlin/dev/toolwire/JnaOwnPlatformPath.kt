package dev.toolwire

/**
 * Prints the search path JNA works out itself (running `ldconfig -p`), for
 * NativeLibraryLocationTest to compare with toolwire's: run in a JVM of its own, where nothing
 * has set `jna.platform.library.path` first.
 */
object JnaOwnPlatformPath {
    @JvmStatic
    fun main(args: Array<String>) {
        // NativeLibrary's static initialiser computes the path and sets the property.
        Class.forName("com.sun.jna.NativeLibrary")
        println(System.getProperty("jna.platform.library.path") ?: "")
    }
}
