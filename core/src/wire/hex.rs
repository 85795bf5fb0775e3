//! Bytes as lowercase hex digits: ids, digests and cursors.

const DIGITS: &[u8; 16] = b"0123456789abcdef";

/// Appends `bytes` to `out` as two lowercase hex digits each.
pub(crate) fn push_hex(out: &mut String, bytes: &[u8]) {
    out.reserve(bytes.len() * 2);
    for byte in bytes {
        out.push(char::from(DIGITS[usize::from(byte >> 4)]));
        out.push(char::from(DIGITS[usize::from(byte & 0x0f)]));
    }
}

/// `bytes` as lowercase hex digits.
pub(crate) fn hex(bytes: &[u8]) -> String {
    let mut out = String::new();
    push_hex(&mut out, bytes);
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_byte_is_two_lowercase_digits() {
        assert_eq!(super::hex(&[0x00, 0x0f, 0xa5, 0xff]), "000fa5ff");
        assert_eq!(super::hex(&[]), "");
    }
}
