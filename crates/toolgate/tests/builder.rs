//! The library front door: what a `Builder` refuses and how, what a
//! `Toolgate` opens when, and that the `toolgate` commands are built by it
//! (they fail with the builder's own errors, at the same step).

// A failed setup step should stop a test loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::json;
use toolgate::{BuildError, Builder, CheckError, Content, SettleError};
use toolgate_core::Effect;

/// A workspace with one file and a data directory, both under a temp dir.
struct Dirs {
    _dir: tempfile::TempDir,
    ws: PathBuf,
    data: PathBuf,
    home: PathBuf,
}

fn dirs() -> Dirs {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let ws = base.join("ws");
    let home = base.join("home");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(ws.join("a.txt"), "hello\nworld\n").unwrap();
    Dirs {
        data: base.join("data"),
        _dir: dir,
        ws,
        home,
    }
}

/// A builder for `d` that reads no config of this machine.
fn builder(d: &Dirs) -> Builder {
    Builder::new()
        .location(&d.ws)
        .data_dir(&d.data)
        .user_config(None)
        .managed_config(None)
}

fn message(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        text.push_str(": ");
        text.push_str(&c.to_string());
        cause = c.source();
    }
    text
}

#[test]
fn a_builder_without_a_location_says_so() {
    let d = dirs();
    let e = Builder::new().data_dir(&d.data).build().unwrap_err();
    assert!(matches!(e, BuildError::NoLocation), "{e:?}");
    assert!(e.to_string().contains("Builder::location"), "{e}");
    assert!(
        !d.data.exists(),
        "nothing is created for a builder that fails"
    );
}

#[test]
fn a_location_that_does_not_exist_is_named() {
    let d = dirs();
    let missing = d.ws.join("no-such-dir");
    let e = builder(&d).location(&missing).build().unwrap_err();
    assert!(matches!(e, BuildError::Location { .. }), "{e:?}");
    assert!(e.to_string().contains(&*missing.to_string_lossy()), "{e}");
    assert!(std::error::Error::source(&e).is_some(), "the cause is kept");
    let file = d.ws.join("a.txt");
    let e = builder(&d).location(&file).build().unwrap_err();
    assert!(matches!(e, BuildError::Location { .. }), "{e:?}");
}

#[test]
fn a_broken_config_file_is_named_with_its_line() {
    let d = dirs();
    let bad = d.home.join("bad.toml");
    std::fs::write(&bad, "[permission.bash]\n\"ls *\" = \"perhaps\"\n").unwrap();
    let e = builder(&d).config_file(&bad).build().unwrap_err();
    let BuildError::Config(config) = &e else {
        panic!("not a config error: {e:?}");
    };
    assert_eq!(config.file, bad.display().to_string());
    assert_eq!(config.line, 2);
    assert!(
        e.to_string().starts_with(&format!("{}:2: ", bad.display())),
        "{e}"
    );
    assert!(e.to_string().contains("Fix:"), "{e}");

    let missing = d.home.join("missing.toml");
    let e = builder(&d).config_file(&missing).build().unwrap_err();
    assert!(e.to_string().contains(&*missing.to_string_lossy()), "{e}");
}

#[test]
fn a_data_directory_that_cannot_be_created_is_named() {
    let d = dirs();
    let file = d.home.join("a-file");
    std::fs::write(&file, "").unwrap();
    for dir in [file.clone(), file.join("below")] {
        let e = builder(&d).data_dir(&dir).build().unwrap_err();
        assert!(matches!(e, BuildError::CreateDataDir { .. }), "{e:?}");
        assert!(e.to_string().contains(&*dir.to_string_lossy()), "{e}");
        assert!(std::error::Error::source(&e).is_some());
    }
    let e = builder(&d).data_dir("").build().unwrap_err();
    assert!(matches!(e, BuildError::EmptyDataDir), "{e:?}");
}

#[test]
fn a_data_directory_where_the_audit_log_cannot_be_written_fails_at_the_first_call_not_at_a_check() {
    let d = dirs();
    // A directory where the audit log's file should be: no SQLite database
    // can be opened there, whoever runs the test (root ignores permissions).
    std::fs::create_dir_all(d.data.join("audit.db")).unwrap();
    let gate = builder(&d).build().unwrap();
    let answer = gate.check("read", &json!({"path": "a.txt"})).unwrap();
    assert_eq!(answer.decision, Effect::Allow);
    let e = gate.catalogue().unwrap_err();
    assert!(matches!(e, BuildError::AuditLog { .. }), "{e:?}");
    let audit = d.data.join("audit.db");
    assert!(message(&e).contains(&*audit.to_string_lossy()), "{e}");
}

#[test]
fn a_read_only_data_directory_fails_at_the_first_call_naming_the_audit_log() {
    use std::os::unix::fs::PermissionsExt;
    let d = dirs();
    std::fs::create_dir_all(&d.data).unwrap();
    std::fs::set_permissions(&d.data, std::fs::Permissions::from_mode(0o500)).unwrap();
    if std::fs::write(d.data.join("probe"), "").is_ok() {
        eprintln!("skipped: this user writes into a read-only directory (root)");
        return;
    }
    let gate = builder(&d).build().unwrap();
    let e = gate.catalogue().unwrap_err();
    assert!(
        message(&e).contains(&*d.data.join("audit.db").to_string_lossy()),
        "{e}"
    );
    std::fs::set_permissions(&d.data, std::fs::Permissions::from_mode(0o700)).unwrap();
}

#[test]
fn a_check_opens_no_store_and_a_call_opens_them() {
    let d = dirs();
    let gate = builder(&d).build().unwrap();
    let answer = gate
        .check("bash", &json!({"command": "rm -rf target"}))
        .unwrap();
    assert_eq!(answer.decision, Effect::Ask, "{answer:?}");
    let e = gate.check("nope", &json!({})).unwrap_err();
    assert!(matches!(e, CheckError::UnknownTool { .. }), "{e:?}");
    let e = gate.check("read", &json!({"path": 3})).unwrap_err();
    assert!(matches!(e, CheckError::Input(_)), "{e:?}");
    assert!(
        !d.data.join("audit.db").exists(),
        "a check opened the audit log"
    );
    assert!(
        !d.data.join("state.db").exists(),
        "a check opened the approvals"
    );

    let rt = tokio::runtime::Runtime::new().unwrap();
    let catalogue = gate.catalogue().unwrap();
    let read = rt
        .block_on(gate.settle(&catalogue, "read", json!({"path": "a.txt"})))
        .unwrap();
    let Some(Content::Text { text }) = read.content.first() else {
        panic!("{read:?}");
    };
    assert!(text.contains("hello"), "{text}");
    // No approval channel was given: an ask is denied.
    let e = rt
        .block_on(gate.settle(&catalogue, "bash", json!({"command": "rm -rf target"})))
        .unwrap_err();
    assert!(matches!(e, SettleError::Call(_)), "{e:?}");
    gate.start().unwrap().audit_log().flush().unwrap();
    assert!(d.data.join("audit.db").exists());
    assert!(d.data.join("state.db").exists());
    // Checks after the start judge with the engine's policy.
    let answer = gate.check("read", &json!({"path": "a.txt"})).unwrap();
    assert_eq!(answer.decision, Effect::Allow);
}

fn toolgate(d: &Dirs, data: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(args)
        .current_dir(&d.ws)
        .env("TOOLGATE_DATA_DIR", data)
        .env("HOME", &d.home)
        .env("TOOLGATE_MANAGED_CONFIG", d.home.join("no-managed.toml"))
        .env_remove("XDG_DATA_HOME")
        .env_remove("XDG_CONFIG_HOME")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The four commands that settle or check calls, each with a `--config`.
fn commands(config: &str) -> Vec<Vec<String>> {
    let read = r#"{"path":"a.txt"}"#;
    [
        vec!["call", "read", read],
        vec!["check", "read", read],
        vec!["mcp", "--no-web"],
        vec!["serve", "--no-web", "--no-auth", "--listen", "127.0.0.1:0"],
    ]
    .into_iter()
    .map(|args| {
        let mut args: Vec<String> = args.into_iter().map(String::from).collect();
        args.extend(["--config".to_string(), config.to_string()]);
        args
    })
    .collect()
}

#[test]
fn call_check_mcp_and_serve_refuse_a_broken_config_with_the_builders_error() {
    let d = dirs();
    let bad = d.home.join("bad.toml");
    std::fs::write(&bad, "mode = \"sometimes\"\n").unwrap();
    let expected = builder(&d)
        .config_file(&bad)
        .build()
        .unwrap_err()
        .to_string();
    for args in commands(&bad.to_string_lossy()) {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = toolgate(&d, &d.data, &args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert_eq!(
            stderr(&o).trim_end(),
            format!("toolgate: error: {expected}"),
            "{args:?}"
        );
    }
}

#[test]
fn call_mcp_and_serve_start_the_engine_and_check_does_not() {
    let d = dirs();
    let data = d.home.join("data");
    std::fs::create_dir_all(data.join("audit.db")).unwrap();
    let empty = d.home.join("empty.toml");
    std::fs::write(&empty, "").unwrap();
    let gate = builder(&d).data_dir(&data).build().unwrap();
    let expected = message(&gate.catalogue().unwrap_err());
    for args in commands(&empty.to_string_lossy()) {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = toolgate(&d, &data, &args);
        if args[0] == "check" {
            assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
            continue;
        }
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        let line = stderr(&o);
        let line = line.lines().last().unwrap_or_default();
        assert!(
            line.starts_with(&format!(
                "toolgate: error: cannot open the audit log {}",
                data.join("audit.db").display()
            )),
            "{args:?}: {line}"
        );
        assert!(
            expected.starts_with("cannot open the audit log"),
            "{expected}"
        );
    }
}

/// Answers every ask with "once", and counts them.
#[derive(Default)]
struct AllowOnce(std::sync::atomic::AtomicUsize);

#[async_trait::async_trait]
impl toolgate_policy::approvals::ApprovalChannel for AllowOnce {
    async fn ask(
        &self,
        _prompt: &toolgate_policy::approvals::AskPrompt,
    ) -> Result<toolgate_policy::approvals::Answer, toolgate_policy::approvals::ChannelError> {
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Ok(toolgate_policy::approvals::Answer::Once)
    }
}

/// Runs nothing confined, and remembers each program it was asked about.
#[derive(Debug, Default)]
struct Recording(std::sync::Mutex<Vec<String>>);

impl toolgate_tools::process_tools::CommandSandbox for Recording {
    fn confine(
        &self,
        request: &toolgate_tools::process_tools::ConfineRequest<'_>,
    ) -> Result<Option<toolgate_tools::process_tools::ConfinedCommand>, toolgate_core::Failure>
    {
        self.0.lock().unwrap().push(request.program.to_string());
        Ok(None)
    }
}

#[test]
fn the_builders_channel_answers_asks_and_its_sandbox_confines_bash() {
    let d = dirs();
    let channel = std::sync::Arc::new(AllowOnce::default());
    let sandbox = std::sync::Arc::new(Recording::default());
    let gate = builder(&d)
        .approvals(channel.clone())
        .sandbox(toolgate::SandboxChoice::Custom {
            sandbox: sandbox.clone(),
            confines: false,
        })
        .session_id("embedded")
        .build()
        .unwrap();
    assert_eq!(gate.session_id(), "embedded");
    let catalogue = gate.catalogue().unwrap();
    assert!(gate.start().unwrap().sandbox_notice().is_none());
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(gate.settle(&catalogue, "bash", json!({"command": "rm -rf build"})))
        .unwrap();
    assert_eq!(channel.0.load(std::sync::atomic::Ordering::SeqCst), 1);
    assert!(
        !sandbox.0.lock().unwrap().is_empty(),
        "bash asked the sandbox"
    );
}

#[test]
fn a_toolgate_can_be_shared_between_tasks() {
    fn shareable<T: Send + Sync>() {}
    fn sendable<T: Send>(_: &T) {}
    shareable::<toolgate::Toolgate>();
    shareable::<Builder>();
    let d = dirs();
    let toolgate = builder(&d).build().unwrap();
    let catalogue = toolgate.catalogue().unwrap();
    // The future of a call can be spawned on a multi-threaded runtime.
    let call = toolgate.settle(&catalogue, "read", json!({"path": "a.txt"}));
    sendable(&call);
}
