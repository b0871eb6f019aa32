//! Inspecting newline-delimited JSON-RPC messages before the SDK sees them:
//! finding the `id` of a message too large to parse, and the error replies for
//! oversized and unparsable input.

use serde_json::{Value, json};

/// JSON-RPC "Parse error".
pub const PARSE_ERROR: i64 = -32700;
/// JSON-RPC "Invalid Request".
pub const INVALID_REQUEST: i64 = -32600;

/// A JSON-RPC error response line (with its trailing newline).
pub fn error_line(id: Option<Value>, code: i64, message: &str) -> Vec<u8> {
    let reply = json!({
        "jsonrpc": "2.0",
        "id": id.unwrap_or(Value::Null),
        "error": {"code": code, "message": message},
    });
    let mut line = reply.to_string().into_bytes();
    line.push(b'\n');
    line
}

/// Whether `line` is JSON at all (shape is checked later by the SDK). Returns
/// the parser's message when it is not.
pub fn syntax_error(line: &[u8]) -> Option<String> {
    match serde_json::from_slice::<serde::de::IgnoredAny>(line) {
        Ok(_) => None,
        Err(e) => match e.classify() {
            serde_json::error::Category::Syntax | serde_json::error::Category::Eof => {
                Some(e.to_string())
            }
            _ => None,
        },
    }
}

/// The top-level `"id"` of a JSON-RPC message, read from the start of the
/// message only (the rest may be megabytes that are never buffered). `None`
/// when the id is not within `prefix` or the prefix is not a JSON object.
pub fn scan_id(prefix: &[u8]) -> Option<Value> {
    let mut s = Scanner { b: prefix, i: 0 };
    s.ws();
    s.eat(b'{')?;
    loop {
        s.ws();
        if s.peek()? == b'}' {
            return None;
        }
        let key = s.string()?;
        s.ws();
        s.eat(b':')?;
        s.ws();
        let start = s.i;
        s.value()?;
        if key == "id" {
            return serde_json::from_slice(&prefix[start..s.i]).ok();
        }
        s.ws();
        match s.peek()? {
            b',' => s.i += 1,
            _ => return None,
        }
    }
}

struct Scanner<'a> {
    b: &'a [u8],
    i: usize,
}

impl Scanner<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\r' | b'\n')) {
            self.i += 1;
        }
    }

    fn eat(&mut self, c: u8) -> Option<()> {
        (self.peek()? == c).then(|| self.i += 1)
    }

    /// A string; returns its decoded text.
    fn string(&mut self) -> Option<String> {
        let start = self.i;
        self.skip_string()?;
        serde_json::from_slice(&self.b[start..self.i]).ok()
    }

    fn skip_string(&mut self) -> Option<()> {
        self.eat(b'"')?;
        loop {
            match self.peek()? {
                b'\\' => self.i += 2,
                b'"' => {
                    self.i += 1;
                    return Some(());
                }
                _ => self.i += 1,
            }
        }
    }

    /// Skips one value of any kind.
    fn value(&mut self) -> Option<()> {
        match self.peek()? {
            b'"' => self.skip_string(),
            b'{' | b'[' => {
                let mut depth = 0usize;
                loop {
                    match self.peek()? {
                        b'"' => {
                            self.skip_string()?;
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth -= 1;
                            if depth == 0 {
                                self.i += 1;
                                return Some(());
                            }
                        }
                        _ => {}
                    }
                    self.i += 1;
                }
            }
            _ => {
                let start = self.i;
                while matches!(self.peek(), Some(c) if !matches!(c, b',' | b'}' | b']' | b' ' | b'\t' | b'\r' | b'\n'))
                {
                    self.i += 1;
                }
                // A scalar cut off by the end of the prefix is not trusted.
                (self.i > start && self.i < self.b.len()).then_some(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_id_before_a_huge_params() {
        let line = br#"{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"arguments":{"content":"xxxx"#;
        assert_eq!(scan_id(line), Some(json!(42)));
        let line =
            br#"{ "method" : "x", "params": {"id": 1, "a": [1, {"b": "}"}]}, "id" : "abc\"d" }"#;
        assert_eq!(scan_id(line), Some(json!("abc\"d")));
    }

    #[test]
    fn no_id_when_it_is_past_the_prefix_or_input_is_not_an_object() {
        let line = br#"{"jsonrpc":"2.0","method":"tools/call","params":{"content":"xxxx"#;
        assert_eq!(scan_id(line), None);
        assert_eq!(scan_id(b"[1,2]"), None);
        assert_eq!(scan_id(b"garbage"), None);
        // A number cut by the end of the prefix is not trusted.
        assert_eq!(scan_id(br#"{"id":12"#), None);
        assert_eq!(scan_id(br#"{"id":null}"#), Some(Value::Null));
    }

    #[test]
    fn syntax_errors_are_told_apart_from_shape_errors() {
        assert!(syntax_error(b"{\"jsonrpc\": ").is_some());
        assert!(syntax_error(b"not json").is_some());
        assert!(syntax_error(br#"{"jsonrpc":"2.0"}"#).is_none());
        assert!(syntax_error(b"[]").is_none());
    }

    #[test]
    fn error_lines_are_json_rpc() {
        let line = error_line(Some(json!(7)), INVALID_REQUEST, "too large");
        let v: Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(v["id"], 7);
        assert_eq!(v["error"]["code"], -32600);
        assert!(line.ends_with(b"\n"));
        let v: Value = serde_json::from_slice(&error_line(None, PARSE_ERROR, "x")).unwrap();
        assert_eq!(v["id"], Value::Null);
    }
}
