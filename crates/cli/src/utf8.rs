//! SQL text from bytes (standard input, `-f` files), which must be UTF-8: an invalid
//! byte is an error that says where it is, never a silent end of input.

/// `bytes` as text; the error names the line and column of the first invalid byte
/// (`first_line` is the line `bytes` start on).
pub fn decode(bytes: Vec<u8>, first_line: usize) -> Result<String, String> {
    String::from_utf8(bytes).map_err(|e| {
        let bytes = e.as_bytes();
        let valid = &bytes[..e.utf8_error().valid_up_to()];
        let line = first_line + valid.iter().filter(|b| **b == b'\n').count();
        let line_start = valid.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
        let column = std::str::from_utf8(&valid[line_start..]).map_or(0, |s| s.chars().count()) + 1;
        format!(
            "invalid UTF-8 at line {line}, column {column} (byte 0x{:02x}); SQL text must be UTF-8",
            bytes[valid.len()]
        )
    })
}

#[cfg(test)]
mod tests {
    use super::decode;

    #[test]
    fn the_first_invalid_byte_is_located() {
        assert_eq!(decode(b"select 1;".to_vec(), 1).unwrap(), "select 1;");
        let err = decode(b"select 1;\nselect '\xc3\xa9\xff';".to_vec(), 1).unwrap_err();
        assert!(err.starts_with("invalid UTF-8 at line 2, column 10 (byte 0xff)"), "{err}");
        assert!(decode(b"\xe9".to_vec(), 7).unwrap_err().starts_with("invalid UTF-8 at line 7, column 1"));
    }
}
