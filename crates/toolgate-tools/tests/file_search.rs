//! `list`, `glob` and `grep`: success paths and bad inputs, through the real
//! handler on a tempdir.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::file_support;

use std::time::{Duration, SystemTime};

use file_support::{Ws, canon, err, text};
use serde_json::{Value, json};
use toolgate_core::Risk;
use toolgate_tools::file_tools::{FileToolsConfig, GlobTool, GrepTool, ListTool};

fn set_mtime(ws: &Ws, rel: &str, secs_ago: u64) {
    let f = std::fs::File::options()
        .write(true)
        .open(ws.path(rel))
        .unwrap();
    f.set_modified(SystemTime::now() - Duration::from_secs(secs_ago))
        .unwrap();
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect()
}

/// A small project: sources, an ignored build dir, secrets and an example.
/// A listing of `want` (in any order) past the limit: the counts, and the
/// first 100 names in sorted order.
fn assert_first_100(listing: &Value, mut want: Vec<String>) {
    want.sort();
    assert_eq!(listing["total"], want.len());
    assert_eq!(listing["more"], want.len() - 100);
    want.truncate(100);
    assert_eq!(strings(&listing["files"]), want);
}

fn project() -> Ws {
    let ws = Ws::new();
    ws.put(".gitignore", "target/\n*.log\n");
    ws.put("src/main.rs", "fn main() {\n    let Needle = 1;\n}\n");
    ws.put("src/lib.rs", "pub fn needle() {}\n// TODO: more\n");
    ws.put("src/util/mod.rs", "// needle in util\n");
    ws.put("README.md", "A needle in the readme.\n");
    ws.put("target/debug/out.rs", "needle in build output\n");
    ws.put("build.log", "needle in a log\n");
    ws.put(".env", "API_KEY=needle-secret\n");
    ws.put(".env.local", "needle\n");
    ws.put(".env.example", "API_KEY=needle-example\n");
    ws.put("bin/tool.bin", b"needle\0binary");
    ws
}

#[tokio::test]
async fn list_honours_gitignore_and_skips_credentials() {
    let ws = project();
    let out = ws
        .call(ListTool::new(ws.state.clone()), json!({}))
        .await
        .unwrap();
    assert_eq!(
        strings(&out.structured["files"]),
        [
            ".env.example",
            ".gitignore",
            "README.md",
            "bin/tool.bin",
            "src/lib.rs",
            "src/main.rs",
            "src/util/mod.rs"
        ]
    );
    assert_eq!(out.structured["more"], 0);
    let t = text(&out);
    assert!(
        t.contains("  src/\n    lib.rs\n    main.rs\n    util/\n      mod.rs"),
        "{t}"
    );
}

#[tokio::test]
async fn list_with_ignore_globs_and_a_subdirectory() {
    let ws = project();
    let out = ws
        .call(
            ListTool::new(ws.state.clone()),
            json!({"ignore": ["util", "*.md", "bin/**"]}),
        )
        .await
        .unwrap();
    assert_eq!(
        strings(&out.structured["files"]),
        [".env.example", ".gitignore", "src/lib.rs", "src/main.rs"]
    );
    let out = ws
        .call(ListTool::new(ws.state.clone()), json!({"path": "src"}))
        .await
        .unwrap();
    assert_eq!(
        strings(&out.structured["files"]),
        ["lib.rs", "main.rs", "util/mod.rs"]
    );
}

/// Rules in directories above the one walked apply to it, whichever file holds
/// them; the walk only skips looking at parents that hold none.
#[tokio::test]
async fn list_and_glob_of_a_subdirectory_honour_rules_above_it() {
    for (file, rules) in [
        (".gitignore", "*.log\n"),
        (".ignore", "*.log\n"),
        (".git/info/exclude", "*.log\n"),
        ("sub/.gitignore", "*.log\n"),
    ] {
        let ws = Ws::new();
        ws.put(file, rules);
        ws.put("sub/inner/keep.rs", "");
        ws.put("sub/inner/drop.log", "");
        ws.put("sub/inner/deeper/drop.log", "");
        let out = ws
            .call(
                ListTool::new(ws.state.clone()),
                json!({"path": "sub/inner"}),
            )
            .await
            .unwrap();
        assert_eq!(strings(&out.structured["files"]), ["keep.rs"], "{file}");
        assert_eq!(out.structured["total"], 1, "{file}");
        let out = ws
            .call(
                GlobTool::new(ws.state.clone()),
                json!({"pattern": "**/*", "path": "sub/inner"}),
            )
            .await
            .unwrap();
        assert_eq!(strings(&out.structured["files"]), ["keep.rs"], "{file}");
    }
}

/// A negation above the walked directory re-includes what a broader rule left
/// out; the same files come back with no rules anywhere.
#[tokio::test]
async fn list_of_a_subdirectory_with_negated_and_no_rules_above() {
    let ws = Ws::new();
    ws.put(".gitignore", "*.log\n!keep.log\n");
    ws.put("sub/keep.log", "");
    ws.put("sub/drop.log", "");
    ws.put("sub/a.rs", "");
    let list = || ListTool::new(ws.state.clone());
    let out = ws.call(list(), json!({"path": "sub"})).await.unwrap();
    assert_eq!(strings(&out.structured["files"]), ["a.rs", "keep.log"]);
    std::fs::remove_file(ws.path(".gitignore")).unwrap();
    let out = ws.call(list(), json!({"path": "sub"})).await.unwrap();
    assert_eq!(
        strings(&out.structured["files"]),
        ["a.rs", "drop.log", "keep.log"]
    );
}

/// The limit keeps the first files in name order however the directory hands
/// them out, and counts every one.
#[tokio::test]
async fn list_limit_returns_the_first_names_in_order() {
    let ws = Ws::new();
    // Created in a scrambled order (multiplying by a unit mod 250).
    for i in 0..250 {
        let n = (i * 97 + 13) % 250;
        ws.put(&format!("d{}/f{n:03}.txt", n % 3), "");
    }
    let out = ws
        .call(ListTool::new(ws.state.clone()), json!({"ignore": ["d2"]}))
        .await
        .unwrap();
    let want: Vec<String> = (0..250)
        .filter(|n| n % 3 != 2)
        .map(|n| format!("d{}/f{n:03}.txt", n % 3))
        .collect();
    assert_first_100(&out.structured, want);
}

/// A tree too large to walk inline is walked again off the event loop: same
/// rules, same counts, same first names.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_of_a_large_tree_walks_off_the_event_loop_with_the_same_rules() {
    let ws = Ws::new();
    ws.put(".gitignore", "*.log\n");
    for i in 0..4500 {
        ws.put(&format!("d{}/f{i:04}.txt", i % 7), "");
    }
    ws.put("d0/drop.log", "");
    ws.put("d1/.env", "");
    let out = ws
        .call(ListTool::new(ws.state.clone()), json!({"ignore": ["d6"]}))
        .await
        .unwrap();
    let mut want: Vec<String> = (0..4500)
        .filter(|i| i % 7 != 6)
        .map(|i| format!("d{}/f{i:04}.txt", i % 7))
        .collect();
    want.push(".gitignore".into());
    assert_first_100(&out.structured, want);
}

#[tokio::test]
async fn credential_files_are_listed_when_the_policy_allows() {
    let ws = Ws::with_config(FileToolsConfig {
        allow_credential_files: true,
        ..FileToolsConfig::default()
    });
    ws.put(".env", "A=1\n");
    ws.put(".env.local", "A=1\n");
    let out = ws
        .call(ListTool::new(ws.state.clone()), json!({}))
        .await
        .unwrap();
    assert_eq!(strings(&out.structured["files"]), [".env", ".env.local"]);
    let out = ws
        .call(GrepTool::new(ws.state.clone()), json!({"pattern": "A=1"}))
        .await
        .unwrap();
    assert_eq!(out.structured["files_with_matches"], 2);
}

#[tokio::test]
async fn list_limit_says_how_many_more() {
    let ws = Ws::new();
    for i in 0..130 {
        ws.put(&format!("f{i:03}.txt"), "");
    }
    let out = ws
        .call(ListTool::new(ws.state.clone()), json!({}))
        .await
        .unwrap();
    assert_eq!(out.structured["files"].as_array().unwrap().len(), 100);
    assert_eq!(out.structured["total"], 130);
    assert_eq!(out.structured["more"], 30);
    assert!(
        out.structured["note"]
            .as_str()
            .unwrap()
            .starts_with("30 more files")
    );
}

#[tokio::test]
async fn list_bad_inputs() {
    let ws = project();
    let l = || ListTool::new(ws.state.clone());
    let e = err(ws.call(l(), json!({"path": "missing"})).await);
    assert!(e.contains("directory not found"), "{e}");
    let e = err(ws.call(l(), json!({"path": "README.md"})).await);
    assert!(e.contains("is a file, not a directory"), "{e}");
    let e = err(ws.call(l(), json!({"ignore": ["a[b"]})).await);
    assert!(e.contains("invalid glob"), "{e}");
    let e = err(ws.call(l(), json!({"ignore": "x"})).await);
    assert!(e.contains("ignore"), "{e}");
}

#[tokio::test]
async fn glob_sorts_newest_first() {
    let ws = project();
    set_mtime(&ws, "src/main.rs", 300);
    set_mtime(&ws, "src/lib.rs", 10);
    set_mtime(&ws, "src/util/mod.rs", 100);
    let out = ws
        .call(
            GlobTool::new(ws.state.clone()),
            json!({"pattern": "**/*.rs"}),
        )
        .await
        .unwrap();
    assert_eq!(
        strings(&out.structured["files"]),
        ["src/lib.rs", "src/util/mod.rs", "src/main.rs"]
    );
    // Without a slash the pattern matches names at any depth; with one, paths.
    let out = ws
        .call(
            GlobTool::new(ws.state.clone()),
            json!({"pattern": "mod.rs"}),
        )
        .await
        .unwrap();
    assert_eq!(strings(&out.structured["files"]), ["src/util/mod.rs"]);
    let out = ws
        .call(
            GlobTool::new(ws.state.clone()),
            json!({"pattern": "src/*.rs"}),
        )
        .await
        .unwrap();
    assert_eq!(out.structured["total"], 2);
    let out = ws
        .call(
            GlobTool::new(ws.state.clone()),
            json!({"pattern": "*.rs", "path": "src/util"}),
        )
        .await
        .unwrap();
    assert_eq!(strings(&out.structured["files"]), ["mod.rs"]);
    let out = ws
        .call(GlobTool::new(ws.state.clone()), json!({"pattern": ".env*"}))
        .await
        .unwrap();
    assert_eq!(strings(&out.structured["files"]), [".env.example"]);
}

/// A tree too large to walk inline goes to the parallel walk: same rules,
/// same matches and counts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn glob_of_a_large_tree_walks_off_the_event_loop_with_the_same_rules() {
    let ws = Ws::new();
    ws.put(".gitignore", "d3/\n");
    for i in 0..4500 {
        let ext = if i % 50 == 0 { "rs" } else { "txt" };
        ws.put(&format!("d{}/f{i:04}.{ext}", i % 5), "");
    }
    ws.put(".env.rs", "");
    let out = ws
        .call(
            GlobTool::new(ws.state.clone()),
            json!({"pattern": "**/*.rs"}),
        )
        .await
        .unwrap();
    // Every 50th file is a .rs file, all in d0 (i % 50 == 0 implies i % 5 == 0).
    let mut want: Vec<String> = (0..4500)
        .step_by(50)
        .map(|i| format!("d0/f{i:04}.rs"))
        .collect();
    want.sort();
    let mut got = strings(&out.structured["files"]);
    got.sort();
    assert_eq!(out.structured["total"], want.len());
    assert_eq!(got, want);
    let out = ws
        .call(GlobTool::new(ws.state.clone()), json!({"pattern": "d3/*"}))
        .await
        .unwrap();
    assert_eq!(out.structured["total"], 0);
    let out = ws
        .call(GlobTool::new(ws.state.clone()), json!({"pattern": "*.txt"}))
        .await
        .unwrap();
    assert_eq!(out.structured["total"], 4500 - 90 - 900);
    assert_eq!(out.structured["more"], 4500 - 90 - 900 - 100);
}

/// Ignore files that never end or never answer — a FIFO named `.gitignore`,
/// a `.ignore` linked to `/dev/zero`, a FIFO as `.git/info/exclude` — in a
/// tree past the inline walk's 4,096 entries: the `ignore` crate's parallel
/// walk, which took such trees before, opened them and blocked for ever, and
/// `list`, `glob` and `grep` with it.
#[tokio::test]
async fn ignore_files_that_block_stall_neither_list_glob_nor_grep_in_a_large_tree() {
    let ws = Ws::new();
    for i in 0..4500 {
        ws.put(&format!("many/f{i:04}.txt"), "");
    }
    ws.put("fifo/c.txt", "needle");
    ws.put("zero/c.txt", "needle");
    ws.put("excl/c.txt", "needle");
    ws.put("excl/.git/info/.keep", "");
    ws.put(".gitignore", "*.log\n");
    ws.put("fifo/drop.log", "needle");
    let fifo = |rel: &str| {
        let c = std::ffi::CString::new(ws.path(rel).into_os_string().into_encoded_bytes()).unwrap();
        assert_eq!(unsafe { nix::libc::mkfifo(c.as_ptr(), 0o644) }, 0, "{rel}");
    };
    fifo("fifo/.gitignore");
    fifo("excl/.git/info/exclude");
    std::os::unix::fs::symlink("/dev/zero", ws.path("zero/.ignore")).unwrap();
    let within = |what: &'static str| {
        move |r: Result<_, tokio::time::error::Elapsed>| {
            r.unwrap_or_else(|_| panic!("{what} stalled"))
        }
    };
    let limit = Duration::from_secs(30);
    let listed = tokio::time::timeout(
        limit,
        ws.call(ListTool::new(ws.state.clone()), json!({"path": "."})),
    )
    .await;
    let listed = within("list")(listed).unwrap();
    assert_eq!(
        listed.structured["total"],
        4500 + 4,
        "{}",
        listed.structured
    );
    let globbed = tokio::time::timeout(
        limit,
        ws.call(
            GlobTool::new(ws.state.clone()),
            json!({"pattern": "*/c.txt"}),
        ),
    )
    .await;
    let mut files = strings(&within("glob")(globbed).unwrap().structured["files"]);
    files.sort();
    assert_eq!(files, ["excl/c.txt", "fifo/c.txt", "zero/c.txt"]);
    let grepped = tokio::time::timeout(
        limit,
        ws.call(
            GrepTool::new(ws.state.clone()),
            json!({"pattern": "needle"}),
        ),
    )
    .await;
    let found = text(&within("grep")(grepped).unwrap());
    for dir in ["excl", "fifo", "zero"] {
        assert!(found.contains(&format!("{dir}/c.txt:1:needle")), "{found}");
    }
    assert!(!found.contains("drop.log"), "{found}");
}

#[tokio::test]
async fn glob_limit_and_bad_inputs() {
    let ws = Ws::new();
    for i in 0..105 {
        ws.put(&format!("d/f{i}.rs"), "");
    }
    let g = || GlobTool::new(ws.state.clone());
    let out = ws.call(g(), json!({"pattern": "**/*.rs"})).await.unwrap();
    assert_eq!(out.structured["more"], 5);
    assert!(text(&out).contains("5 more files"));
    let out = ws.call(g(), json!({"pattern": "*.nothing"})).await.unwrap();
    assert_eq!(text(&out), "No files found");
    let e = err(ws.call(g(), json!({"pattern": "{a,b"})).await);
    assert!(
        e.starts_with("prepare:") && e.contains("invalid glob"),
        "{e}"
    );
    let e = err(ws.call(g(), json!({"pattern": "/etc/*"})).await);
    assert!(e.contains("absolute"), "{e}");
    let e = err(ws.call(g(), json!({"pattern": "*", "path": "nope"})).await);
    assert!(e.contains("not found"), "{e}");
}

#[tokio::test]
async fn grep_finds_matches_skipping_ignored_binary_and_secret_files() {
    let ws = project();
    let out = ws
        .call(
            GrepTool::new(ws.state.clone()),
            json!({"pattern": "needle"}),
        )
        .await
        .unwrap();
    let s = &out.structured;
    let mut files: Vec<String> = s["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap().to_string())
        .collect();
    files.sort();
    assert_eq!(
        files,
        [".env.example", "README.md", "src/lib.rs", "src/util/mod.rs"]
    );
    assert_eq!(s["total_matches"], 4);
    assert_eq!(s["more"], 0);
    let t = text(&out);
    assert!(t.contains("src/lib.rs:1:pub fn needle() {}"), "{t}");
}

#[tokio::test]
async fn grep_regex_case_include_and_context() {
    let ws = project();
    let g = || GrepTool::new(ws.state.clone());
    let out = ws
        .call(
            g(),
            json!({"pattern": "needle", "case_insensitive": true, "include": "*.rs"}),
        )
        .await
        .unwrap();
    assert_eq!(out.structured["total_matches"], 3);
    let out = ws
        .call(
            g(),
            json!({"pattern": "fn (main|needle)", "include": ["src/*.rs"]}),
        )
        .await
        .unwrap();
    assert_eq!(out.structured["total_matches"], 2);
    let out = ws
        .call(
            g(),
            json!({"pattern": "Needle", "context": 1, "path": "src/main.rs"}),
        )
        .await
        .unwrap();
    let f = &out.structured["files"][0];
    assert_eq!(f["path"], "main.rs");
    let lines: Vec<(u64, bool)> = f["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l["line"].as_u64().unwrap(),
                l["is_match"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(lines, [(1, false), (2, true), (3, false)]);
    assert!(text(&out).contains("main.rs-1-fn main() {"));
}

#[tokio::test]
async fn grep_cuts_long_lines_and_limits_matches() {
    let ws = Ws::new();
    ws.put(
        "long.txt",
        format!("{}needle{}\n", "a".repeat(3000), "b".repeat(3000)),
    );
    let many: String = (0..150).map(|i| format!("match {i}\n")).collect();
    ws.put("many.txt", many);
    set_mtime(&ws, "many.txt", 1000);
    let g = || GrepTool::new(ws.state.clone());
    let out = ws.call(g(), json!({"pattern": "needle"})).await.unwrap();
    let line = out.structured["files"][0]["lines"][0]["text"]
        .as_str()
        .unwrap();
    assert!(line.len() < 2100);
    assert!(line.contains("[line cut: 6006 characters, first 2000 shown]"));
    let out = ws
        .call(g(), json!({"pattern": "match|needle"}))
        .await
        .unwrap();
    let s = &out.structured;
    assert_eq!(s["total_matches"], 151);
    assert_eq!(s["shown_matches"], 100);
    assert_eq!(s["more"], 51);
    // Newest file first: long.txt, then the first 99 matches of many.txt.
    assert_eq!(s["files"][0]["path"], "long.txt");
    assert_eq!(s["files"][1]["lines"].as_array().unwrap().len(), 99);
    assert_eq!(s["files"][1]["matches"], 150);
    assert!(
        s["note"]
            .as_str()
            .unwrap()
            .starts_with("51 more matching lines")
    );
}

/// A file of one line longer than the search's heap limit (no line break
/// anywhere): the search held the whole line in memory, on every worker at
/// once. Now the file is counted unreadable and the others are searched.
#[tokio::test]
async fn grep_does_not_hold_a_line_past_its_heap_limit() {
    let ws = Ws::new();
    let mut huge = vec![b'a'; toolgate_tools::file_tools::LINE_HEAP_MAX + 4096];
    huge.extend_from_slice(b"needle");
    ws.put("huge.txt", huge);
    ws.put("small.txt", "a needle\n");
    let out = ws
        .call(
            GrepTool::new(ws.state.clone()),
            json!({"pattern": "needle"}),
        )
        .await
        .unwrap();
    let s = &out.structured;
    assert_eq!(s["total_matches"], 1, "{s}");
    assert_eq!(s["files"][0]["path"], "small.txt");
    assert_eq!(s["unreadable"], 1, "{s}");
}

#[tokio::test]
async fn grep_bad_inputs() {
    let ws = project();
    let g = || GrepTool::new(ws.state.clone());
    let e = err(ws.call(g(), json!({"pattern": "(unclosed"})).await);
    assert!(
        e.starts_with("prepare:") && e.contains("invalid regex"),
        "{e}"
    );
    let e = err(ws.call(g(), json!({"pattern": ""})).await);
    assert!(e.contains("pattern is empty"), "{e}");
    let e = err(ws
        .call(g(), json!({"pattern": "x", "path": "missing"}))
        .await);
    assert!(e.contains("path not found"), "{e}");
    let e = err(ws.call(g(), json!({"pattern": "x", "context": -1})).await);
    assert!(e.contains("context"), "{e}");
    let e = err(ws.call(g(), json!({"pattern": "x", "regex": true})).await);
    assert!(e.contains("unknown field"), "{e}");
    let out = ws
        .call(g(), json!({"pattern": "zzz-not-there"}))
        .await
        .unwrap();
    assert_eq!(text(&out), "No matches found");
}

#[test]
fn intents_are_read_requests_on_canonical_paths() {
    let ws = project();
    let root = canon(ws.root());
    let src = canon(&ws.path("src"));
    let cases: Vec<(Vec<toolgate_core::PermissionRequest>, &str, &String)> = vec![
        (
            ws.intent(ListTool::new(ws.state.clone()), json!({}))
                .unwrap(),
            "list",
            &root,
        ),
        (
            ws.intent(
                GlobTool::new(ws.state.clone()),
                json!({"pattern": "*", "path": "src/util/.."}),
            )
            .unwrap(),
            "glob",
            &src,
        ),
        (
            ws.intent(
                GrepTool::new(ws.state.clone()),
                json!({"pattern": "x", "path": "src"}),
            )
            .unwrap(),
            "grep",
            &src,
        ),
    ];
    for (reqs, action, resource) in cases {
        assert_eq!(reqs.len(), 1);
        assert_eq!(reqs[0].action, action);
        assert_eq!(&reqs[0].resource, resource);
        assert_eq!(reqs[0].risk, Risk::Read);
    }
}

#[tokio::test]
async fn symlinked_directory_outside_resolves_outside() {
    let ws = Ws::new();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("x.txt"), "needle outside\n").unwrap();
    std::os::unix::fs::symlink(outside.path(), ws.path("ext")).unwrap();
    let reqs = ws
        .intent(
            GrepTool::new(ws.state.clone()),
            json!({"pattern": "needle", "path": "ext"}),
        )
        .unwrap();
    assert_eq!(reqs[0].resource, canon(outside.path()));
    // Walking the root does not follow the link out of the workspace.
    let out = ws
        .call(
            GrepTool::new(ws.state.clone()),
            json!({"pattern": "needle"}),
        )
        .await
        .unwrap();
    assert_eq!(out.structured["total_matches"], 0);
    // Searching the link searches the resolved directory.
    let out = ws
        .call(
            GrepTool::new(ws.state.clone()),
            json!({"pattern": "needle", "path": "ext"}),
        )
        .await
        .unwrap();
    assert_eq!(out.structured["total_matches"], 1);
    assert_eq!(out.structured["path"], canon(outside.path()));
}

/// A file named `"a\nid_rsa"`, one with a terminal escape and one with a
/// right-to-left override: printed raw, the first forged a second file
/// (`id_rsa`) in `glob`'s and `list`'s text and a second match line in
/// `grep`'s, and the
/// others changed how the rest of the line reads. Every name is now shown as
/// itself only when each of its characters is visible, else quoted as a JSON
/// string, which names the same file when pasted into a call. The structured
/// output keeps the names as they are.
#[tokio::test]
async fn a_line_break_or_escape_in_a_file_name_cannot_forge_lines_in_list_glob_or_grep() {
    let ws = Ws::new();
    let forged = "a\nid_rsa";
    let escape = "c\u{1b}[2Kb.txt";
    let bidi = "d\u{202e}txt.exe";
    for name in [forged, escape, bidi, "plain.txt"] {
        ws.put(name, "needle\n");
    }
    ws.put("dir\u{2028}x/inner.txt", "needle\n");
    let quoted = |name: &str| serde_json::to_string(name).unwrap();
    let check = |what: &str, shown: &str| {
        assert!(!shown.contains('\u{1b}'), "{what}: {shown:?}");
        assert!(!shown.contains('\u{202e}'), "{what}: {shown:?}");
        assert!(!shown.contains('\u{2028}'), "{what}: {shown:?}");
        assert!(
            !shown.lines().any(|l| l.trim_start().starts_with("id_rsa")),
            "{what}: a forged line in {shown:?}"
        );
        assert!(shown.contains("plain.txt"), "{what}: {shown:?}");
    };

    let listed = ws
        .call(ListTool::new(ws.state.clone()), json!({}))
        .await
        .unwrap();
    let shown = text(&listed);
    check("list", &shown);
    assert!(
        shown.contains(&format!("  {}\n", quoted(forged))),
        "{shown}"
    );
    assert!(shown.contains("  \"c\\u001b[2Kb.txt\"\n"), "{shown}");
    assert!(shown.contains("  \"d\\u202etxt.exe\"\n"), "{shown}");
    assert!(
        shown.contains("  \"dir\\u2028x\"/\n    inner.txt\n"),
        "{shown}"
    );
    let mut files = strings(&listed.structured["files"]);
    files.sort();
    assert_eq!(files[0], forged, "structured output keeps the name");

    let globbed = ws
        .call(GlobTool::new(ws.state.clone()), json!({"pattern": "**"}))
        .await
        .unwrap();
    let shown = text(&globbed);
    check("glob", &shown);
    let lines: Vec<&str> = shown.lines().collect();
    assert_eq!(lines.len(), 5, "one line per file: {shown}");
    assert!(lines.contains(&quoted(forged).as_str()), "{shown}");
    // The quoted form, as JSON, is the name.
    for line in lines.iter().filter(|l| l.starts_with('"')) {
        let name: String = serde_json::from_str(line).unwrap();
        assert!(ws.path(&name).exists(), "{name:?}");
    }

    let grepped = ws
        .call(
            GrepTool::new(ws.state.clone()),
            json!({"pattern": "needle"}),
        )
        .await
        .unwrap();
    let shown = text(&grepped);
    check("grep", &shown);
    assert!(
        shown.contains(&format!("{}:1:needle\n", quoted(forged))),
        "{shown}"
    );
    assert_eq!(shown.matches(":1:needle").count(), 5, "{shown}");
}
