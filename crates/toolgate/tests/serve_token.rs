//! `toolgate serve` with its bearer token from config: `[serve] token_file` or
//! `token_env` in the user layer, never the project's; checked before use, never
//! printed; `--token` still beats it. Real process, real HTTP on 127.0.0.1.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

const TOKEN: &str = "s3cret-token-from-a-file-0123456789";

struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    fn new() -> Env {
        let dir = tempfile::tempdir().unwrap();
        for d in ["ws/.toolgate", "data", "home/.config/toolgate"] {
            std::fs::create_dir_all(dir.path().join(d)).unwrap();
        }
        Env { dir }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    fn user_config(&self, text: &str) {
        std::fs::write(self.path("home/.config/toolgate/config.toml"), text).unwrap();
    }

    fn private_file(&self, rel: &str, text: &str, mode: u32) -> PathBuf {
        let p = self.path(rel);
        std::fs::write(&p, text).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
        p
    }

    fn serve(&self, extra: &[&str], envs: &[(&str, &str)]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolgate"));
        cmd.args(["serve", "--listen", "127.0.0.1:0", "--no-web", "--root"])
            .arg(self.path("ws"))
            .args(extra)
            .env_remove("TOOLGATE_SERVE_TOKEN")
            .env("HOME", self.path("home"))
            .env("TOOLGATE_DATA_DIR", self.path("data"))
            .env("TOOLGATE_MANAGED_CONFIG", self.path("no-managed.toml"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        for (k, v) in envs {
            cmd.env(k, v);
        }
        cmd
    }

    /// Starts serve and waits for its endpoint; returns the process, the
    /// address and what it printed until then.
    fn start(&self, extra: &[&str], envs: &[(&str, &str)]) -> (Running, String, String) {
        let mut running = Running(self.serve(extra, envs).spawn().unwrap());
        let stderr = running.0.stderr.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut printed = String::new();
        loop {
            let line = rx
                .recv_timeout(Duration::from_secs(30))
                .unwrap_or_else(|_| panic!("serve did not start; printed:\n{printed}"));
            printed.push_str(&line);
            printed.push('\n');
            if let Some(url) = line.split("MCP endpoint http://").nth(1) {
                let addr = url.trim_end_matches("/mcp").to_string();
                return (running, addr, printed);
            }
        }
    }

    /// Runs serve expecting it to refuse to start; returns its stderr.
    fn refused(&self, extra: &[&str], envs: &[(&str, &str)]) -> String {
        let out = self.serve(extra, envs).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(!out.status.success(), "serve started:\n{stderr}");
        stderr
    }
}

struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// POSTs an `initialize` to /mcp with `token`; returns the HTTP status.
fn initialize_status(addr: &str, token: &str) -> u16 {
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        s,
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut head = [0u8; 12];
    s.read_exact(&mut head).unwrap();
    let line = String::from_utf8_lossy(&head).to_string();
    line[9..12].parse().unwrap()
}

#[test]
fn a_token_file_in_the_user_config_is_used_and_never_printed_or_copied() {
    let e = Env::new();
    e.private_file(
        "home/.config/toolgate/serve-token",
        &format!("{TOKEN}\n"),
        0o600,
    );
    e.user_config("[serve]\ntoken_file = \"serve-token\"\n");
    let (_serve, addr, printed) = e.start(&[], &[]);
    assert!(
        printed.contains("bearer token from token_file"),
        "{printed}"
    );
    assert!(printed.contains("config.toml:2"), "{printed}");
    assert!(
        !printed.contains(TOKEN),
        "the token was printed:\n{printed}"
    );
    assert!(
        !e.path("data/serve-token").exists(),
        "the configured token was copied"
    );
    assert_eq!(initialize_status(&addr, TOKEN), 200);
    assert_eq!(initialize_status(&addr, "another-token-0123456789"), 401);
}

#[test]
fn a_token_env_in_the_user_config_reads_that_variable() {
    let e = Env::new();
    e.user_config("[serve]\ntoken_env = \"MY_TOOLGATE_TOKEN\"\n");
    let (_serve, addr, printed) = e.start(&[], &[("MY_TOOLGATE_TOKEN", TOKEN)]);
    assert!(printed.contains("token_env MY_TOOLGATE_TOKEN"), "{printed}");
    assert!(!printed.contains(TOKEN), "{printed}");
    assert_eq!(initialize_status(&addr, TOKEN), 200);
    let stderr = e.refused(&[], &[]);
    assert!(
        stderr.contains("MY_TOOLGATE_TOKEN") && stderr.contains("is not set"),
        "{stderr}"
    );
}

#[test]
fn the_token_flag_beats_the_config() {
    let e = Env::new();
    e.user_config("[serve]\ntoken_env = \"MY_TOOLGATE_TOKEN\"\n");
    let flag = "flag-token-abcdefghijklmnop";
    let (_serve, addr, _) = e.start(&["--token", flag], &[("MY_TOOLGATE_TOKEN", TOKEN)]);
    assert_eq!(initialize_status(&addr, flag), 200);
    assert_eq!(initialize_status(&addr, TOKEN), 401);
}

#[test]
fn a_project_config_cannot_choose_the_token() {
    let e = Env::new();
    // A cloned repository names a file it ships, whose content it knows.
    e.private_file("ws/known.txt", &format!("{TOKEN}\n"), 0o600);
    std::fs::write(
        e.path("ws/.toolgate/config.toml"),
        "# hostile\n[serve]\ntoken_file = \"../known.txt\"\n",
    )
    .unwrap();
    // The project config is reported and ignored as a whole: serve starts,
    // and the token the repository knows opens nothing.
    let (_serve, addr, printed) = e.start(&[], &[]);
    assert!(printed.contains(".toolgate/config.toml:2"), "{printed}");
    assert!(
        printed.contains("not read from a project's config"),
        "{printed}"
    );
    assert_eq!(initialize_status(&addr, TOKEN), 401);
}

#[test]
fn bad_token_config_stops_serve_with_the_reason() {
    let e = Env::new();
    let shared = e.private_file("home/shared-token", &format!("{TOKEN}\n"), 0o644);
    e.user_config(&format!("[serve]\ntoken_file = \"{}\"\n", shared.display()));
    let stderr = e.refused(&[], &[]);
    assert!(
        stderr.contains("open to other users") && stderr.contains("chmod 600"),
        "{stderr}"
    );

    e.private_file("home/short", "abc\n", 0o600);
    e.user_config("[serve]\ntoken_file = \"~/short\"\n");
    let stderr = e.refused(&[], &[]);
    assert!(stderr.contains("at least 16 characters"), "{stderr}");

    e.user_config("[serve]\ntoken_file = \"~/missing\"\n");
    let stderr = e.refused(&[], &[]);
    assert!(
        stderr.contains("cannot read the serve token file"),
        "{stderr}"
    );

    e.user_config("[serve]\ntoken = \"abcdefghijklmnopqrstuvwxyz\"\n");
    let stderr = e.refused(&[], &[]);
    assert!(
        stderr.contains("config.toml:2") && stderr.contains("token_file"),
        "{stderr}"
    );
    assert!(!Path::new(&e.path("data/serve-token")).exists());
}

#[test]
fn a_refused_token_config_hands_out_no_approval_page_url() {
    let e = Env::new();
    let shared = e.private_file("home/shared-token", &format!("{TOKEN}\n"), 0o644);
    e.user_config(&format!("[serve]\ntoken_file = \"{}\"\n", shared.display()));
    let out = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--web-listen",
            "127.0.0.1:0",
            "--root",
        ])
        .arg(e.path("ws"))
        .env_remove("TOOLGATE_SERVE_TOKEN")
        .env("HOME", e.path("home"))
        .env("TOOLGATE_DATA_DIR", e.path("data"))
        .env("TOOLGATE_MANAGED_CONFIG", e.path("no-managed.toml"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "serve started:\n{stderr}");
    assert!(stderr.contains("chmod 600"), "{stderr}");
    // Refused before anything is served: no page URL (with its token) was printed.
    assert!(!stderr.contains("approval page at"), "{stderr}");
}
