//! Asks of agents that cannot ask a person (Codex, Gemini CLI), put to
//! toolgate's own channel instead: `toolgate approvals watch` on a real
//! terminal (a pseudo-terminal made by `script`), answered by typing there.
//! Real processes throughout: the hook, the watcher, the terminal.

// A failed setup step should stop a test loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::io::{BufReader, Read, Write};
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdin, Output, Stdio};
use std::sync::mpsc;

use serde_json::{Value, json};
use support::cli_env::CliEnv as Env;

use super::hook::env;

/// A call the agent's hook answers with an ask: Gemini cannot run the
/// sandbox's rewrite of `cargo test` (mode auto), nor ask; Codex in mode
/// default asks before a program runs.
fn asking_call(e: &Env, agent: &str) -> (String, &'static str) {
    let cwd = e.ws.display().to_string();
    match agent {
        "gemini" => (
            json!({"session_id": "s1", "cwd": cwd, "hook_event_name": "BeforeTool",
                "timestamp": "2026-12-05T00:00:00Z", "tool_name": "run_shell_command",
                "tool_input": {"command": "cargo test"}})
            .to_string(),
            "auto",
        ),
        "codex" => (
            json!({"session_id": "s1", "cwd": cwd, "hook_event_name": "PreToolUse",
                "tool_name": "Bash", "tool_input": {"command": "cargo test"},
                "tool_use_id": "call-1"})
            .to_string(),
            "default",
        ),
        _ => unreachable!(),
    }
}

/// Runs the hook-only program for `agent` with `payload`, in a thread;
/// its output arrives on the receiver.
fn spawn_hook(
    e: &Env,
    agent: &str,
    payload: String,
    mode: &str,
    wait_ms: &str,
) -> mpsc::Receiver<Output> {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_toolgate-hook"));
    c.args([agent, "--mode", mode]).current_dir(&e.ws);
    support::cli_env::isolate(&mut c, &e.data, &e.home);
    c.env("TOOLGATE_HOOK_ASK_WAIT_MS", wait_ms)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let (tx, rx) = mpsc::channel();
    let mut child = c.spawn().unwrap();
    std::thread::spawn(move || {
        let _ = child.stdin.take().unwrap().write_all(payload.as_bytes());
        let _ = tx.send(child.wait_with_output().unwrap());
    });
    rx
}

/// `toolgate approvals watch` on a pseudo-terminal: what it prints arrives
/// line by line on the receiver; what is written to the input is typed.
struct Watcher {
    child: Child,
    typed: ChildStdin,
    lines: mpsc::Receiver<String>,
}

impl Watcher {
    fn start(e: &Env, args: &str) -> Watcher {
        let toolgate = env!("CARGO_BIN_EXE_toolgate");
        let mut c = std::process::Command::new("script");
        c.args([
            "-qfec",
            &format!("{toolgate} approvals watch {args}"),
            "/dev/null",
        ])
        .current_dir(&e.ws);
        support::cli_env::isolate(&mut c, &e.data, &e.home);
        c.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        // Its own session, so that the terminal it reads is the one
        // `script` makes, never the one running the tests.
        // SAFETY: setsid is async-signal-safe.
        unsafe {
            c.pre_exec(|| {
                libc::setsid();
                Ok(())
            });
        }
        let mut child = c.spawn().unwrap();
        let typed = child.stdin.take().unwrap();
        let out = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            // The prompt ends without a newline: split on the colon too.
            let mut reader = BufReader::new(out);
            let mut buf = Vec::new();
            let mut byte = [0u8; 1];
            while reader.read(&mut byte).is_ok_and(|n| n == 1) {
                buf.push(byte[0]);
                if byte[0] == b'\n' || buf.ends_with(b": ") {
                    let _ = tx.send(String::from_utf8_lossy(&buf).into_owned());
                    buf.clear();
                }
            }
        });
        let w = Watcher {
            child,
            typed,
            lines,
        };
        w.until("answering the asks");
        w
    }

    /// Everything printed up to the line containing `text`.
    fn until(&self, text: &str) -> String {
        let mut seen = String::new();
        loop {
            let line = self
                .lines
                .recv()
                .unwrap_or_else(|_| panic!("the watcher ended before {text:?}: {seen}"));
            seen.push_str(&line);
            if line.contains(text) {
                return seen;
            }
        }
    }

    fn type_line(&mut self, line: &str) {
        self.typed.write_all(line.as_bytes()).unwrap();
        self.typed.write_all(b"\n").unwrap();
        self.typed.flush().unwrap();
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn blocked(o: &Output) -> bool {
    o.status.code() == Some(2)
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn an_ask_answered_once_on_the_terminal_is_allowed() {
    for agent in ["gemini", "codex"] {
        let e = env();
        let mut w = Watcher::start(&e, "");
        let (payload, mode) = asking_call(&e, agent);
        let answer = spawn_hook(&e, agent, payload, mode, "60000");
        let shown = w.until("Allow?");
        assert!(shown.contains(&format!("[{agent}]")), "{shown}");
        assert!(shown.contains("cargo test"), "{shown}");
        // Nothing longer than once is offered for a hook's ask.
        assert!(!shown.contains("[a]lways"), "{shown}");
        w.type_line("once");
        let o = answer.recv().unwrap();
        assert_eq!(o.status.code(), Some(0), "{agent}: {o:?}");
        let out = String::from_utf8_lossy(&o.stdout);
        match agent {
            "gemini" => {
                let v: Value = serde_json::from_str(out.trim()).unwrap();
                assert_eq!(v["decision"], "allow", "{out}");
                assert!(
                    v["reason"]
                        .as_str()
                        .unwrap()
                        .contains("allowed once by the person (terminal)"),
                    "{out}"
                );
            }
            // Codex: a plain allow says nothing and leaves it to Codex.
            _ => assert_eq!(out.trim(), "", "{o:?}"),
        }
        w.until("answered");
    }
}

#[test]
fn an_ask_rejected_on_the_terminal_is_denied() {
    for agent in ["gemini", "codex"] {
        let e = env();
        let mut w = Watcher::start(&e, "");
        let (payload, mode) = asking_call(&e, agent);
        let answer = spawn_hook(&e, agent, payload, mode, "60000");
        w.until("Allow?");
        // Not a choice: asked again, still waiting.
        w.type_line("maybe");
        w.until("Not a valid choice");
        w.type_line("reject not now");
        let o = answer.recv().unwrap();
        assert!(blocked(&o), "{agent}: {o:?}");
        assert!(
            stderr(&o).contains("rejected by the person (terminal): not now"),
            "{agent}: {o:?}"
        );
    }
}

#[test]
fn with_no_channel_running_the_ask_is_denied_at_once_naming_how_to_approve() {
    for agent in ["gemini", "codex"] {
        let e = env();
        let (payload, mode) = asking_call(&e, agent);
        // A wait long enough that a hook waiting for nobody would be seen.
        let o = spawn_hook(&e, agent, payload, mode, "600000")
            .recv()
            .unwrap();
        assert!(blocked(&o), "{agent}: {o:?}");
        let why = stderr(&o);
        assert!(why.contains("toolgate approvals watch"), "{why}");
        assert!(why.contains("toolgate serve"), "{why}");
        // Nothing was handed over: the queue was never even created.
        assert!(!e.data.join("asks.db").exists(), "{agent}");
    }
}

#[test]
fn an_answer_after_the_hooks_wait_is_too_late_and_the_call_is_denied() {
    let e = env();
    let mut w = Watcher::start(&e, "");
    let (payload, mode) = asking_call(&e, "gemini");
    let answer = spawn_hook(&e, "gemini", payload, mode, "1000");
    w.until("Allow?");
    // The hook gives up first.
    let o = answer.recv().unwrap();
    assert!(blocked(&o), "{o:?}");
    let why = stderr(&o);
    assert!(
        why.contains("nobody answered on toolgate's channels within 1 s"),
        "{why}"
    );
    assert!(why.contains("toolgate approvals watch"), "{why}");
    // The watcher sees the ask go; typing then answers nothing.
    w.until("withdrawn");
    w.type_line("once");
}

#[test]
fn a_piped_answer_is_not_a_terminal_and_answers_nothing() {
    let e = env();
    let mut c = e.command(&["approvals", "watch"]);
    c.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: setsid is async-signal-safe.
    unsafe {
        c.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
    let mut child = c.spawn().unwrap();
    let _ = child.stdin.take().unwrap().write_all(b"once\n");
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert!(
        stderr(&o).contains("answers on a terminal, and this process has none"),
        "{o:?}"
    );
    let o = e
        .command(&["approvals", "watch", "--count", "0"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert!(stderr(&o).contains("--count"), "{o:?}");
    let o = e
        .command(&["approvals", "watch", "--nope"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{o:?}");
}

/// One HTTP/1.1 exchange with the page: the response's headers and body.
fn http(addr: &str, request: &str) -> (String, String) {
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.write_all(request.as_bytes()).unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    (head.to_string(), body.to_string())
}

#[test]
fn an_ask_answered_once_on_the_approval_page_of_toolgate_mcp_is_allowed() {
    let e = env();
    let mut c = e.command(&["mcp", "--root"]);
    c.arg(&e.ws)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut server = c.spawn().unwrap();
    // Kept open: the server runs until its stdin closes.
    let _stdin = server.stdin.take().unwrap();
    let mut lines = std::io::BufRead::lines(BufReader::new(server.stderr.take().unwrap()));
    let url = loop {
        let line = lines.next().expect("the server ended").unwrap();
        if let Some((_, url)) = line.split_once("approval page at ") {
            break url.trim().to_string();
        }
    };
    std::thread::spawn(move || for _ in lines {});
    let rest = url.strip_prefix("http://").unwrap();
    let (addr, query) = rest.split_once('/').unwrap();
    let addr = addr.to_string();
    // Signing in with the token gives the cookie the page wants.
    let (head, _) = http(
        &addr,
        &format!("GET /{query} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"),
    );
    let cookie = head
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .starts_with("set-cookie:")
                .then(|| l[11..].trim().split(';').next().unwrap().to_string())
        })
        .unwrap_or_else(|| panic!("no cookie: {head}"));
    let (payload, mode) = asking_call(&e, "gemini");
    let answer = spawn_hook(&e, "gemini", payload, mode, "60000");
    let id = loop {
        let (_, body) = http(
            &addr,
            &format!(
                "GET /approvals/pending HTTP/1.1\r\nHost: {addr}\r\nCookie: {cookie}\r\n\
                 Accept: application/json\r\nConnection: close\r\n\r\n"
            ),
        );
        let start = body.find('[').unwrap_or(0);
        let end = body.rfind(']').map_or(body.len(), |i| i + 1);
        let asks: Value = serde_json::from_str(&body[start..end]).unwrap_or(json!([]));
        if let Some(ask) = asks.as_array().and_then(|a| a.first()) {
            assert!(
                ask["prompt"]["tool"].as_str().unwrap().contains("gemini"),
                "{ask}"
            );
            break ask["id"].as_u64().unwrap();
        }
        // A hook that answered without its ask ever showing fails the test
        // (instead of leaving it polling).
        if let Ok(o) = answer.try_recv() {
            panic!("the hook answered before its ask showed on the page: {o:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let form = "answer=once";
    let (head, body) = http(
        &addr,
        &format!(
            "POST /approvals/pending/{id}/answer HTTP/1.1\r\nHost: {addr}\r\nCookie: {cookie}\r\n\
             Origin: http://{addr}\r\nAccept: application/json\r\n\
             Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\n\
             Connection: close\r\n\r\n{form}",
            form.len()
        ),
    );
    assert!(head.starts_with("HTTP/1.1 2"), "{head}\n{body}");
    let o = answer.recv().unwrap();
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["decision"], "allow", "{v}");
    assert!(
        v["reason"]
            .as_str()
            .unwrap()
            .contains("allowed once by the person (page)"),
        "{v}"
    );
    let _ = server.kill();
    let _ = server.wait();
}

#[test]
fn hook_status_says_who_takes_the_asks_and_whether_a_channel_runs() {
    let e = env();
    let status = |agent: &str| {
        let out = e
            .command(&["hook", "status", agent, "--project"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    for agent in ["gemini", "claude-code"] {
        let install = e.command(&["hook", "install", agent]).output().unwrap();
        assert!(install.status.success(), "{install:?}");
    }
    let none = status("gemini");
    assert!(
        none.contains("asks: denied with how to approve: no toolgate channel is running"),
        "{none}"
    );
    assert!(
        status("claude-code").contains("asks: claude-code asks the person itself"),
        "{}",
        status("claude-code")
    );
    let _watcher = Watcher::start(&e, "");
    let running = status("gemini");
    assert!(
        running.contains("asks: put to toolgate's channels; one is running"),
        "{running}"
    );
}
