//! Output bounding: limits, head and tail, media, structured output.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;
use toolgate_core::test_util::DirSpill;
use toolgate_core::*;

fn out(text: &str) -> ToolOutput {
    ToolOutput {
        structured: json!({"text": text}),
        content: vec![Content::text(text)],
        exit_status: None,
    }
}

#[test]
fn under_the_limits_nothing_changes() {
    let dir = tempfile::tempdir().unwrap();
    let b = bound(
        out("a\nb\n"),
        OutputBounds::default(),
        &DirSpill(dir.path().into()),
        "c",
    )
    .unwrap();
    assert_eq!(b.content, vec![Content::text("a\nb\n")]);
    assert_eq!(b.structured, Some(json!({"text": "a\nb\n"})));
    assert!(b.spill_path.is_none());
    assert!(!dir.path().join("tool-output").exists());
}

#[test]
fn over_the_line_limit_keeps_head_and_tail_and_spills_everything() {
    let dir = tempfile::tempdir().unwrap();
    let text: String = (1..=5000).map(|i| format!("line {i}\n")).collect();
    let bounds = OutputBounds {
        max_lines: 100,
        max_bytes: 1 << 20,
    };
    let b = bound(out(&text), bounds, &DirSpill(dir.path().into()), "c1").unwrap();
    let spill = b.spill_path.clone().unwrap();
    assert_eq!(std::fs::read_to_string(&spill).unwrap(), text);
    let got = b.content[0].as_text().unwrap();
    let lines: Vec<&str> = got.lines().collect();
    assert!(lines.len() <= 100, "{}", lines.len());
    assert_eq!(lines[0], "line 1");
    assert_eq!(*lines.last().unwrap(), "line 5000");
    assert_eq!(
        lines
            .iter()
            .filter(|l| l.starts_with("... output truncated; full content saved to "))
            .count(),
        1
    );
    // Within twice the byte budget, the structured output is kept whole.
    assert_eq!(b.structured.unwrap()["text"].as_str().unwrap(), text);
    assert_eq!(b.bytes_full, text.len() as u64);
}

#[test]
fn over_the_byte_limit_with_one_huge_line() {
    let dir = tempfile::tempdir().unwrap();
    let text = "é".repeat(100_000); // one 200 KB line of two-byte chars
    let b = bound(
        out(&text),
        OutputBounds::default(),
        &DirSpill(dir.path().into()),
        "c",
    )
    .unwrap();
    let got = b.content[0].as_text().unwrap();
    assert!(got.len() <= DEFAULT_MAX_BYTES_FOR_TEST, "{}", got.len());
    assert!(got.contains("output truncated"));
    assert_eq!(
        std::fs::read_to_string(b.spill_path.unwrap()).unwrap(),
        text
    );
}

const DEFAULT_MAX_BYTES_FOR_TEST: usize = toolgate_core::bound::DEFAULT_MAX_BYTES;

#[test]
fn structured_output_is_measured_when_there_is_no_text() {
    let dir = tempfile::tempdir().unwrap();
    let items: Vec<u32> = (0..20_000).collect();
    let o = ToolOutput {
        structured: json!({ "items": items }),
        content: vec![],
        exit_status: None,
    };
    let b = bound(
        o,
        OutputBounds::default(),
        &DirSpill(dir.path().into()),
        "c",
    )
    .unwrap();
    assert!(b.spill_path.is_some());
    assert!(b.content[0].as_text().unwrap().contains("output truncated"));
}

#[test]
fn media_passes_unchanged_up_to_5_mib_and_errors_beyond() {
    let dir = tempfile::tempdir().unwrap();
    let small = Content::Image {
        data: "A".repeat(4 * 1000),
        mime_type: "image/png".into(),
    };
    let o = ToolOutput {
        structured: json!({}),
        content: vec![Content::text("pic"), small.clone()],
        exit_status: None,
    };
    let b = bound(
        o,
        OutputBounds::default(),
        &DirSpill(dir.path().into()),
        "c",
    )
    .unwrap();
    assert_eq!(b.content[1], small);
    let big = Content::Image {
        data: "A".repeat(8 * 1024 * 1024),
        mime_type: "image/png".into(),
    };
    let o = ToolOutput {
        structured: json!({}),
        content: vec![big],
        exit_status: None,
    };
    let err = bound(
        o,
        OutputBounds::default(),
        &DirSpill(dir.path().into()),
        "c",
    )
    .unwrap_err();
    assert!(matches!(err, BoundError::MediaTooLarge { .. }));
    assert!(err.to_string().contains("image/png"));
}

#[test]
fn a_failing_spill_fails_the_bound() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("f");
    std::fs::write(&file, "x").unwrap();
    let text = "x\n".repeat(3000);
    let err = bound(out(&text), OutputBounds::default(), &DirSpill(file), "c").unwrap_err();
    assert!(matches!(err, BoundError::Spill(_)));
    assert!(err.to_string().contains("could not save full tool output"));
}

#[test]
fn a_shrunk_structured_output_keeps_its_shape_and_fits() {
    let dir = tempfile::tempdir().unwrap();
    let items: Vec<String> = (0..5000)
        .map(|i| format!("{i}:{}", "z".repeat(300)))
        .collect();
    let o = ToolOutput {
        structured: json!({"items": items, "count": 5000, "note": "x".repeat(200_000)}),
        content: vec![Content::text(items.join("\n"))],
        exit_status: None,
    };
    let b = bound(
        o,
        OutputBounds::default(),
        &DirSpill(dir.path().into()),
        "c",
    )
    .unwrap();
    let s = b.structured.unwrap();
    assert_eq!(s["count"], 5000);
    assert!(s["items"].as_array().unwrap().len() <= 200);
    assert!(s["note"].is_string());
    assert!(
        serde_json::to_string(&s).unwrap().len() <= 2 * toolgate_core::bound::DEFAULT_MAX_BYTES
    );
}
