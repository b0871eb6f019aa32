//! Format 1, written by toolgate before format 2 existed; kept so that those
//! logs still verify.
//!
//! The preimage is `prev_hash_hex || canonical({call_id, kind, payload, seq,
//! session_id, ts_ms})`, where this canonical form sorts object keys by their
//! UTF-8 bytes, has no whitespace, and uses serde_json's number and string
//! formatting. It is close to RFC 8785 but not equal to it (key order above
//! U+FFFF, and every non-integer number), which is why format 2 replaced it.

use std::fmt::Write as _;

use serde_json::Value;

use super::HashInput;

/// Writes `value` in format 1's canonical form into `out`. Keys are sorted here
/// explicitly, so the result does not depend on serde_json's `preserve_order`.
pub fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
            out.push('{');
            for (i, (key, val)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(key, out);
                out.push(':');
                write_canonical(val, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        Value::String(s) => write_string(s, out),
        // Scalars have exactly one serde_json rendering (`Display` is it).
        other => {
            let _ = write!(out, "{other}");
        }
    }
}

/// `value` in format 1's canonical form.
pub fn canonical_json(value: &Value) -> String {
    let mut out = String::new();
    write_canonical(value, &mut out);
    out
}

fn write_string(s: &str, out: &mut String) {
    super::json_string::push_json_string(s, out);
}

/// The bytes format 1 hashes: the previous hash, then the envelope.
pub(super) fn preimage(input: &HashInput<'_>, prev_hash: &str) -> String {
    let mut out = String::with_capacity(input.payload_canonical.len() + 224);
    out.push_str(prev_hash);
    out.push_str("{\"call_id\":");
    write_string(input.call_id, &mut out);
    out.push_str(",\"kind\":");
    write_string(input.kind, &mut out);
    out.push_str(",\"payload\":");
    out.push_str(input.payload_canonical);
    let _ = write!(out, ",\"seq\":{}", input.seq);
    out.push_str(",\"session_id\":");
    write_string(input.session_id, &mut out);
    let _ = write!(out, ",\"ts_ms\":{}}}", input.ts_ms);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::canonical::{GENESIS_HASH, LogFormat};
    use serde_json::json;

    #[test]
    fn keys_are_sorted_at_every_depth() {
        let v = json!({"b": 1, "a": {"z": [true, null, {"y": 1, "x": "q\"uote"}], "c": 1.5}});
        assert_eq!(
            canonical_json(&v),
            r#"{"a":{"c":1.5,"z":[true,null,{"x":"q\"uote","y":1}]},"b":1}"#
        );
    }

    #[test]
    fn numbers_are_serde_json_s_not_rfc_8785_s() {
        // Where format 2 writes `[1e+21,1e-7,0,100]`: -0 and whole numbers differ.
        assert_eq!(
            canonical_json(&json!([1e21, 1e-7, -0.0, 100.0, 1e16, 1.5])),
            "[1e+21,1e-7,-0.0,100.0,1e+16,1.5]"
        );
    }

    #[test]
    fn envelope_matches_generic_canonicalisation() {
        let input = HashInput {
            seq: 7,
            ts_ms: 1_700_000_000_000,
            kind: "tool.started",
            session_id: "s\n1",
            call_id: "c1",
            payload_canonical: r#"{"tool":"read"}"#,
        };
        let generic = canonical_json(&json!({
            "seq": 7, "ts_ms": 1_700_000_000_000_i64, "kind": "tool.started",
            "session_id": "s\n1", "call_id": "c1", "payload": {"tool": "read"}
        }));
        assert_eq!(preimage(&input, "ab"), format!("ab{generic}"));
    }

    #[test]
    fn a_known_event_keeps_its_format_1_hash() {
        // Pinned: a change here would stop every format 1 log from verifying.
        let input = HashInput {
            seq: 1,
            ts_ms: 1_700_000_000_001,
            kind: "tool.started",
            session_id: "s1",
            call_id: "c1",
            payload_canonical: r#"{"args":{"a":"é\"\n","limit":1,"path":"/ws/1.txt","z":[1.5,null]},"extra":{"n":1},"tool":"read"}"#,
        };
        assert_eq!(LogFormat::V1.hash(&input, GENESIS_HASH), FORMAT_1_HASH);
    }

    /// Also computed from format 1's definition by hand (Python's hashlib).
    const FORMAT_1_HASH: &str = "20267203aa8148dd5c37c1558cccacb86f87c6c3102ee9f96b329eb5590ae189";
}
