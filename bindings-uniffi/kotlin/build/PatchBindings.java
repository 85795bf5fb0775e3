// Run by the build (exec-maven-plugin, `java PatchBindings.java FILE`) after uniffi-bindgen:
// the generated bindings ask NativeLibraryLocation for the library JNA is to load, instead of
// handing JNA the bare name (which makes JNA copy the library out of the jar at every start),
// and call NativeLibraryLocation.prepare() before each call into it (JNA's own native part).
// Callback interfaces' vtables are registered at their first use instead of at load, and strings
// are encoded by the JDK's getBytes (checked) instead of a CharsetEncoder.
// Fails the build when the generated code no longer has exactly one of each line it replaces.
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

public class PatchBindings {
    public static void main(String[] args) throws Exception {
        Path file = Path.of(args[0]);
        String text = Files.readString(file, StandardCharsets.UTF_8);
        String from = "    return \"toolwire_uniffi\"\n}";
        String to = "    return NativeLibraryLocation.library\n}";
        text = replaceOnce(file, text, from, to);
        // Before the first JNA class is touched (UniffiRustCallStatus is a JNA Structure).
        text = replaceOnce(
            file,
            text,
            "callback: (UniffiRustCallStatus) -> U): U {\n    var status = UniffiRustCallStatus()\n",
            "callback: (UniffiRustCallStatus) -> U): U {\n    NativeLibraryLocation.prepare()\n    var status = UniffiRustCallStatus()\n");
        // Strings lowered with the JDK's own encoding (an intrinsic copy for most strings) instead
        // of a CharsetEncoder walking a CharBuffer, which the interpreter runs char by char: most
        // of a tool registration's cost at start. Decoding the bytes back is what checks them: a
        // lone surrogate (which getBytes turns into '?') still goes to the encoder, which refuses it.
        text = replaceOnce(
            file,
            text,
            "    fun toUtf8(value: String): ByteBuffer {\n        // Make sure we don't have invalid UTF-16, check for lone surrogates.\n",
            "    fun toUtf8(value: String): ByteBuffer {\n        val bytes = value.toByteArray(Charsets.UTF_8)\n"
                + "        if (String(bytes, Charsets.UTF_8) == value) return ByteBuffer.wrap(bytes)\n"
                + "        // Make sure we don't have invalid UTF-16, check for lone surrogates.\n");
        text = registerCallbackInterfacesOnFirstUse(file, text);
        Files.writeString(file, text, StandardCharsets.UTF_8);
    }

    /**
     * The generated library object registers every callback interface's vtable when it loads
     * (JNA structures of callbacks: tens of milliseconds of a start, for interfaces most servers
     * never implement). Each is registered instead by its converter's object, which every Kotlin
     * implementation passes through before Rust can hold it.
     */
    private static String registerCallbackInterfacesOnFirstUse(Path file, String text) {
        Matcher registration = Pattern.compile("        uniffiCallbackInterface(\\w+)\\.register\\(this\\)\n").matcher(text);
        List<String> names = new ArrayList<>();
        while (registration.find()) {
            names.add(registration.group(1));
        }
        if (names.isEmpty() && !text.contains("registered on first use by FfiConverterType")) {
            throw new IllegalStateException(file + ": the generated code no longer registers callback interfaces as expected");
        }
        for (String name : names) {
            text = replaceOnce(
                file,
                text,
                "        uniffiCallbackInterface" + name + ".register(this)\n",
                "        // " + name + ": registered on first use by FfiConverterType" + name + " (PatchBindings)\n");
            String converter = "public object FfiConverterType" + name + ": FfiConverter<" + name + ", Long> {\n"
                + "    internal val handleMap = UniffiHandleMap<" + name + ">()\n";
            text = replaceOnce(file, text, converter, converter + "\n    init {\n        uniffiCallbackInterface" + name + ".register(UniffiLib)\n    }\n");
        }
        return text;
    }

    private static String replaceOnce(Path file, String text, String from, String to) {
        int at = text.indexOf(from);
        if (at < 0 && text.contains(to)) {
            return text; // patched already
        }
        if (at < 0 || text.indexOf(from, at + 1) >= 0) {
            throw new IllegalStateException(file + ": the generated code no longer has exactly one `" + from + "`");
        }
        return text.replace(from, to);
    }
}
