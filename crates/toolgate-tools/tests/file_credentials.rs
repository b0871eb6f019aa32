//! Credentials and the path that is opened, attacked through the file tools:
//! secrets by name (in any case) and by hard link never come back from
//! `grep`, `list` or `glob`; a hard-linked ordinary file stays readable; a
//! symlink swapped in a loop never makes an allowed read or write act outside
//! the location.
//!
//! The tools know the home from `HOME`: this test binary sets one fake home
//! for all its tests, before any tool runs.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod file_support;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

use file_support::{Ws, err};
use serde_json::json;
use toolgate_core::Risk;
use toolgate_tools::file_tools::{GlobTool, GrepTool, ListTool, ReadTool, WriteTool};

/// The fake home (with `~/.ssh/id_rsa`), set as `HOME` once.
fn home() -> &'static Path {
    static HOME: OnceLock<PathBuf> = OnceLock::new();
    HOME.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap().keep();
        let home = std::fs::canonicalize(dir).unwrap();
        std::fs::create_dir_all(home.join(".ssh")).unwrap();
        std::fs::write(
            home.join(".ssh/id_rsa"),
            "-----BEGIN OPENSSH PRIVATE KEY-----\nSECRETKEY\n",
        )
        .unwrap();
        // SAFETY: set once, before any tool of this binary reads it (every
        // test calls `home()` first), and nothing else writes the environment.
        unsafe { std::env::set_var("HOME", &home) };
        home
    })
}

fn ws() -> Ws {
    home();
    Ws::new()
}

fn grep_files(out: &toolgate_core::ToolOutput) -> Vec<String> {
    out.structured["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap().to_string())
        .collect()
}

fn listed(out: &toolgate_core::ToolOutput) -> Vec<String> {
    out.structured["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap().to_string())
        .collect()
}

/// Credential files by name, in several cases, next to one ordinary file.
fn plant_named_secrets(w: &Ws) {
    w.put(".npmrc", "//registry.npmjs.org/:_authToken=TOKEN123\n");
    w.put(".netrc", "machine example.com login u password TOKEN123\n");
    w.put(".git-credentials", "https://u:TOKEN123@example.com\n");
    w.put(".ENV", "API=TOKEN123\n");
    w.put("config/.Env.Local", "API=TOKEN123\n");
    w.put("keys/ID_RSA", "TOKEN123\n");
    w.put(".ssh/config", "IdentityFile TOKEN123\n");
    w.put(".docker/config.json", "{\"auth\": \"TOKEN123\"}\n");
    w.put(".env.example", "API=TOKEN123 (placeholder)\n");
    w.put("src/a.rs", "// TOKEN123 appears in source too\n");
}

#[tokio::test]
async fn grep_never_returns_npmrc_netrc_git_credentials_or_names_in_another_case() {
    let w = ws();
    plant_named_secrets(&w);
    let tool = GrepTool::new(w.state.clone());
    let out = w.call(tool, json!({"pattern": "TOKEN123"})).await.unwrap();
    let mut files = grep_files(&out);
    files.sort();
    assert_eq!(
        files,
        vec![".env.example", "src/a.rs"],
        "{}",
        out.structured
    );
}

#[tokio::test]
async fn list_and_glob_do_not_list_credential_files() {
    let w = ws();
    plant_named_secrets(&w);
    let out = w
        .call(ListTool::new(w.state.clone()), json!({}))
        .await
        .unwrap();
    let mut files = listed(&out);
    files.sort();
    assert_eq!(
        files,
        vec![".env.example", "src/a.rs"],
        "{}",
        out.structured
    );
    let out = w
        .call(GlobTool::new(w.state.clone()), json!({"pattern": "**/*"}))
        .await
        .unwrap();
    let mut files = listed(&out);
    files.sort();
    assert_eq!(
        files,
        vec![".env.example", "src/a.rs"],
        "{}",
        out.structured
    );
}

#[tokio::test]
async fn grep_never_returns_a_hard_linked_key() {
    let w = ws();
    w.put("src/a.rs", "fn main() {}\n");
    // `ln ~/.ssh/id_rsa ws/notes.txt`
    std::fs::hard_link(home().join(".ssh/id_rsa"), w.path("notes.txt")).unwrap();
    let out = w
        .call(
            GrepTool::new(w.state.clone()),
            json!({"pattern": "SECRETKEY"}),
        )
        .await
        .unwrap();
    assert!(grep_files(&out).is_empty(), "{}", out.structured);
    // A direct read is judged as what it is: a credential.
    let requests = w
        .intent(ReadTool::new(w.state.clone()), json!({"path": "notes.txt"}))
        .unwrap();
    assert_eq!(requests[0].risk, Risk::Credential);
}

#[tokio::test]
async fn grep_never_returns_a_hard_link_to_a_credential_of_the_location() {
    let w = ws();
    w.put("config/.env", "API=SECRETVALUE\n");
    std::fs::hard_link(w.path("config/.env"), w.path("notes.txt")).unwrap();
    let out = w
        .call(
            GrepTool::new(w.state.clone()),
            json!({"pattern": "SECRETVALUE"}),
        )
        .await
        .unwrap();
    assert!(grep_files(&out).is_empty(), "{}", out.structured);
}

#[tokio::test]
async fn a_hard_linked_ordinary_file_stays_readable_and_searchable() {
    let w = ws();
    w.put("a.txt", "plain words\n");
    std::fs::hard_link(w.path("a.txt"), w.path("b.txt")).unwrap();
    let requests = w
        .intent(ReadTool::new(w.state.clone()), json!({"path": "b.txt"}))
        .unwrap();
    assert_eq!(requests[0].risk, Risk::Read);
    let out = w
        .call(ReadTool::new(w.state.clone()), json!({"path": "b.txt"}))
        .await
        .unwrap();
    assert!(
        out.structured["text"]["content"]
            .as_str()
            .unwrap()
            .contains("plain words")
    );
    let out = w
        .call(GrepTool::new(w.state.clone()), json!({"pattern": "plain"}))
        .await
        .unwrap();
    let mut files = grep_files(&out);
    files.sort();
    assert_eq!(files, vec!["a.txt", "b.txt"]);
}

#[tokio::test]
async fn an_env_name_in_upper_case_is_a_credential() {
    let w = ws();
    w.put(".ENV", "API=x\n");
    for (path, risk) in [
        (".ENV", Risk::Credential),
        (".Env.Production", Risk::Credential),
        (".NPMRC", Risk::Credential),
        (".ENV.EXAMPLE", Risk::Read),
    ] {
        let requests = w
            .intent(ReadTool::new(w.state.clone()), json!({ "path": path }))
            .unwrap();
        assert_eq!(requests[0].risk, risk, "{path}");
    }
}

#[tokio::test]
async fn a_path_one_byte_over_path_max_is_a_clear_error() {
    let w = ws();
    let root_len = w.root().as_os_str().len() + 1;
    let mut rel = String::new();
    while root_len + rel.len() < toolgate_core::credential::PATH_MAX {
        rel.push_str("d/");
    }
    rel.truncate(toolgate_core::credential::PATH_MAX - root_len);
    let rel = format!("{}x", rel.trim_end_matches('/'));
    assert_eq!(root_len + rel.len(), toolgate_core::credential::PATH_MAX);
    let e = err(w
        .call(ReadTool::new(w.state.clone()), json!({ "path": rel }))
        .await);
    assert!(e.contains("PATH_MAX"), "{e}");
    // One byte shorter resolves (and is simply missing).
    let shorter = &rel[1..];
    let e = err(w
        .call(ReadTool::new(w.state.clone()), json!({ "path": shorter }))
        .await);
    assert!(!e.contains("PATH_MAX"), "{e}");
}

/// Points `link` at `target` atomically (a new link renamed over the old).
fn repoint(link: &Path, target: &Path, n: usize) {
    let temp = link.with_file_name(format!(".swap{n}"));
    let _ = std::fs::remove_file(&temp);
    std::os::unix::fs::symlink(target, &temp).unwrap();
    std::fs::rename(&temp, link).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_symlink_swapped_in_a_loop_never_lets_an_allowed_read_or_write_act_outside() {
    let w = ws();
    let outside = tempfile::tempdir().unwrap();
    let outside_file = std::fs::canonicalize(outside.path())
        .unwrap()
        .join("secret.txt");
    std::fs::write(&outside_file, "OUTSIDE CONTENT\n").unwrap();
    let inside_file = w.put("inside.txt", "inside content\n");
    let link = w.path("link");
    repoint(&link, &inside_file, 0);
    let stop = std::sync::Arc::new(AtomicBool::new(false));
    let swapper = {
        let (stop, link, inside_file, outside_file) = (
            stop.clone(),
            link.clone(),
            inside_file.clone(),
            outside_file.clone(),
        );
        std::thread::spawn(move || {
            let mut n = 0usize;
            while !stop.load(Ordering::Relaxed) {
                n += 1;
                let target = if n.is_multiple_of(2) {
                    &inside_file
                } else {
                    &outside_file
                };
                repoint(&link, target, n);
            }
            n
        })
    };
    let root = w.root().to_string_lossy().into_owned();
    let (mut reads, mut writes) = (0, 0);
    // At least 400 rounds, more on a loaded machine until both kinds of call
    // were judged allowed at least once (the swapper decides which).
    for i in 0..4000 {
        if i >= 400 && reads > 0 && writes > 0 {
            break;
        }
        // Judged: only a call whose every request lies inside is "allowed".
        let read = toolgate_core::handler(ReadTool::new(w.state.clone())).unwrap();
        if let Ok(prepared) = read.prepare(&json!({"path": "link"}), &w.location) {
            if prepared
                .requests
                .iter()
                .all(|r| r.resource.starts_with(&root))
            {
                reads += 1;
                if let Ok(out) = prepared.run(w.ctx("s1")).await {
                    let text = out.structured.to_string();
                    assert!(
                        !text.contains("OUTSIDE"),
                        "an allowed read read outside: {text}"
                    );
                }
            }
        }
        let write = toolgate_core::handler(WriteTool::new(w.state.clone())).unwrap();
        let input = json!({"path": "link", "content": format!("write {i}\n")});
        if let Ok(prepared) = write.prepare(&input, &w.location) {
            if prepared
                .requests
                .iter()
                .all(|r| r.resource.starts_with(&root))
            {
                writes += 1;
                let _ = prepared.run(w.ctx(&format!("w{i}"))).await;
            }
        }
        assert_eq!(
            std::fs::read_to_string(&outside_file).unwrap(),
            "OUTSIDE CONTENT\n",
            "an allowed write wrote outside"
        );
    }
    stop.store(true, Ordering::Relaxed);
    let swaps = swapper.join().unwrap();
    assert!(
        reads > 0 && writes > 0 && swaps > 0,
        "{reads} {writes} {swaps}"
    );
    // Nothing else appeared outside (no temporary file, no directory).
    let names: Vec<_> = std::fs::read_dir(outside.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("secret.txt")]);
}
