//! Runs the output checks over every text file under the given directories, as
//! if each file were a tool's output, and reports what would be redacted and
//! flagged: the false-redaction measurement on ordinary source.
//!
//! ```sh
//! cargo run --release -p toolgate-core --example scan_tree -- . ~/.cargo/registry/src
//! ```
//!
//! Prints one line per redaction (`R kind path:line value-masked`) and per flag
//! (`F kind path:line excerpt`), then the totals and the rates per 10 MB.
//! Files with a NUL byte in their first 8 KB (binaries) and files over 4 MB are
//! skipped, as are `.git` and `target` directories.

// A command-line tool for measuring; it prints its errors and goes on.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use toolgate_core::output_check::scanner;

fn main() {
    let roots: Vec<PathBuf> = std::env::args().skip(1).map(PathBuf::from).collect();
    let quiet_flags = std::env::var_os("SCAN_QUIET_FLAGS").is_some();
    let s = scanner().expect("the scanner builds");
    let mut files = Vec::new();
    for root in &roots {
        walk(root, &mut files);
    }
    files.sort();
    let (mut bytes, mut scanned, mut redactions, mut flags) = (0u64, 0u64, 0u64, 0u64);
    for path in &files {
        let Ok(data) = std::fs::read(path) else {
            continue;
        };
        if data.len() > 4 << 20 || data[..data.len().min(8192)].contains(&0) {
            continue;
        }
        let text = String::from_utf8_lossy(&data);
        scanned += 1;
        bytes += data.len() as u64;
        for span in s.find_secrets(&text) {
            redactions += 1;
            let line = text[..span.start].matches('\n').count() + 1;
            let value = &text[span.start..span.end];
            println!(
                "R {} {}:{} {}",
                span.kind,
                path.display(),
                line,
                mask(value)
            );
        }
        for f in s.flags(&text) {
            flags += 1;
            if !quiet_flags {
                println!("F {} {}:{} {}", f.kind, path.display(), f.line, f.excerpt);
            }
        }
    }
    let mb = bytes as f64 / 1e6;
    println!(
        "files {scanned}, {mb:.1} MB, redactions {redactions} ({:.2} per 10 MB), flags {flags} ({:.2} per 10 MB)",
        redactions as f64 / mb * 10.0,
        flags as f64 / mb * 10.0
    );
}

/// The first 8 and last 4 characters of a value, the rest as its length.
fn mask(value: &str) -> String {
    let flat: String = value.chars().filter(|c| !c.is_control()).collect();
    let n = flat.chars().count();
    if n <= 16 {
        return format!("{flat:?}");
    }
    let head: String = flat.chars().take(8).collect();
    let tail: String = flat.chars().skip(n - 4).collect();
    format!("{head}…({n})…{tail}")
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        if dir.is_file() {
            out.push(dir.to_path_buf());
        }
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            let name = entry.file_name();
            if name == ".git" || name == "target" {
                continue;
            }
            walk(&path, out);
        } else if kind.is_file() {
            out.push(path);
        }
    }
}
