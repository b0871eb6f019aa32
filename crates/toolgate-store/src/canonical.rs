//! Canonical JSON and the event hash.
//!
//! The hash of an event is
//! `hex(sha256(prev_hash_hex || canonical_json({seq, ts_ms, kind, session_id, call_id, payload})))`
//! where canonical JSON has object keys sorted by their UTF-8 bytes, no
//! whitespace, and serde_json's number and string formatting. Keys are sorted
//! here explicitly, so the result does not depend on whether serde_json's
//! `preserve_order` feature is enabled somewhere in the build.

use std::fmt::Write as _;

use serde_json::Value;
use sha2::{Digest, Sha256};

/// The `prev_hash` of the first event of a log.
pub const GENESIS_HASH: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// Writes `value` as canonical JSON (sorted keys, no whitespace) into `out`.
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
        // Scalars have exactly one serde_json rendering.
        other => out.push_str(&other.to_string()),
    }
}

/// `value` as canonical JSON.
pub fn canonical_json(value: &Value) -> String {
    let mut out = String::new();
    write_canonical(value, &mut out);
    out
}

fn write_string(s: &str, out: &mut String) {
    // serde_json's string escaping; serialising a &str cannot fail.
    out.push_str(&serde_json::to_string(s).unwrap_or_default());
}

/// The fields of one event that the hash covers, with the payload already canonical.
#[derive(Clone, Copy, Debug)]
pub struct HashInput<'a> {
    /// Sequence number in the log.
    pub seq: i64,
    /// Milliseconds since the Unix epoch.
    pub ts_ms: i64,
    /// The dotted kind (`tool.started`).
    pub kind: &'a str,
    /// The session id.
    pub session_id: &'a str,
    /// The call id.
    pub call_id: &'a str,
    /// The payload as canonical JSON.
    pub payload_canonical: &'a str,
}

impl HashInput<'_> {
    /// The canonical JSON of `{seq, ts_ms, kind, session_id, call_id, payload}`
    /// (keys in sorted order: call_id, kind, payload, seq, session_id, ts_ms).
    pub fn canonical(&self) -> String {
        let mut out = String::with_capacity(self.payload_canonical.len() + 160);
        out.push_str("{\"call_id\":");
        write_string(self.call_id, &mut out);
        out.push_str(",\"kind\":");
        write_string(self.kind, &mut out);
        out.push_str(",\"payload\":");
        out.push_str(self.payload_canonical);
        let _ = write!(out, ",\"seq\":{}", self.seq);
        out.push_str(",\"session_id\":");
        write_string(self.session_id, &mut out);
        let _ = write!(out, ",\"ts_ms\":{}}}", self.ts_ms);
        out
    }

    /// `hex(sha256(prev_hash || canonical))`.
    pub fn hash(&self, prev_hash: &str) -> String {
        let mut hasher = Sha256::new();
        hasher.update(prev_hash.as_bytes());
        hasher.update(self.canonical().as_bytes());
        hex::encode(hasher.finalize())
    }
}

/// Whether `s` looks like a hash this log writes: 64 lowercase hex digits.
pub fn is_hash(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

#[cfg(test)]
mod tests {
    use super::*;
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
    fn event_envelope_matches_generic_canonicalisation() {
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
        assert_eq!(input.canonical(), generic);
        let h = input.hash(GENESIS_HASH);
        assert!(is_hash(&h));
        assert_ne!(h, input.hash(&h), "the previous hash is part of the input");
    }
}
