//! `read`: success paths and bad inputs, through the real handler on a tempdir.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::file_support;

use std::io::Cursor;
use std::os::unix::fs::symlink;

use base64::Engine;
use file_support::{Ws, canon, err, text};
use serde_json::json;
use toolgate_core::{Content, Risk};
use toolgate_tools::file_tools::ReadTool;

fn read(ws: &Ws) -> ReadTool {
    ReadTool::new(ws.state.clone())
}

#[tokio::test]
async fn reads_numbered_lines_with_offset_and_limit() {
    let ws = Ws::new();
    ws.put("a.txt", "one\ntwo\nthree\nfour\n");
    let out = ws
        .call(read(&ws), json!({"path": "a.txt", "offset": 2, "limit": 2}))
        .await
        .unwrap();
    let t = &out.structured["text"];
    assert_eq!(t["content"], "     2\ttwo\n     3\tthree");
    assert_eq!(t["start_line"], 2);
    assert_eq!(t["end_line"], 3);
    assert_eq!(t["total_lines"], 4);
    assert!(t["note"].as_str().unwrap().contains("offset=4"));
    assert!(text(&out).contains("offset=4"));
    assert_eq!(out.structured["kind"], "text");
}

#[tokio::test]
async fn default_limit_is_2000_lines_with_a_note() {
    let ws = Ws::new();
    let body: String = (1..=2500).map(|i| format!("line {i}\n")).collect();
    ws.put("big.txt", body);
    let out = ws
        .call(read(&ws), json!({"path": "big.txt"}))
        .await
        .unwrap();
    let t = &out.structured["text"];
    assert_eq!(t["end_line"], 2000);
    assert_eq!(t["total_lines"], 2500);
    assert!(t["note"].as_str().unwrap().contains("offset=2001"));
    let rest = ws
        .call(read(&ws), json!({"path": "big.txt", "offset": 2001}))
        .await
        .unwrap();
    assert_eq!(rest.structured["text"]["end_line"], 2500);
    assert!(rest.structured["text"].get("note").is_none());
}

#[tokio::test]
async fn ten_megabyte_single_line_is_cut_with_a_marker() {
    let ws = Ws::new();
    ws.put("one-line.txt", "x".repeat(10 * 1024 * 1024));
    let out = ws
        .call(read(&ws), json!({"path": "one-line.txt"}))
        .await
        .unwrap();
    let t = &out.structured["text"];
    assert_eq!(t["total_lines"], 1);
    assert_eq!(t["cut_lines"], json!([1]));
    let content = t["content"].as_str().unwrap();
    assert!(content.len() < 2100, "content is {} bytes", content.len());
    assert!(content.contains("[line cut: 10485760 characters, first 2000 shown]"));
}

#[tokio::test]
async fn strips_bom_and_crlf_and_reports_bom() {
    let ws = Ws::new();
    ws.put("w.txt", "\u{feff}alpha\r\nbeta\r\n");
    let out = ws.call(read(&ws), json!({"path": "w.txt"})).await.unwrap();
    assert_eq!(
        out.structured["text"]["content"],
        "     1\talpha\n     2\tbeta"
    );
    assert_eq!(out.structured["text"]["bom"], true);
}

#[tokio::test]
async fn empty_file_is_read_with_a_note() {
    let ws = Ws::new();
    ws.put("empty.txt", "");
    let out = ws
        .call(read(&ws), json!({"path": "empty.txt"}))
        .await
        .unwrap();
    assert_eq!(out.structured["text"]["total_lines"], 0);
    assert_eq!(out.structured["text"]["note"], "the file is empty");
}

#[tokio::test]
async fn invalid_utf8_is_shown_lossily_and_flagged() {
    let ws = Ws::new();
    ws.put("latin1.txt", b"caf\xe9\nok\n");
    let out = ws
        .call(read(&ws), json!({"path": "latin1.txt"}))
        .await
        .unwrap();
    let t = &out.structured["text"];
    assert_eq!(t["invalid_utf8"], true);
    assert!(t["content"].as_str().unwrap().contains("caf\u{fffd}"));
    assert!(t["note"].as_str().unwrap().contains("not valid UTF-8"));
}

#[tokio::test]
async fn missing_file_is_a_clear_error() {
    let ws = Ws::new();
    let e = err(ws.call(read(&ws), json!({"path": "nope.txt"})).await);
    assert!(e.contains("file not found"), "{e}");
    assert!(e.contains("nope.txt"), "{e}");
}

#[tokio::test]
async fn directory_gives_a_sorted_paged_listing() {
    let ws = Ws::new();
    ws.put("d/b.txt", "");
    ws.put("d/a.txt", "");
    ws.put("d/sub/x", "");
    ws.put("d/.hidden", "");
    let out = ws.call(read(&ws), json!({"path": "d"})).await.unwrap();
    assert_eq!(out.structured["kind"], "directory");
    assert_eq!(
        out.structured["directory"]["entries"],
        json!([".hidden", "a.txt", "b.txt", "sub/"])
    );
    let page = ws
        .call(read(&ws), json!({"path": "d", "offset": 2, "limit": 2}))
        .await
        .unwrap();
    let d = &page.structured["directory"];
    assert_eq!(d["entries"], json!(["a.txt", "b.txt"]));
    assert_eq!(d["total_entries"], 4);
    assert!(d["note"].as_str().unwrap().contains("offset=4"));
}

/// A directory read with `read`: an entry named `a` + line break + `id_rsa`
/// forged a second entry in the text, as in `list`; a directory named with
/// an escape sequence could rewrite the line. Names are shown as `list`
/// shows them, a directory's `/` outside the quotes.
#[tokio::test]
async fn a_line_break_in_an_entry_name_cannot_forge_an_entry_of_a_directory_read() {
    let ws = Ws::new();
    ws.put("d/a\nid_rsa", "");
    ws.put("d/e\u{1b}[2K/x", "");
    ws.put("d/plain.txt", "");
    let out = ws.call(read(&ws), json!({"path": "d"})).await.unwrap();
    let shown = text(&out);
    assert!(!shown.contains('\u{1b}'), "{shown:?}");
    assert!(!shown.lines().any(|l| l == "id_rsa"), "{shown}");
    assert!(shown.contains("\n\"a\\nid_rsa\"\n"), "{shown}");
    assert!(shown.contains("\n\"e\\u001b[2K\"/\n"), "{shown}");
    assert!(shown.contains("\nplain.txt"), "{shown}");
    assert_eq!(
        out.structured["directory"]["entries"],
        json!(["a\nid_rsa", "e\u{1b}[2K/", "plain.txt"])
    );
}

#[tokio::test]
async fn binary_files_are_refused() {
    let ws = Ws::new();
    ws.put("blob.dat", b"abc\0def");
    let e = err(ws.call(read(&ws), json!({"path": "blob.dat"})).await);
    assert!(e.contains("binary file"), "{e}");
    // A binary extension is refused even without a NUL byte in the sample.
    ws.put("archive.zip", b"PK not really");
    let e = err(ws.call(read(&ws), json!({"path": "archive.zip"})).await);
    assert!(e.contains("binary file"), "{e}");
}

fn png(width: u32, height: u32) -> Vec<u8> {
    let img = image::RgbImage::from_fn(width, height, |x, y| {
        image::Rgb([(x % 256) as u8, (y % 256) as u8, 7])
    });
    let mut out = Cursor::new(Vec::new());
    img.write_to(&mut out, image::ImageFormat::Png).unwrap();
    out.into_inner()
}

#[tokio::test]
async fn small_image_is_returned_as_is() {
    let ws = Ws::new();
    let bytes = png(40, 30);
    ws.put("pic.png", &bytes);
    let out = ws
        .call(read(&ws), json!({"path": "pic.png"}))
        .await
        .unwrap();
    assert_eq!(out.structured["kind"], "image");
    assert_eq!(out.structured["image"]["resized"], false);
    match &out.content[0] {
        Content::Image { data, mime_type } => {
            assert_eq!(mime_type, "image/png");
            let decoded = base64::engine::general_purpose::STANDARD
                .decode(data)
                .unwrap();
            assert_eq!(decoded, bytes);
        }
        other => panic!("expected an image, got {other:?}"),
    }
}

#[tokio::test]
async fn large_image_is_downscaled_to_2000_px() {
    let ws = Ws::new();
    ws.put("wide.png", png(2400, 120));
    let out = ws
        .call(read(&ws), json!({"path": "wide.png"}))
        .await
        .unwrap();
    let i = &out.structured["image"];
    assert_eq!(i["resized"], true);
    assert_eq!(
        (i["width"].as_u64(), i["height"].as_u64()),
        (Some(2000), Some(100))
    );
    assert_eq!(i["original_width"], 2400);
    let Content::Image { data, .. } = &out.content[0] else {
        panic!("expected an image");
    };
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(data)
        .unwrap();
    let img = image::load_from_memory(&decoded).unwrap();
    assert_eq!((img.width(), img.height()), (2000, 100));
}

#[tokio::test]
async fn corrupt_image_is_a_clear_error() {
    let ws = Ws::new();
    ws.put("broken.png", b"\x89PNG\r\n\x1a\nnot really a png");
    let e = err(ws.call(read(&ws), json!({"path": "broken.png"})).await);
    assert!(e.contains("cannot be decoded"), "{e}");
}

#[tokio::test]
async fn fifo_is_refused_without_blocking() {
    let ws = Ws::new();
    let fifo = ws.path("pipe");
    let status = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(status.success());
    let e = err(ws.call(read(&ws), json!({"path": "pipe"})).await);
    assert!(e.contains("a FIFO"), "{e}");
}

#[tokio::test]
async fn unreadable_file_is_a_clear_error() {
    // Root can read anything with permission bits; /proc/self/mem fails at offset 0.
    let ws = Ws::new();
    let e = err(ws.call(read(&ws), json!({"path": "/proc/self/mem"})).await);
    assert!(e.contains("cannot read"), "{e}");
    assert!(e.contains("/mem"), "{e}");
}

#[tokio::test]
async fn bad_offsets_and_fields_are_rejected_before_running() {
    let ws = Ws::new();
    ws.put("a.txt", "one\n");
    let e = err(ws
        .call(read(&ws), json!({"path": "a.txt", "offset": 0}))
        .await);
    assert!(e.contains("1-based"), "{e}");
    let e = err(ws
        .call(read(&ws), json!({"path": "a.txt", "limit": 0}))
        .await);
    assert!(e.contains("limit"), "{e}");
    let e = err(ws
        .call(read(&ws), json!({"path": "a.txt", "offset": 5}))
        .await);
    assert!(e.contains("past the end"), "{e}");
    let e = err(ws
        .call(read(&ws), json!({"path": "a.txt", "lines": 5}))
        .await);
    assert!(e.contains("unknown field"), "{e}");
    let e = err(ws.call(read(&ws), json!({"path": "a\u{0}b"})).await);
    assert!(e.contains("NUL"), "{e}");
}

#[test]
fn intent_is_one_read_request_on_the_canonical_path() {
    let ws = Ws::new();
    ws.put("src/a.rs", "");
    let reqs = ws
        .intent(read(&ws), json!({"path": "src/../src/a.rs"}))
        .unwrap();
    assert_eq!(reqs.len(), 1);
    assert_eq!(reqs[0].action, "read");
    assert_eq!(reqs[0].risk, Risk::Read);
    assert_eq!(reqs[0].resource, canon(&ws.path("src/a.rs")));
}

#[tokio::test]
async fn symlink_escape_resolves_outside_and_reads_the_target() {
    let ws = Ws::new();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.txt"), "outside text\n").unwrap();
    symlink(outside.path().join("secret.txt"), ws.path("link.txt")).unwrap();
    let reqs = ws.intent(read(&ws), json!({"path": "link.txt"})).unwrap();
    let target = canon(&outside.path().join("secret.txt"));
    assert_eq!(reqs[0].resource, target);
    assert!(!ws.location.resolve("link.txt").unwrap().inside);
    let out = ws
        .call(read(&ws), json!({"path": "link.txt"}))
        .await
        .unwrap();
    assert_eq!(out.structured["path"], target);
    assert!(text(&out).contains("outside text"));
}
