//! JSON string literals as serde_json writes them, appended to a buffer
//! without an allocation per string (both formats' canonical forms and
//! preimages escape every string this way).

/// Appends `s` as a JSON string literal: `\"`, `\\`, `\b \t \n \f \r`,
/// lowercase `\u00xx` for the other control characters, everything else as
/// is. This is serde_json's escaping, byte for byte (a test compares the two),
/// which the hashes of every stored event depend on.
pub(crate) fn push_json_string(s: &str, out: &mut String) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.reserve(s.len() + 2);
    out.push('"');
    let mut start = 0;
    for (i, &b) in s.as_bytes().iter().enumerate() {
        let short = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            0x08 => "\\b",
            0x0c => "\\f",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x00..=0x1f => "",
            _ => continue,
        };
        // `b` is ASCII, so `i` is a character boundary.
        out.push_str(&s[start..i]);
        if short.is_empty() {
            out.push_str("\\u00");
            out.push(char::from(HEX[usize::from(b >> 4)]));
            out.push(char::from(HEX[usize::from(b & 0xf)]));
        } else {
            out.push_str(short);
        }
        start = i + 1;
    }
    out.push_str(&s[start..]);
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::push_json_string;

    fn ours(s: &str) -> String {
        let mut out = String::new();
        push_json_string(s, &mut out);
        out
    }

    #[test]
    fn every_ascii_character_is_escaped_as_serde_json_escapes_it() {
        for c in (0u8..0x80).map(char::from) {
            let s = format!("a{c}b{c}");
            assert_eq!(
                ours(&s),
                serde_json::to_string(&s).unwrap(),
                "{:#04x}",
                c as u32
            );
        }
    }

    #[test]
    fn other_strings_match_serde_json() {
        for s in [
            "",
            "plain",
            "\"",
            "\\\\",
            "é\u{7f}\u{80}\u{2028}\u{2029}\u{feff}\u{202e}\u{10ffff}",
            "line\r\nnext\ttab\u{0}nul\u{1b}[31m",
            "\u{1f600} emoji and \"quotes\" \\ back",
        ] {
            assert_eq!(ours(s), serde_json::to_string(s).unwrap(), "{s:?}");
        }
        // Appends: what was in the buffer stays.
        let mut out = String::from("x");
        push_json_string("y", &mut out);
        assert_eq!(out, "x\"y\"");
    }
}
