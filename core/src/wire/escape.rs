//! JSON string escaping, eight bytes at a time.
//!
//! serde_json looks up every byte of a string in a table; a tool's 1 MiB text answer spent most
//! of its serialisation there. This writes the same bytes serde_json writes (`\"`, `\\`, the
//! five short control escapes, `\u00xx` in lower-case hex for the other control characters,
//! everything else as it is), but skips eight bytes at once while none of them needs escaping.

const LOW_BITS: u64 = 0x0101_0101_0101_0101;
const HIGH_BITS: u64 = 0x8080_8080_8080_8080;

/// Whether any byte of `word` is `"`, `\` or below 0x20: exact for the word (a borrow can
/// only mark a byte above a real match, so a flagged word is then looked at byte by byte).
#[inline]
fn needs_escape(word: u64) -> bool {
    let has_zero = |v: u64| v.wrapping_sub(LOW_BITS) & !v & HIGH_BITS;
    let control = word.wrapping_sub(LOW_BITS * 0x20) & !word & HIGH_BITS;
    let quote = has_zero(word ^ (LOW_BITS * u64::from(b'"')));
    let backslash = has_zero(word ^ (LOW_BITS * u64::from(b'\\')));
    (control | quote | backslash) != 0
}

/// The escape of one byte, or `None` when it goes out as it is.
#[inline]
fn escape_of(byte: u8) -> Option<&'static str> {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    const CONTROL: [&str; 32] = {
        let mut table = [""; 32];
        table[0x08] = "\\b";
        table[0x09] = "\\t";
        table[0x0a] = "\\n";
        table[0x0c] = "\\f";
        table[0x0d] = "\\r";
        table
    };
    // `\u00xx` for the other control characters, built once at compile time.
    const UNICODE: [[u8; 6]; 32] = {
        let mut table = [[0u8; 6]; 32];
        let mut byte = 0;
        while byte < 32 {
            table[byte] = [b'\\', b'u', b'0', b'0', HEX[byte >> 4], HEX[byte & 0xf]];
            byte += 1;
        }
        table
    };
    match byte {
        b'"' => Some("\\\""),
        b'\\' => Some("\\\\"),
        0x00..=0x1f => {
            let short = CONTROL[usize::from(byte)];
            if short.is_empty() {
                // ASCII bytes only: always valid UTF-8.
                std::str::from_utf8(&UNICODE[usize::from(byte)]).ok()
            } else {
                Some(short)
            }
        }
        _ => None,
    }
}

/// Appends `text` as a JSON string (with its quotes) to `out`.
pub(crate) fn push_json_string(out: &mut String, text: &str) {
    out.reserve(text.len() + 2);
    out.push('"');
    let bytes = text.as_bytes();
    // `clean` is where the run not yet copied starts; runs only ever end before an ASCII
    // byte, so every slice of `text` taken here is on a character boundary.
    let mut clean = 0;
    let mut at = 0;
    while at < bytes.len() {
        if let Some(chunk) = bytes.get(at..at + 8) {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            if !needs_escape(u64::from_le_bytes(word)) {
                at += 8;
                continue;
            }
            for offset in 0..8 {
                if let Some(escape) = escape_of(bytes[at + offset]) {
                    out.push_str(&text[clean..at + offset]);
                    out.push_str(escape);
                    clean = at + offset + 1;
                }
            }
            at += 8;
        } else {
            if let Some(escape) = escape_of(bytes[at]) {
                out.push_str(&text[clean..at]);
                out.push_str(escape);
                clean = at + 1;
            }
            at += 1;
        }
    }
    out.push_str(&text[clean..]);
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::push_json_string;

    fn escaped(text: &str) -> String {
        let mut out = String::new();
        push_json_string(&mut out, text);
        out
    }

    #[test]
    fn every_byte_escapes_as_serde_json_escapes_it() {
        // Each ASCII byte at each position of an eight-byte word, and in the tail.
        for byte in 0u8..0x80 {
            let ch = char::from(byte);
            for before in 0..11 {
                for after in [0, 1, 7, 8, 9] {
                    let text = format!("{}{ch}{}", "a".repeat(before), "é".repeat(after));
                    assert_eq!(
                        escaped(&text),
                        serde_json::to_string(&text).expect("json"),
                        "{text:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn mixed_text_matches_serde_json() {
        let samples = [
            String::new(),
            "plain ascii text that is longer than eight bytes".to_string(),
            "quote\" backslash\\ newline\n tab\t nul\0 unit\u{1f} del\u{7f}".to_string(),
            "ünïcödé, 日本語, emoji 🦀 and \"quotes\" between".to_string(),
            "\"\"\"\"\"\"\"\"\\\\\\\\\\\\\\\\\n\n\n\n\n\n\n\n".to_string(),
            // Bytes that sit just above a quote or backslash, where a borrow could mislead.
            "#!]\u{1}!#]\u{21}\u{23}\u{5d}\u{5b}".repeat(5),
            "x".repeat(1 << 16) + "\"" + &"y".repeat(13),
        ];
        for text in &samples {
            assert_eq!(escaped(text), serde_json::to_string(text).expect("json"));
        }
    }

    #[test]
    fn it_appends() {
        let mut out = String::from("[");
        push_json_string(&mut out, "a\"b");
        out.push(',');
        push_json_string(&mut out, "");
        out.push(']');
        assert_eq!(out, r#"["a\"b",""]"#);
    }
}
