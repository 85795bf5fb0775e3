// Run by the build (exec-maven-plugin, `java PatchBindings.java FILE`) after uniffi-bindgen:
// the generated bindings ask NativeLibraryLocation for the library JNA is to load, instead of
// handing JNA the bare name (which makes JNA copy the library out of the jar at every start),
// and call NativeLibraryLocation.prepare() before each call into it (JNA's own native part).
// Fails the build when the generated code no longer has exactly one of each line it replaces.
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

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
        Files.writeString(file, text, StandardCharsets.UTF_8);
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
