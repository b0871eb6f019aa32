//! Compiles the read specs (`src/classify/specs/*.toml`): for each command's
//! entry, its TOML table with the file's option groups resolved, encoded with
//! `postcard` into one blob, and an index of the entries by name. A process
//! then never parses TOML to judge a command: it decodes the bytes of the
//! entries it needs.

// A build script is wiring: a failure here should stop the build loudly.
#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

#[path = "src/classify/spec_index.rs"]
mod spec_index;
#[path = "src/classify/spec_text.rs"]
#[allow(dead_code)]
mod spec_text;

fn main() {
    let dir = Path::new("src/classify/specs");
    println!("cargo:rerun-if-changed={}", dir.display());
    println!("cargo:rerun-if-changed=src/classify/spec_index.rs");
    println!("cargo:rerun-if-changed=src/classify/spec_text.rs");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .expect("the spec directory is readable")
        .map(|e| e.expect("a spec directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();

    let mut blob: Vec<u8> = Vec::new();
    let mut out = String::from("static GENERATED_INDEX: &[GeneratedFile] = &[\n");
    // Every name of every file, sorted by name then file: one binary search
    // finds a command in all files at once.
    let mut all_names: Vec<(String, usize, usize)> = Vec::new();
    for (file_at, path) in files.iter().enumerate() {
        println!("cargo:rerun-if-changed={}", path.display());
        let text = std::fs::read_to_string(path).expect("a spec file is UTF-8 text");
        let entries = spec_index::scan(&text);
        let file = path
            .file_name()
            .and_then(|n| n.to_str())
            .expect("a UTF-8 file name");
        // Names sorted for a binary search; a later entry of the same name wins,
        // as a later table would.
        let mut names: BTreeMap<&str, usize> = BTreeMap::new();
        for (i, e) in entries.iter().enumerate() {
            for n in &e.names {
                names.insert(n, i);
            }
        }
        write!(out, "    GeneratedFile {{ file: {file:?}, tables: &[").unwrap();
        for e in &entries {
            let entry_text: String = e.ranges.iter().map(|(a, b)| &text[*a..*b]).collect();
            let table: BTreeMap<String, spec_text::SpecText> = toml::from_str(&entry_text)
                .unwrap_or_else(|err| panic!("{file}: {:?}: {err}", e.names));
            let table = spec_text::resolve_groups(table)
                .unwrap_or_else(|err| panic!("{file}: {:?}: {err}", e.names));
            let table: BTreeMap<String, spec_text::CompiledSpec<'static>> = table
                .into_iter()
                .map(|(key, entry)| (key, compile(entry, &mut blob)))
                .collect();
            let bytes = postcard::to_allocvec(&table).expect("a spec table encodes");
            let from = blob.len();
            blob.extend_from_slice(&bytes);
            write!(out, "({from}, {}), ", blob.len()).unwrap();
        }
        out.push_str("] },\n");
        for (n, i) in names {
            all_names.push((n.to_string(), file_at, i));
        }
    }
    out.push_str("];\n");
    all_names.sort();
    out.push_str("static GENERATED_NAMES: &[(&str, usize, usize)] = &[\n");
    for (n, f, i) in &all_names {
        writeln!(out, "    ({n:?}, {f}, {i}),").unwrap();
    }
    out.push_str("];\n");
    let out_dir = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    std::fs::write(Path::new(&out_dir).join("spec_index.rs"), out).expect("OUT_DIR is writable");
    std::fs::write(Path::new(&out_dir).join("spec_tables.bin"), blob).expect("OUT_DIR is writable");
}

/// Compiles one entry: its option lines parsed into a sorted table, its
/// subcommands each into their own bytes of `blob` (recursively), its
/// examples dropped (the tests read the TOML itself).
fn compile(mut entry: spec_text::SpecText, blob: &mut Vec<u8>) -> spec_text::CompiledSpec<'static> {
    entry.read.clear();
    entry.not_read.clear();
    // The compiled table borrows its strings; a build script can leak them.
    let lines: &'static [String] = Vec::leak(std::mem::take(&mut entry.options));
    let all_long = entry.style.as_deref() == Some("find");
    let options = spec_text::OptionTable::parse(lines.iter().map(String::as_str), all_long)
        .unwrap_or_else(|err| panic!("{:?}: {err}", entry.names));
    let subs = std::mem::take(&mut entry.sub)
        .into_iter()
        .map(|(key, sub)| {
            let names: Vec<&'static str> = sub.names.iter().map(|n| leak(n)).collect();
            let compiled = compile(sub, blob);
            let bytes = postcard::to_allocvec(&compiled).expect("a subcommand encodes");
            let from = blob.len();
            blob.extend_from_slice(&bytes);
            spec_text::CompiledSub {
                key: leak(&key),
                names,
                from,
                to: blob.len(),
            }
        })
        .collect();
    let facts = spec_text::sub_facts(&entry)
        .unwrap_or_else(|err| panic!("{:?}: {err}", entry.names))
        .map(|facts| {
            facts
                .into_iter()
                .map(|f| spec_text::SubFactText {
                    name: leak(f.name),
                    risk: leak(f.risk),
                    flags: f.flags.into_iter().map(leak).collect(),
                    check: f.check.map(leak),
                })
                .collect()
        });
    // Compiled into `facts`: the crate reads a subcommand's when it judges it.
    entry.sub_risks.clear();
    entry.sub_flags.clear();
    entry.sub_checks.clear();
    spec_text::CompiledSpec {
        text: entry,
        options,
        subs,
        facts,
    }
}

fn leak(s: &str) -> &'static str {
    String::leak(s.to_string())
}
