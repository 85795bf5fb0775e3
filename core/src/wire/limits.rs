/// Limits applied to every inbound frame before it is parsed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Largest accepted frame in bytes (default 4 MiB).
    pub max_frame_bytes: usize,
    /// Deepest accepted nesting of arrays and objects (default 64; at most 128 is effective,
    /// the parser's own recursion guard).
    pub max_depth: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_frame_bytes: 4 * 1024 * 1024,
            max_depth: 64,
        }
    }
}

/// Returns the first byte offset at which nesting exceeds `max_depth`, if any.
///
/// A linear scan that allocates nothing, so a hostile `[[[[…` is refused before the parser
/// builds anything. Brackets inside strings are skipped.
pub fn check_depth(bytes: &[u8], max_depth: usize) -> Result<(), usize> {
    // Nesting never exceeds the number of `[` and `{` bytes, so most frames need no scan.
    if memchr::memchr2_iter(b'[', b'{', bytes)
        .take(max_depth + 1)
        .count()
        <= max_depth
    {
        return Ok(());
    }
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for (offset, &byte) in bytes.iter().enumerate() {
        if in_string {
            if escaped {
                escaped = false;
            } else if byte == b'\\' {
                escaped = true;
            } else if byte == b'"' {
                in_string = false;
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > max_depth {
                    return Err(offset);
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_counts_only_structure() {
        assert!(check_depth(br#"{"a":[1,{"b":"[[[[["}]}"#, 3).is_ok());
        assert!(check_depth(br#"{"a":[1,{"b":[]}]}"#, 3).is_err());
        assert!(check_depth(br#""\"[[[""#, 1).is_ok());
        assert_eq!(check_depth(b"[[[", 2), Err(2));
        // More openers than the limit, but not nested that deep: the full scan decides.
        assert!(check_depth(br#"[[],[],[],{"a":"{{{{"}]"#, 3).is_ok());
        assert_eq!(check_depth(br#"[[],[[[]]]]"#, 3), Err(6));
    }
}
