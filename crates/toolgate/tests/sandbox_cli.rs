//! `toolgate sandbox exec` and the bash tool as a user runs them: the real
//! binary, a real workspace, the machine's sandbox, and the proxy of
//! `[sandbox] allow_domains` with a local HTTP server on 127.0.0.1 standing
//! in for a registry (`localhost` is the listed name: the system resolver
//! maps it to the stand-in, so no test hook is needed).

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::Output;

use serde_json::Value;
use support::cli_env::CliEnv as Env;
use toolgate_sandbox::test_util::scratch_parent;

fn env(config: &str) -> Env {
    // Outside /tmp and /var/tmp, which the sandbox replaces with private ones,
    // so that a write "outside the location" meets the host's read-only
    // filesystem and the fake home's key is there to mask.
    let e = Env::in_dir(&scratch_parent(Path::new(env!("CARGO_TARGET_TMPDIR"))).unwrap());
    std::fs::create_dir_all(e.base.join("outside")).unwrap();
    e.write(e.home.join(".ssh/id_rsa"), "PRIVATE KEY\n");
    e.write(e.home.join(".config/toolgate/config.toml"), config);
    e
}

fn toolgate(e: &Env, args: &[&str]) -> Output {
    let out = e
        .command(args)
        .env_remove("XDG_RUNTIME_DIR")
        .output()
        .unwrap();
    eprintln!(
        "--- toolgate {args:?}\nstatus {}\nstdout: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The sandbox tests need the sandbox (scripts/setup-sandbox.sh installs
/// bubblewrap): its absence fails them, naming why.
fn require_sandbox(e: &Env) {
    let out = toolgate(e, &["sandbox", "status", "--json"]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        v["available"].as_bool().unwrap(),
        "the sandbox is not available here (run scripts/setup-sandbox.sh): {v}"
    );
}

/// A registry stand-in on 127.0.0.1: answers each request with `200` and
/// the request line, for `n` connections.
fn registry(n: usize) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for s in listener.incoming().take(n) {
            let Ok(mut s) = s else { continue };
            let mut got = Vec::new();
            let mut buf = [0u8; 2048];
            while !got.windows(4).any(|w| w == b"\r\n\r\n") {
                match s.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(k) => got.extend_from_slice(&buf[..k]),
                }
            }
            let line = String::from_utf8_lossy(&got)
                .lines()
                .next()
                .unwrap_or("")
                .to_string();
            let body = format!("registry saw {line}");
            let _ = write!(
                s,
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    port
}

const PROXIED: &str = "[sandbox]\nallow_domains = [\"localhost\"]\n";

/// `(call_id, action, resource, decision)` of every `network.connection`
/// event, from `toolgate log --json`.
fn connections(e: &Env) -> Vec<(String, String, String, String)> {
    let out = toolgate(e, &["log", "--json"]);
    assert!(out.status.success());
    stdout(&out)
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["kind"] == "network.connection")
        .map(|v| {
            let p = &v["payload"];
            (
                v["call_id"].as_str().unwrap_or_default().to_string(),
                p["action"].as_str().unwrap_or_default().to_string(),
                p["resource"].as_str().unwrap_or_default().to_string(),
                p["decision"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

fn verify(e: &Env) {
    let out = toolgate(e, &["log", "verify"]);
    assert!(out.status.success(), "the hash chain holds");
    assert!(stdout(&out).starts_with("ok"), "{}", stdout(&out));
}

#[test]
fn bash_in_mode_auto_reaches_a_listed_registry_through_the_proxy_and_every_connection_is_logged() {
    let e = env(PROXIED);
    require_sandbox(&e);
    let port = registry(2);
    // A script the gate allows in mode auto (execute, confined): it fetches
    // from the listed name, over plain HTTP and over a CONNECT tunnel, and
    // from one that is not listed.
    std::fs::write(
        e.ws.join("fetch.sh"),
        format!(
            "curl -sS --max-time 20 http://localhost:{port}/pkg.tgz; echo\n\
             python3 -c 'import urllib.request as u; print(u.urlopen(\"http://localhost:{port}/simple/\", timeout=20).read().decode())'\n\
             curl -sS --max-time 20 -o /dev/null -w 'unlisted=%{{http_code}}\\n' http://registry.example/x\n\
             curl -sS --max-time 20 https://registry.example/x || echo tunnel-refused\n"
        ),
    )
    .unwrap();
    let out = toolgate(
        &e,
        &[
            "call",
            "bash",
            r#"{"command":"bash fetch.sh"}"#,
            "--mode",
            "auto",
        ],
    );
    let text = stdout(&out);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("registry saw GET /pkg.tgz HTTP/1.1"),
        "{text}"
    );
    assert!(
        text.contains("registry saw GET /simple/ HTTP/1.1"),
        "{text}"
    );
    assert!(text.contains("unlisted=403"), "{text}");
    assert!(text.contains("tunnel-refused"), "{text}");
    let seen = connections(&e);
    let summary: Vec<(&str, &str, &str)> = seen
        .iter()
        .map(|(_, a, r, d)| (a.as_str(), r.as_str(), d.as_str()))
        .collect();
    let local = format!("localhost:{port}");
    assert_eq!(
        summary,
        [
            ("network GET", local.as_str(), "allow"),
            ("network GET", local.as_str(), "allow"),
            ("network GET", "registry.example:80", "deny"),
            ("network CONNECT", "registry.example:443", "deny"),
        ]
    );
    // Attributed to the call that made them.
    let log = stdout(&toolgate(&e, &["log", "--json"]));
    let started: Value = log
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|v| v["kind"] == "tool.started")
        .unwrap();
    assert!(
        seen.iter()
            .all(|(call, ..)| call == started["call_id"].as_str().unwrap())
    );
    verify(&e);
}

#[test]
fn without_allow_domains_a_confined_command_has_no_network_and_nothing_is_logged() {
    let e = env("");
    require_sandbox(&e);
    let port = registry(1);
    let out = toolgate(
        &e,
        &[
            "sandbox",
            "exec",
            "--",
            "bash",
            "-c",
            &format!(
                "echo proxy=[${{HTTPS_PROXY:-}}]; curl -sS --max-time 5 http://localhost:{port}/ && echo REACHED; true"
            ),
        ],
    );
    let text = stdout(&out);
    assert!(text.contains("proxy=[]"), "{text}");
    assert!(!text.contains("REACHED"), "{text}");
    assert!(connections(&e).is_empty());
}

#[test]
fn sandbox_exec_goes_through_the_proxy_and_logs_like_the_bash_tool() {
    let e = env(PROXIED);
    require_sandbox(&e);
    let port = registry(1);
    let out = toolgate(
        &e,
        &[
            "sandbox",
            "exec",
            "--",
            "bash",
            "-c",
            &format!(
                "curl -sS --max-time 20 http://localhost:{port}/a; echo; curl -sS --max-time 20 -o /dev/null -w 'other=%{{http_code}}' http://example.org/"
            ),
        ],
    );
    let text = stdout(&out);
    assert!(out.status.success());
    assert!(text.contains("registry saw GET /a HTTP/1.1"), "{text}");
    assert!(text.contains("other=403"), "{text}");
    let seen = connections(&e);
    let decisions: Vec<(&str, &str)> = seen
        .iter()
        .map(|(_, _, r, d)| (r.as_str(), d.as_str()))
        .collect();
    let local = format!("localhost:{port}");
    assert_eq!(
        decisions,
        [(local.as_str(), "allow"), ("example.org:80", "deny")]
    );
    verify(&e);
}

#[test]
fn sandbox_status_says_how_the_system_directories_are_kept_to_what_others_may_read() {
    let e = env("");
    require_sandbox(&e);
    let out = toolgate(&e, &["sandbox", "status"]);
    let text = stdout(&out);
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix("system:"))
        .unwrap_or_else(|| panic!("no system line: {text}"));
    // SAFETY of the test itself: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        // Either every system directory is mapped, or the line names what
        // the kernel refused and what is walked instead.
        assert!(
            line.contains("idmapped (/usr") || line.contains("refuses to map"),
            "{line}"
        );
    } else {
        assert!(line.contains("walked for"), "{line}");
    }
}

#[test]
fn sandbox_exec_runs_confined_refuses_writes_outside_and_passes_exit_codes_on() {
    let e = env("");
    require_sandbox(&e);
    let outside = e.base.join("outside/escaped");
    let inside = e.ws.join("made-inside");
    let script = format!(
        "touch {inside}; touch {outside} 2>/dev/null && echo WROTE-OUTSIDE; \
         cat ~/.ssh/id_rsa 2>/dev/null | grep -q PRIVATE && echo READ-KEY; \
         echo pid=$$; exit 7",
        inside = inside.display(),
        outside = outside.display()
    );
    let out = toolgate(&e, &["sandbox", "exec", "--", "bash", "-c", &script]);
    let text = stdout(&out);
    assert_eq!(
        out.status.code(),
        Some(7),
        "the command's exit code is toolgate's"
    );
    assert!(inside.exists(), "a write inside the location works");
    assert!(
        !outside.exists() && !text.contains("WROTE-OUTSIDE"),
        "{text}"
    );
    assert!(!text.contains("READ-KEY"), "credentials are masked: {text}");
    // Its own PID namespace: the shell is a low PID, not the host's.
    let pid: u32 = text
        .lines()
        .find_map(|l| l.strip_prefix("pid="))
        .and_then(|p| p.trim().parse().ok())
        .unwrap();
    assert!(pid < 10, "pid {pid}");

    // A signal death is 128 + the signal, as a shell reports it.
    let out = toolgate(
        &e,
        &["sandbox", "exec", "--", "bash", "-c", "kill -TERM $$"],
    );
    assert_eq!(out.status.code(), Some(128 + 15));
    // A program that does not exist: the helper's 127.
    let out = toolgate(&e, &["sandbox", "exec", "--", "no-such-program-xyz"]);
    assert_eq!(out.status.code(), Some(127));
    // No command: a usage error (2).
    let out = toolgate(&e, &["sandbox", "exec"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn the_sandbox_helper_confines_itself_before_it_runs_the_command() {
    // The small helper installed beside `toolgate`, run as bubblewrap runs
    // it (here without bubblewrap): Landlock admits writes beneath the
    // writable roots only, and the command's exit code is the helper's.
    let e = env("");
    let helper = env!("CARGO_BIN_EXE_toolgate-sandbox-helper");
    let inside = e.ws.join("inside");
    let outside = e.base.join("outside/escaped");
    let script = format!(
        "touch {inside} && touch {outside} 2>/dev/null; exit 5",
        inside = inside.display(),
        outside = outside.display()
    );
    let out = std::process::Command::new(helper)
        .args(["__toolgate-sandbox-child", "--no-net", "--write"])
        .arg(&e.ws)
        .args(["--", "sh", "-c", &script])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(5), "{out:?}");
    assert!(inside.exists(), "a write beneath a writable root works");
    assert!(!outside.exists(), "a write outside is refused by Landlock");

    // Not started as the helper: a usage error naming what it is for.
    let out = std::process::Command::new(helper).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("inside bubblewrap"),
        "{out:?}"
    );
}

#[test]
fn sandbox_exec_without_the_helper_beside_it_is_its_own_helper() {
    // `toolgate` alone in a directory (a hard link: the same program,
    // without `toolgate-sandbox-helper` beside it) still confines.
    let e = env("");
    require_sandbox(&e);
    let alone = e.base.join("bin-alone");
    std::fs::create_dir_all(&alone).unwrap();
    let toolgate = alone.join("toolgate");
    if std::fs::hard_link(env!("CARGO_BIN_EXE_toolgate"), &toolgate).is_err() {
        std::fs::copy(env!("CARGO_BIN_EXE_toolgate"), &toolgate).unwrap();
    }
    let outside = e.base.join("outside/escaped");
    let script = format!(
        "touch made-inside; touch {} 2>/dev/null; exit 3",
        outside.display()
    );
    let mut cmd = std::process::Command::new(&toolgate);
    cmd.args(["sandbox", "exec", "--", "sh", "-c", &script])
        .current_dir(&e.ws)
        .stdin(std::process::Stdio::null())
        .env_remove("XDG_RUNTIME_DIR");
    support::cli_env::isolate(&mut cmd, &e.data, &e.home);
    let out = cmd.output().unwrap();
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    assert!(e.ws.join("made-inside").exists(), "{out:?}");
    assert!(!outside.exists(), "a write outside the location is refused");
}

/// The staging run directories under the data directory.
fn staging_runs(e: &Env) -> Vec<std::path::PathBuf> {
    let mut runs: Vec<_> = std::fs::read_dir(e.data.join("stage"))
        .map(|rd| {
            rd.flatten()
                .filter(|d| d.file_name().to_string_lossy().starts_with("run-"))
                .map(|d| d.path())
                .collect()
        })
        .unwrap_or_default();
    runs.sort();
    runs
}

/// Waits (at most a minute) until `done` holds.
fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let start = std::time::Instant::now();
    while !done() {
        assert!(start.elapsed().as_secs() < 60, "waited a minute for {what}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// Starts `sandbox exec -- sh -c SCRIPT` and waits until its write of `file`
/// is staged (in a run directory's upper layer, not yet landed).
fn spawn_staging(e: &Env, script: &str, file: &str) -> std::process::Child {
    let child = e
        .command(&["sandbox", "exec", "--", "sh", "-c", script])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    wait_until(&format!("the staged write of {file}"), || {
        staging_runs(e)
            .iter()
            .any(|r| r.join("r0/upper").join(file).exists())
    });
    child
}

#[test]
fn a_staging_directory_left_by_a_killed_toolgate_is_swept_and_a_live_one_is_not() {
    let e = env("");
    require_sandbox(&e);
    // A toolgate killed (SIGKILL) while its command runs: what the command
    // staged never lands, and its run directory stays behind.
    let mut killed = spawn_staging(&e, "echo staged > killed.txt; sleep 120", "killed.txt");
    killed.kill().unwrap();
    killed.wait().unwrap();
    let stale = staging_runs(&e);
    assert_eq!(stale.len(), 1, "{stale:?}");
    assert!(!e.ws.join("killed.txt").exists());
    // A live run, started after the kill: its directory is held.
    let mut live = spawn_staging(&e, "echo live > live.txt; sleep 10", "live.txt");
    let live_dir = staging_runs(&e)
        .into_iter()
        .find(|r| !stale.contains(r))
        .unwrap();
    // The next start sweeps what the killed one left, and only that.
    let out = toolgate(&e, &["sandbox", "exec", "--", "true"]);
    assert!(out.status.success());
    assert!(!stale[0].exists(), "the killed run's directory is swept");
    assert!(
        live_dir.join("r0/upper/live.txt").exists(),
        "a live run's directory is never swept"
    );
    assert!(live.wait().unwrap().success());
    assert_eq!(
        std::fs::read_to_string(e.ws.join("live.txt")).unwrap(),
        "live\n",
        "the live run's write lands"
    );
    assert!(!e.ws.join("killed.txt").exists());
    // Each run's own directory is removed by a later run: one more leaves
    // only its own.
    let out = toolgate(&e, &["sandbox", "exec", "--", "true"]);
    assert!(out.status.success());
    assert_eq!(staging_runs(&e).len(), 1, "{:?}", staging_runs(&e));
}
