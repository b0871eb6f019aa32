//! Compiles the index of the read specs (`src/classify/specs/*.toml`): where
//! each command's entry is in its file, so a process never scans the text.

// A build script is wiring: a failure here should stop the build loudly.
#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::fmt::Write as _;
use std::path::Path;

#[path = "src/classify/spec_index.rs"]
mod spec_index;

fn main() {
    let dir = Path::new("src/classify/specs");
    println!("cargo:rerun-if-changed={}", dir.display());
    println!("cargo:rerun-if-changed=src/classify/spec_index.rs");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .expect("the spec directory is readable")
        .map(|e| e.expect("a spec directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();

    let mut out = String::from("static GENERATED_INDEX: &[GeneratedFile] = &[\n");
    for path in &files {
        println!("cargo:rerun-if-changed={}", path.display());
        let text = std::fs::read_to_string(path).expect("a spec file is UTF-8 text");
        let entries = spec_index::scan(&text);
        let file = path
            .file_name()
            .and_then(|n| n.to_str())
            .expect("a UTF-8 file name");
        // Names sorted for a binary search; a later entry of the same name wins,
        // as a later table would.
        let mut names: std::collections::BTreeMap<&str, usize> = Default::default();
        for (i, e) in entries.iter().enumerate() {
            for n in &e.names {
                names.insert(n, i);
            }
        }
        write!(out, "    GeneratedFile {{ file: {file:?}, entries: &[").unwrap();
        for e in &entries {
            write!(out, "&{:?}, ", e.ranges).unwrap();
        }
        write!(out, "], names: &[").unwrap();
        for (n, i) in names {
            write!(out, "({n:?}, {i}), ").unwrap();
        }
        out.push_str("] },\n");
    }
    out.push_str("];\n");
    let dest =
        Path::new(&std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("spec_index.rs");
    std::fs::write(dest, out).expect("OUT_DIR is writable");
}
