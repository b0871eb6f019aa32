//! Unit tests of the tail's line format.

use super::*;

fn pending(session: &str, payload: &str) -> Pending {
    Pending {
        ts_ms: 1_700_000_000_123,
        kind: "tool.started",
        session_id: session.to_string(),
        call_id: "c\t1".to_string(),
        payload: payload.to_string(),
        hashed_payload: payload.to_string(),
    }
}

const H1: &str = "1111111111111111111111111111111111111111111111111111111111111111";
const H2: &str = "2222222222222222222222222222222222222222222222222222222222222222";

#[test]
fn an_encoded_event_parses_back_field_for_field() {
    let mut out = Vec::new();
    let p = pending("s \"x\"\n\u{7f}", r#"{"a":"tab\there"}"#);
    encode_event(&mut out, 42, &p, H1, H2).unwrap();
    assert_eq!(out.iter().filter(|b| **b == b'\n').count(), 1);
    assert_eq!(out.last(), Some(&b'\n'));
    let text = std::str::from_utf8(&out[..out.len() - 1]).unwrap();
    let line = parse_event(text).unwrap();
    assert_eq!(line.seq, 42);
    assert_eq!(line.ts_ms, p.ts_ms);
    assert_eq!(line.kind, p.kind);
    assert_eq!(line.session_id, p.session_id);
    assert_eq!(line.call_id, p.call_id);
    assert_eq!((line.prev_hash, line.hash), (H1, H2));
    assert_eq!(line.payload, p.payload);
    assert_eq!(
        parse_link(text).unwrap(),
        Link {
            seq: 42,
            hash: H2.into()
        }
    );
}

#[test]
fn a_payload_with_a_raw_newline_is_refused_rather_than_split() {
    let mut out = Vec::new();
    let err = encode_event(&mut out, 1, &pending("s", "{\"a\":\n1}"), H1, H2).unwrap_err();
    assert!(err.to_string().contains("raw tab or newline"), "{err}");
    assert!(out.is_empty());
}

#[test]
fn start_lines_are_checked_field_by_field() {
    let good = start_line(&Link {
        seq: 7,
        hash: H1.into(),
    });
    assert_eq!(
        parse_start(good.trim_end()).unwrap(),
        Link {
            seq: 7,
            hash: H1.into()
        }
    );
    for (bad, why) in [
        (format!("toolgate-log-tail/2\t7\t{H1}"), "does not start"),
        (format!("{MAGIC}\tseven\t{H1}"), "seq"),
        (format!("{MAGIC}\t-1\t{H1}"), "seq"),
        (format!("{MAGIC}\t7\tABC"), "hash"),
        (format!("{MAGIC}\t7\t{H1}\textra"), "more than three"),
        (String::new(), "does not start"),
    ] {
        let err = parse_start(&bad).unwrap_err();
        assert!(err.contains(why), "{bad:?}: {err}");
    }
}

#[test]
fn event_lines_name_their_first_bad_field() {
    for (bad, why) in [
        ("", "seq"),
        ("1", "ts_ms"),
        ("1\tx", "ts_ms"),
        ("1\t2\ttool.started\tnot-json", "session_id"),
        ("1\t2\ttool.started\t\"s\"\t3", "call_id"),
        ("1\t2\ttool.started\t\"s\"\t\"c\"\tprev", "hash"),
        ("1\t2\ttool.started\t\"s\"\t\"c\"\tprev\thash", "payload"),
    ] {
        let err = parse_event(bad).unwrap_err();
        assert!(err.contains(why), "{bad:?}: {err}");
    }
}

#[test]
fn complete_lines_leave_a_torn_end_out() {
    let (lines, complete) = complete_lines(b"a\nbc\nde", 10);
    let lines: Vec<_> = lines.collect();
    assert_eq!(lines, [(10, &b"a"[..]), (12, &b"bc"[..])]);
    assert_eq!(complete, 5);
    let (lines, complete) = complete_lines(b"no newline", 0);
    assert_eq!(lines.count(), 0);
    assert_eq!(complete, 0);
}

fn file_with(bytes: &[u8]) -> (tempfile::TempDir, File) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t");
    std::fs::write(&path, bytes).unwrap();
    let file = File::open(&path).unwrap();
    (dir, file)
}

fn event_line(seq: i64, payload_len: usize) -> Vec<u8> {
    let mut out = Vec::new();
    let payload = format!("{{\"a\":\"{}\"}}", "x".repeat(payload_len));
    encode_event(&mut out, seq, &pending("s", &payload), H1, H2).unwrap();
    out
}

fn start() -> Vec<u8> {
    start_line(&Link {
        seq: 4,
        hash: H1.into(),
    })
    .into_bytes()
}

fn ends_of(bytes: &[u8]) -> Result<Option<(u64, Link)>, (u64, String)> {
    let (_dir, file) = file_with(bytes);
    ends(&file, bytes.len() as u64)
}

#[test]
fn the_two_ends_give_the_last_event_however_long_its_line() {
    for payload_len in [10, END_CHUNK as usize, 5 * END_CHUNK as usize] {
        let mut bytes = start();
        bytes.extend(event_line(5, 100));
        bytes.extend(event_line(6, payload_len));
        let (end, link) = ends_of(&bytes).unwrap().unwrap();
        assert_eq!(end, bytes.len() as u64, "payload {payload_len}");
        assert_eq!(
            link,
            Link {
                seq: 6,
                hash: H2.into()
            }
        );
    }
}

#[test]
fn the_two_ends_leave_a_torn_line_out() {
    let mut bytes = start();
    bytes.extend(event_line(5, 100));
    let complete = bytes.len() as u64;
    bytes.extend(&event_line(6, 100)[..40]);
    let (end, link) = ends_of(&bytes).unwrap().unwrap();
    assert_eq!((end, link.seq), (complete, 5));
    // Only the start line, then half an event.
    let mut bytes = start();
    let complete = bytes.len() as u64;
    bytes.extend(&event_line(5, 100)[..40]);
    let (end, link) = ends_of(&bytes).unwrap().unwrap();
    assert_eq!((end, link.seq), (complete, 4));
    // Only the start line.
    let (end, link) = ends_of(&start()).unwrap().unwrap();
    assert_eq!((end, link.seq), (start().len() as u64, 4));
}

#[test]
fn the_two_ends_name_a_damaged_line_and_leave_a_torn_start_to_the_full_read() {
    let mut bytes = start();
    let at = bytes.len() as u64;
    bytes.extend(b"not an event\n");
    let (offset, detail) = ends_of(&bytes).unwrap_err();
    assert_eq!(offset, at, "{detail}");
    let (offset, _) = ends_of(b"toolgate-log-tail/9\t4\tx\n").unwrap_err();
    assert_eq!(offset, 0);
    assert_eq!(ends_of(&start()[..20]).unwrap(), None);
}

/// A fold commits events the fresh tail no longer holds: its commit must be
/// on the disk before the old tail is replaced, whatever the log's
/// durability (a power loss after a `NORMAL` fold lost the fold's events and
/// left a gap in the chain).
#[test]
fn a_fold_commits_to_the_disk_before_the_old_tail_is_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("events.db");
    for durability in [Durability::Normal, Durability::Full] {
        let mut writer = TailWriter::new(&db, durability, None);
        let conn = writer.conn().unwrap();
        let synchronous: i64 = conn
            .query_row("PRAGMA synchronous", [], |r| r.get(0))
            .unwrap();
        assert_eq!(synchronous, 2, "{durability:?}: not FULL");
        let limit: i64 = conn
            .query_row("PRAGMA journal_size_limit", [], |r| r.get(0))
            .unwrap();
        assert_eq!(limit, crate::log::WAL_KEPT_BYTES as i64);
    }
}
