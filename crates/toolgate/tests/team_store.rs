//! The team store with the real parts: `toolgate` processes, each with a data
//! directory and home of its own (a "machine"), pointed by `[store]` at one
//! PostgreSQL database started by `scripts/setup-postgres.sh`.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::process::Output;
use std::sync::Arc;

use serde_json::{Value, json};
use toolgate_policy::approvals::{Answer, ApprovalChannel, AskPrompt, ChannelError};

use crate::pg_server::{OwnCluster, fresh_database, server_or_skip};
use crate::support::cli_env::CliEnv;
use crate::support::stdio_mcp::StdioMcp;

/// A machine: its own home (with the config naming the database) and data
/// directory.
fn machine(db: &(String, String), person: &str, name: &str) -> CliEnv {
    let e = CliEnv::new();
    let pw = e.home.join("db-password");
    e.write(&pw, &format!("{}\n", db.1));
    std::fs::set_permissions(&pw, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    e.write(
        e.home.join(".config/toolgate/config.toml"),
        &format!(
            "[store]\nurl = \"{}\"\npassword_file = \"{}\"\n\n[identity]\nperson = \"{person}\"\nmachine = \"{name}\"\n",
            db.0,
            pw.display()
        ),
    );
    e.write(e.ws.join("a.txt"), "hello\n");
    e
}

fn run(e: &CliEnv, args: &[&str]) -> Output {
    e.command(args).output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Every event of the log, as `toolgate log --json` prints them.
fn events(e: &CliEnv, filter: &[&str]) -> Vec<Value> {
    let mut args = vec!["log", "--json"];
    args.extend_from_slice(filter);
    let o = run(e, &args);
    assert!(o.status.success(), "{}", text(&o.stderr));
    text(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn verify(e: &CliEnv) -> String {
    let o = run(e, &["log", "verify"]);
    assert!(o.status.success(), "{}{}", text(&o.stdout), text(&o.stderr));
    text(&o.stdout)
}

/// No seq twice, and every `tool.started` has its end.
fn check_calls_complete(all: &[Value]) {
    let mut seqs = HashSet::new();
    for e in all {
        assert!(seqs.insert(e["seq"].as_u64().unwrap()), "seq twice: {e}");
    }
    let mut started = HashSet::new();
    let mut ended = HashSet::new();
    for e in all {
        let call = e["call_id"].as_str().unwrap().to_string();
        match e["kind"].as_str().unwrap() {
            "tool.started" => {
                started.insert(call);
            }
            "tool.completed" | "tool.failed" => {
                ended.insert(call);
            }
            _ => {}
        }
    }
    let open: Vec<_> = started.difference(&ended).collect();
    assert!(open.is_empty(), "calls started without an end: {open:?}");
}

fn read_call(id: i64, path: &str) -> Value {
    json!({
        "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "read", "arguments": {"path": path}}
    })
}

/// As the acceptance asks: four processes, 1,000 calls each.
const CALLS_PER_PROCESS: i64 = 1000;

#[test]
fn four_processes_share_one_chain_that_verifies_with_every_call_ended() {
    let Some(db) = fresh_database("four") else {
        return;
    };
    let machines: Vec<CliEnv> = (0..4)
        .map(|i| machine(&db, &format!("person{i}@example.com"), &format!("m{i}")))
        .collect();
    let threads: Vec<_> = machines
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let (ws, data, home) = (m.ws.clone(), m.data.clone(), m.home.clone());
            std::thread::spawn(move || {
                let mut server = StdioMcp::start(&ws, &data, &home, &[], &format!("client{i}"));
                // All at once: the server settles them in parallel.
                for k in 0..CALLS_PER_PROCESS {
                    server.send(read_call(100 + k, "a.txt"));
                }
                let mut ok = 0;
                for _ in 0..CALLS_PER_PROCESS {
                    let (_, answer) = server.next_answer().unwrap();
                    assert!(answer["result"]["isError"] != json!(true), "{answer}");
                    ok += 1;
                }
                assert!(server.close().success());
                ok
            })
        })
        .collect();
    let answered: i64 = threads.into_iter().map(|t| t.join().unwrap()).sum();
    assert_eq!(answered, 4 * CALLS_PER_PROCESS);
    let report = verify(&machines[0]);
    let all = events(&machines[1], &[]);
    assert_eq!(report.trim(), format!("ok: {} events", all.len()));
    // Requested, resolved, started, completed.
    assert!(
        all.len() as i64 >= 4 * 4 * CALLS_PER_PROCESS,
        "{}",
        all.len()
    );
    check_calls_complete(&all);
    // Who and where: each machine's events carry its person and name.
    let mine = events(&machines[3], &["--person", "person2@example.com"]);
    assert_eq!(mine.len(), all.len() / 4);
    assert!(mine.iter().all(|e| e["payload"]["machine"] == "m2"));
    // The agent is the MCP client's name.
    let by_agent = events(&machines[0], &["--machine", "m1", "--agent", "client1"]);
    assert_eq!(by_agent.len(), all.len() / 4 - 1);
    assert!(
        events(&machines[0], &["--agent", "client2"])
            .iter()
            .all(|e| e["payload"]["machine"] == "m2")
    );
    // The data directories hold no log of their own.
    assert!(!machines[0].data.join("audit.db").exists());
}

#[test]
fn a_writer_killed_mid_run_loses_no_event_a_call_went_on_from() {
    let Some(db) = fresh_database("kill") else {
        return;
    };
    let steady = machine(&db, "steady@example.com", "steady");
    let victim = machine(&db, "victim@example.com", "victim");
    for k in 0..400 {
        victim.write(victim.ws.join(format!("f{k}.txt")), "x\n");
    }
    let background = {
        let (ws, data, home) = (steady.ws.clone(), steady.data.clone(), steady.home.clone());
        std::thread::spawn(move || {
            let mut server = StdioMcp::start(&ws, &data, &home, &[], "steady");
            for k in 0..200 {
                server.send(read_call(100 + k, "a.txt"));
            }
            for _ in 0..200 {
                server.next_answer().unwrap();
            }
            assert!(server.close().success());
        })
    };
    let mut server = StdioMcp::start(&victim.ws, &victim.data, &victim.home, &[], "victim");
    for k in 0..400 {
        server.send(read_call(1000 + k, &format!("f{k}.txt")));
    }
    // Killed at a moment that differs from run to run (after 20 to 199
    // answers), with calls still in flight.
    let kill_after = 20
        + std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .subsec_nanos() as usize
            % 180;
    eprintln!("killing the writer after {kill_after} answers");
    let mut answered = Vec::new();
    while answered.len() < kill_after {
        let (id, answer) = server.next_answer().unwrap();
        assert!(answer["result"]["isError"] != json!(true), "{answer}");
        answered.push(id - 1000);
    }
    server.kill();
    background.join().unwrap();
    let report = verify(&steady);
    assert!(report.starts_with("ok:"), "{report}");
    // Every call whose answer reached the client has its end in the log.
    let all = events(&steady, &["--person", "victim@example.com"]);
    let mut call_of_path = HashMap::new();
    let mut ended = HashSet::new();
    for e in &all {
        let call = e["call_id"].as_str().unwrap().to_string();
        if let Some(p) = e["payload"]["args"]["path"].as_str() {
            call_of_path.insert(p.to_string(), call.clone());
        }
        if e["kind"] == "tool.completed" {
            ended.insert(call);
        }
    }
    for k in answered {
        let call = call_of_path
            .get(&format!("f{k}.txt"))
            .unwrap_or_else(|| panic!("answered call f{k}.txt is not in the log"));
        assert!(
            ended.contains(call),
            "answered call f{k}.txt has no tool.completed"
        );
    }
}

/// Answers every ask with "always".
struct AlwaysYes;

#[async_trait::async_trait]
impl ApprovalChannel for AlwaysYes {
    async fn ask(&self, _prompt: &AskPrompt) -> Result<Answer, ChannelError> {
        Ok(Answer::Always)
    }
}

/// A real `write` call on `machine` in `root`, its ask answered "always".
async fn write_answered_always(machine: &CliEnv, root: &Path) {
    let toolgate = toolgate::Builder::new()
        .location(root)
        .data_dir(&machine.data)
        .user_config(Some(machine.home.join(".config/toolgate/config.toml")))
        .managed_config(None)
        .approvals(Arc::new(AlwaysYes))
        .build()
        .unwrap();
    let catalogue = toolgate.catalogue().unwrap();
    toolgate
        .settle(
            &catalogue,
            "write",
            json!({"path": "new.txt", "content": "x"}),
        )
        .await
        .unwrap();
}

fn check_write(e: &CliEnv, root: &Path) -> Value {
    let o = run(
        e,
        &[
            "check",
            "write",
            r#"{"path":"new.txt","content":"x"}"#,
            "--root",
            root.to_str().unwrap(),
            "--json",
        ],
    );
    serde_json::from_str(&text(&o.stdout)).unwrap_or_else(|_| panic!("{}", text(&o.stderr)))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_saved_on_one_machine_allows_on_another_until_revoked_anywhere() {
    let Some(db) = fresh_database("approve") else {
        return;
    };
    let laptop = machine(&db, "ada@example.com", "laptop");
    let runner = machine(&db, "ci@example.com", "runner");
    // Both work on the same checkout path.
    let root = laptop.ws.clone();
    assert_eq!(check_write(&runner, &root)["decision"], "ask");
    // Ada answers "always" on her laptop, in a real call.
    write_answered_always(&laptop, &root).await;
    // The runner, with its own data directory, is allowed by it.
    let allowed = check_write(&runner, &root);
    assert_eq!(allowed["decision"], "allow", "{allowed}");
    assert_eq!(allowed["source"], "saved", "{allowed}");
    // Listed with who approved and where.
    let o = run(&runner, &["approvals", "list", "--json"]);
    let saved: Value = serde_json::from_str(text(&o.stdout).lines().next().unwrap()).unwrap();
    assert_eq!(saved["approved_by"], "ada@example.com");
    assert_eq!(saved["machine"], "laptop");
    let o = run(&runner, &["approvals", "list"]);
    assert!(
        text(&o.stdout).contains("ada@example.com (laptop)"),
        "{}",
        text(&o.stdout)
    );
    // Revoked on the runner: asked again on both.
    let id = saved["id"].as_i64().unwrap().to_string();
    let o = run(&runner, &["approvals", "revoke", &id]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(check_write(&runner, &root)["decision"], "ask");
    assert_eq!(check_write(&laptop, &root)["decision"], "ask");
}

#[test]
fn a_database_restart_refuses_calls_then_they_run_again() {
    if server_or_skip().is_none() {
        return;
    }
    let cluster = OwnCluster::start();
    let db = cluster.url_and_password();
    let m = machine(&db, "ada@example.com", "laptop");
    let write = |name: &str| {
        run(
            &m,
            &[
                "call",
                "--mode",
                "accept-edits",
                "write",
                &format!(r#"{{"path":"{name}","content":"x"}}"#),
            ],
        )
    };
    let o = write("one.txt");
    assert!(o.status.success(), "{}", text(&o.stderr));
    cluster.run("stop");
    let o = write("two.txt");
    assert!(!o.status.success());
    let err = text(&o.stderr);
    assert!(
        err.contains(&format!("127.0.0.1:{}", cluster.port)),
        "{err}"
    );
    assert!(err.contains("audit"), "{err}");
    // Nothing ran without its events durable.
    assert!(!m.ws.join("two.txt").exists());
    cluster.run("start");
    let o = write("three.txt");
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(m.ws.join("three.txt").exists());
    let report = verify(&m);
    assert!(report.starts_with("ok:"), "{report}");
    check_calls_complete(&events(&m, &[]));
}

#[test]
fn bad_store_settings_are_clear_errors_and_nothing_runs() {
    let e = CliEnv::new();
    e.write(e.ws.join("a.txt"), "hello\n");
    let config = e.home.join(".config/toolgate/config.toml");
    let cases = [
        (
            "[store]\nurl = \"postgres://tg:hunter2@127.0.0.1:1/x\"\n",
            "holds a password",
        ),
        (
            "[store]\nurl = \"postgres://tg@127.0.0.1:1/x\"\npassword = \"hunter2\"\n",
            "password is refused",
        ),
        ("[store]\nurl = \"http://db/x\"\n", "not a PostgreSQL URL"),
        (
            "[store]\nurl = \"postgres://tg@127.0.0.1:1/x\"\npassword_env = \"TG_TEST_UNSET_PW\"\n",
            "is not set",
        ),
        // Nothing listens on port 1: the call is refused, naming the database.
        (
            "[store]\nurl = \"postgres://tg@127.0.0.1:1/x\"\n",
            "postgres://tg@127.0.0.1:1/x",
        ),
    ];
    for (settings, expected) in cases {
        e.write(&config, settings);
        let o = run(&e, &["call", "read", r#"{"path":"a.txt"}"#]);
        assert!(!o.status.success(), "{settings}");
        let err = text(&o.stderr);
        assert!(err.contains(expected), "{settings}: {err}");
        assert!(!err.contains("hunter2"), "{err}");
        assert!(!text(&o.stdout).contains("hello"), "{settings}");
    }
}

/// `toolgate hook claude-code` with a pre-tool-use payload for `git status`.
fn hook_git_status(e: &CliEnv) -> Output {
    use std::io::Write;
    let payload = json!({"session_id": "s1", "cwd": e.ws.display().to_string(),
        "hook_event_name": "PreToolUse", "tool_name": "Bash",
        "tool_input": {"command": "git status"}, "tool_use_id": "call-1"});
    let mut child = e
        .command(&["hook", "claude-code"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let _ = child
        .stdin
        .take()
        .unwrap()
        .write_all(payload.to_string().as_bytes());
    child.wait_with_output().unwrap()
}

#[test]
fn a_hook_records_to_the_team_database_and_blocks_when_it_is_unreachable() {
    let Some(db) = fresh_database("hook") else {
        return;
    };
    let m = machine(&db, "ada@example.com", "laptop");
    let o = hook_git_status(&m);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let answer: Value = serde_json::from_str(text(&o.stdout).trim()).unwrap();
    assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], "allow");
    let recorded = events(&m, &["--agent", "claude-code"]);
    assert!(!recorded.is_empty());
    assert!(
        recorded
            .iter()
            .all(|e| e["payload"]["person"] == "ada@example.com")
    );
    // The database goes away: the hook blocks (exit 2), naming it.
    let down = machine(
        &("postgres://tg@127.0.0.1:1/x".into(), "pw".into()),
        "ada",
        "laptop",
    );
    let o = hook_git_status(&down);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert!(
        text(&o.stderr).contains("postgres://tg@127.0.0.1:1/x"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn a_running_mcp_server_refuses_calls_while_the_database_is_down_and_serves_again_after() {
    if server_or_skip().is_none() {
        return;
    }
    let cluster = OwnCluster::start();
    let db = cluster.url_and_password();
    let m = machine(&db, "ada@example.com", "laptop");
    let mut server = StdioMcp::start(&m.ws, &m.data, &m.home, &[], "long-lived");
    let call = |server: &mut StdioMcp, id: i64| {
        server.send(read_call(id, "a.txt"));
        let (_, answer) = server.next_answer().unwrap();
        answer
    };
    let ok = call(&mut server, 10);
    assert!(ok["result"]["isError"] != json!(true), "{ok}");
    cluster.run("stop");
    let refused = call(&mut server, 11);
    let text = refused.to_string();
    assert!(
        refused["result"]["isError"] == json!(true) || refused.get("error").is_some(),
        "{text}"
    );
    assert!(
        text.contains(&format!("127.0.0.1:{}", cluster.port)),
        "{text}"
    );
    assert!(!text.contains("hello"), "the file was read: {text}");
    cluster.run("start");
    // The same server connects again: calls run.
    let mut back = None;
    for id in 12..60 {
        let answer = call(&mut server, id);
        if answer["result"]["isError"] != json!(true) && answer.get("error").is_none() {
            back = Some(answer);
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    let back = back.expect("calls never ran again after the database came back");
    assert!(back.to_string().contains("hello"), "{back}");
    assert!(server.close().success());
    let report = verify(&m);
    assert!(report.starts_with("ok:"), "{report}");
}

/// `git init` in `dir` with `origin` at `url`.
fn git_checkout(dir: &Path, url: &str) {
    for args in [vec!["init", "-q"], vec!["remote", "add", "origin", url]] {
        let o = std::process::Command::new("git")
            .args(&args)
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(o.status.success(), "git {args:?}: {}", text(&o.stderr));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_follows_the_repository_to_a_checkout_at_another_path() {
    let Some(db) = fresh_database("approve_repo") else {
        return;
    };
    let laptop = machine(&db, "ada@example.com", "laptop");
    let runner = machine(&db, "ci@example.com", "runner");
    let fork = machine(&db, "eve@example.com", "fork");
    // One repository, checked out at each machine's own path, its remote
    // written in two forms; a third machine has another repository.
    git_checkout(&laptop.ws, "git@github.com:acme/app.git");
    git_checkout(&runner.ws, "https://github.com/acme/app");
    git_checkout(&fork.ws, "https://github.com/eve/app.git");
    assert_ne!(laptop.ws, runner.ws);
    assert_eq!(check_write(&runner, &runner.ws)["decision"], "ask");
    write_answered_always(&laptop, &laptop.ws).await;
    let allowed = check_write(&runner, &runner.ws);
    assert_eq!(allowed["decision"], "allow", "{allowed}");
    assert_eq!(allowed["source"], "saved", "{allowed}");
    // Another repository does not get it.
    assert_eq!(check_write(&fork, &fork.ws)["decision"], "ask");
    let o = run(&runner, &["approvals", "list", "--json"]);
    let saved: Value = serde_json::from_str(text(&o.stdout).lines().next().unwrap()).unwrap();
    assert_eq!(saved["project"], "git:github.com/acme/app", "{saved}");
}
