//! The event hash, in each format a log may hold.
//!
//! Every event row stores `hash`, the hex SHA-256 of a preimage built from the
//! row's columns and the previous row's hash; the first row's previous hash is
//! [`GENESIS_HASH`]. How the preimage is built is the row's [`LogFormat`]:
//!
//! - [`LogFormat::V2`] (written today): the RFC 8785 (JCS) canonical JSON of
//!   `{call_id, format: 2, kind, payload, prev_hash, seq, session_id, ts_ms}`
//!   (see [`format2`]), so another language can recompute it with any JCS
//!   implementation;
//! - [`LogFormat::V1`] (written before): `prev_hash` followed by a hand-made
//!   canonical form of `{call_id, kind, payload, seq, session_id, ts_ms}`
//!   (see [`format1`]), kept so that those logs still verify.
//!
//! The log records from which seq each format applies (`docs/audit-log.md`
//! in the repository describes the whole file).

pub mod format1;
pub mod format2;
mod json_string;

use sha2::{Digest, Sha256};

pub use format2::canonical_json;

/// The `prev_hash` of the first event of a log.
pub const GENESIS_HASH: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// How an event's hash preimage is built.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LogFormat {
    /// `prev_hash || canonical(envelope)` with keys in UTF-8 byte order and
    /// serde_json's numbers.
    V1,
    /// RFC 8785 canonical JSON of the envelope, `prev_hash` and `format` included.
    V2,
}

impl LogFormat {
    /// The format new events are written in.
    pub const CURRENT: LogFormat = LogFormat::V2;

    /// The format with this number, if this build knows it.
    pub fn from_number(number: i64) -> Option<LogFormat> {
        match number {
            1 => Some(LogFormat::V1),
            2 => Some(LogFormat::V2),
            _ => None,
        }
    }

    /// The number recorded in the log.
    pub fn number(self) -> i64 {
        match self {
            LogFormat::V1 => 1,
            LogFormat::V2 => 2,
        }
    }

    /// `payload` in the canonical form this format hashes.
    pub fn canonical_payload(self, payload: &serde_json::Value) -> String {
        match self {
            LogFormat::V1 => format1::canonical_json(payload),
            LogFormat::V2 => format2::canonical_json(payload),
        }
    }

    /// The exact text whose SHA-256 is the event's hash. `input.payload_canonical`
    /// must be in this format's canonical form ([`Self::canonical_payload`]).
    pub fn preimage(self, input: &HashInput<'_>, prev_hash: &str) -> String {
        match self {
            LogFormat::V1 => format1::preimage(input, prev_hash),
            LogFormat::V2 => format2::preimage(input, prev_hash),
        }
    }

    /// `hex(sha256(preimage))`.
    pub fn hash(self, input: &HashInput<'_>, prev_hash: &str) -> String {
        hex::encode(Sha256::digest(self.preimage(input, prev_hash).as_bytes()))
    }
}

/// What a new event's payload is stored as (format 1's form: sorted keys,
/// every digit kept) and what it is hashed as (the current format's form),
/// computed once when they are the same text, as they are for most payloads.
pub fn stored_and_hashed_payload(payload: &serde_json::Value) -> (String, String) {
    let stored = format1::canonical_json(payload);
    let hashed = if format2::same_as_format1(payload) {
        stored.clone()
    } else {
        LogFormat::CURRENT.canonical_payload(payload)
    };
    (stored, hashed)
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
    /// The payload in the canonical form of the format being hashed
    /// ([`canonical_json`] for the current one).
    pub payload_canonical: &'a str,
}

impl HashInput<'_> {
    /// The hash in the format new events are written in ([`LogFormat::CURRENT`]).
    pub fn hash(&self, prev_hash: &str) -> String {
        LogFormat::CURRENT.hash(self, prev_hash)
    }
}

/// Whether `s` looks like a hash this log writes: 64 lowercase hex digits.
pub fn is_hash(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input() -> HashInput<'static> {
        HashInput {
            seq: 7,
            ts_ms: 1_700_000_000_000,
            kind: "tool.started",
            session_id: "s1",
            call_id: "c1",
            payload_canonical: r#"{"tool":"read"}"#,
        }
    }

    #[test]
    fn the_previous_hash_is_part_of_every_format() {
        for format in [LogFormat::V1, LogFormat::V2] {
            let h = format.hash(&input(), GENESIS_HASH);
            assert!(is_hash(&h));
            assert_ne!(h, format.hash(&input(), &h), "{format:?}");
        }
    }

    #[test]
    fn the_formats_never_share_a_hash() {
        // The format number is inside the format 2 preimage, so a row cannot be
        // moved between formats without its hash changing.
        assert_ne!(
            LogFormat::V1.hash(&input(), GENESIS_HASH),
            LogFormat::V2.hash(&input(), GENESIS_HASH)
        );
    }

    #[test]
    fn format_numbers_round_trip_and_unknown_ones_are_none() {
        for format in [LogFormat::V1, LogFormat::V2] {
            assert_eq!(LogFormat::from_number(format.number()), Some(format));
        }
        assert_eq!(LogFormat::from_number(3), None);
        assert_eq!(LogFormat::from_number(0), None);
    }
}
