//! OTLP export against a real backend: Arize Phoenix (PyPI, installed by
//! `scripts/setup-phoenix.sh`), started here on loopback; `toolgate call`
//! sends its spans there, and the test reads them back through Phoenix's
//! REST API. Without Phoenix the test says so and skips, except under
//! `CI=true`, where that is a failure.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::cli_env::CliEnv;
use crate::support::stdio_mcp::StdioMcp;

fn phoenix_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".phoenix-venv/bin/phoenix")
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `GET path` on loopback: the status and the body.
fn get(port: u16, path: &str) -> Option<(u16, String)> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    write!(
        s,
        "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut raw = String::new();
    s.read_to_string(&mut raw).ok()?;
    let (head, body) = raw.split_once("\r\n\r\n")?;
    let status = head.split_whitespace().nth(1)?.parse().ok()?;
    Some((status, body.to_string()))
}

/// A Phoenix server of this test's own, stopped when dropped.
struct Phoenix {
    child: Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Phoenix {
    fn start() -> Option<Phoenix> {
        let bin = phoenix_bin();
        if !bin.exists() {
            let setup = "bash scripts/setup-phoenix.sh";
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "Arize Phoenix is missing at {} (run `{setup}`)",
                bin.display()
            );
            eprintln!("SKIPPED: the OTLP test needs Arize Phoenix; run `{setup}`");
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let port = free_port();
        let child = Command::new(bin)
            .arg("serve")
            .env("PHOENIX_PORT", port.to_string())
            .env("PHOENIX_GRPC_PORT", free_port().to_string())
            .env("PHOENIX_HOST", "127.0.0.1")
            .env("PHOENIX_WORKING_DIR", dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let p = Phoenix {
            child,
            port,
            _dir: dir,
        };
        let start = Instant::now();
        while get(port, "/healthz").is_none_or(|(s, _)| s != 200) {
            assert!(
                start.elapsed() < Duration::from_secs(240),
                "Phoenix did not start in 240 s"
            );
            std::thread::sleep(Duration::from_millis(250));
        }
        Some(p)
    }

    /// The spans of the default project, newest first.
    fn spans(&self) -> Vec<Value> {
        let (status, body) = get(self.port, "/v1/projects/default/spans?limit=100").unwrap();
        assert_eq!(status, 200, "{body}");
        let v: Value = serde_json::from_str(&body).unwrap();
        v["data"].as_array().cloned().unwrap_or_default()
    }
}

impl Drop for Phoenix {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn with_telemetry(endpoint: &str) -> CliEnv {
    let e = CliEnv::new();
    e.write(e.ws.join("a.txt"), "hello\n");
    e.write(
        e.home.join(".config/toolgate/config.toml"),
        &format!(
            "[telemetry]\nendpoint = \"{endpoint}\"\ninclude_arguments = true\n\n[identity]\nperson = \"ada@example.com\"\nmachine = \"laptop\"\n"
        ),
    );
    e
}

#[test]
fn every_call_is_a_genai_execute_tool_span_in_a_real_otlp_backend() {
    let Some(phoenix) = Phoenix::start() else {
        return;
    };
    let e = with_telemetry(&format!("http://127.0.0.1:{}", phoenix.port));
    let o = e
        .command(&["call", "read", r#"{"path":"a.txt"}"#])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // Asked with nobody to ask: denied.
    let o = e
        .command(&["call", "write", r#"{"path":"b.txt","content":"x"}"#])
        .output()
        .unwrap();
    assert!(!o.status.success());
    // Over MCP: the server's span around the tool's.
    let mut server = StdioMcp::start(&e.ws, &e.data, &e.home, &[], "otel-client");
    server.send(json!({
        "jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "list", "arguments": {"path": "."}}
    }));
    let (_, answer) = server.next_answer().unwrap();
    assert!(answer["result"]["isError"] != json!(true), "{answer}");
    assert!(server.close().success());
    let start = Instant::now();
    let spans = loop {
        let spans = phoenix.spans();
        if spans.len() >= 4 {
            break spans;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "spans never arrived: {spans:?}"
        );
        std::thread::sleep(Duration::from_millis(250));
    };
    let named = |name: &str| {
        spans
            .iter()
            .find(|s| s["name"] == name)
            .unwrap_or_else(|| panic!("no span {name}: {spans:?}"))
            .clone()
    };
    let read = named("execute_tool read");
    let a = &read["attributes"];
    assert_eq!(a["gen_ai.operation.name"], "execute_tool");
    assert_eq!(a["gen_ai.tool.name"], "read");
    assert!(
        a["gen_ai.tool.call.id"]
            .as_str()
            .unwrap()
            .starts_with("call-")
    );
    assert_eq!(a["toolgate.decision"], "allow");
    assert_eq!(a["toolgate.risk"], "read");
    assert_eq!(a["toolgate.decision.source"], "default");
    assert_eq!(a["toolgate.person"], "ada@example.com");
    assert_eq!(a["toolgate.machine"], "laptop");
    assert_eq!(a["toolgate.agent"], "toolgate-call");
    assert_eq!(a["toolgate.sandbox"], false);
    assert!(
        a["gen_ai.tool.call.arguments"]
            .as_str()
            .unwrap()
            .contains("a.txt")
    );
    assert_ne!(read["status_code"], "ERROR");
    let write = named("execute_tool write");
    assert_eq!(write["attributes"]["toolgate.decision"], "deny");
    assert_eq!(write["attributes"]["toolgate.decision.suggested"], "ask");
    assert_eq!(write["attributes"]["error.type"], "denied");
    assert_eq!(write["status_code"], "ERROR");
    let served = named("tools/call list");
    assert_eq!(served["attributes"]["mcp.method.name"], "tools/call");
    assert!(served["attributes"]["mcp.session.id"].is_string());
    let listed = named("execute_tool list");
    assert_eq!(listed["parent_id"], served["context"]["span_id"]);
    assert_eq!(listed["context"]["trace_id"], served["context"]["trace_id"]);
    assert_eq!(listed["attributes"]["toolgate.agent"], "otel-client");
    // A call of `toolgate call` has no server span above it.
    assert!(read["parent_id"].is_null());
    // Every span arrived: `toolgate log` has nothing to say about them.
    let o = e.command(&["log"]).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("not delivered"), "{err}");
    let stats: Value =
        serde_json::from_slice(&std::fs::read(e.data.join("telemetry-stats.json")).unwrap())
            .unwrap();
    assert_eq!(stats["spans"], 4, "{stats}");
    assert_eq!(stats["delivered"], 4, "{stats}");
}

/// `toolgate-hook claude-code` answering `payload`.
fn claude_hook(e: &CliEnv, payload: Value) -> std::process::Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_toolgate-hook"));
    c.arg("claude-code")
        .current_dir(&e.ws)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    crate::support::cli_env::isolate(&mut c, &e.data, &e.home);
    let mut child = c.spawn().unwrap();
    let _ = child
        .stdin
        .take()
        .unwrap()
        .write_all(payload.to_string().as_bytes());
    child.wait_with_output().unwrap()
}

fn pre_tool_use(e: &CliEnv, id: &str, tool: &str, input: Value) -> Value {
    json!({"session_id": "agent-s1", "cwd": e.ws, "hook_event_name": "PreToolUse",
        "tool_name": tool, "tool_input": input, "tool_use_id": id})
}

/// The spans named `name`, waiting up to 30 s for `count` of them.
fn wait_for(phoenix: &Phoenix, name: &str, count: usize) -> Vec<Value> {
    let start = Instant::now();
    loop {
        let found: Vec<Value> = phoenix
            .spans()
            .into_iter()
            .filter(|s| s["name"] == name)
            .collect();
        if found.len() >= count {
            return found;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "{count} spans {name} never arrived: {:?}",
            phoenix.spans()
        );
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// The exporter a hook started, from the pid in its lock file, stopped.
fn stop_exporter(e: &CliEnv) {
    let lock = e.data.join("telemetry-export.lock");
    if let Some(pid) = std::fs::read_to_string(lock)
        .ok()
        .and_then(|t| t.trim().parse::<i32>().ok())
    {
        // SAFETY: a plain signal to a process id.
        unsafe { libc::kill(pid, libc::SIGTERM) };
    }
}

#[test]
fn hook_calls_become_spans_through_an_exporter_the_hook_starts() {
    let Some(phoenix) = Phoenix::start() else {
        return;
    };
    let e = with_telemetry(&format!("http://127.0.0.1:{}", phoenix.port));
    e.write(e.home.join(".ssh/id_rsa"), "KEY\n");
    // A key read: denied, and a denial is the call's whole story.
    let o = claude_hook(
        &e,
        pre_tool_use(&e, "tu-1", "Bash", json!({"command": "cat ~/.ssh/id_rsa"})),
    );
    // Claude Code reads exit 2 as a block, the reason on stderr.
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("credential"),
        "{o:?}"
    );
    // A read, allowed, and the outcome the agent reports after it ran.
    let read = pre_tool_use(&e, "tu-2", "Read", json!({"file_path": e.ws.join("a.txt")}));
    let o = claude_hook(&e, read);
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("allow"),
        "{o:?}"
    );
    let post = json!({"session_id": "agent-s1", "cwd": e.ws, "hook_event_name": "PostToolUse",
        "tool_name": "Read", "tool_input": {"file_path": e.ws.join("a.txt")},
        "tool_use_id": "tu-2", "tool_response": "hello"});
    let o = claude_hook(&e, post);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let denied = wait_for(&phoenix, "execute_tool Bash", 1);
    let a = &denied[0]["attributes"];
    assert_eq!(a["toolgate.decision"], "deny", "{a}");
    assert_eq!(a["gen_ai.tool.call.id"], "tu-1");
    assert_eq!(a["toolgate.agent"], "claude-code");
    assert_eq!(a["toolgate.person"], "ada@example.com");
    assert_eq!(a["error.type"], "denied");
    assert_eq!(denied[0]["status_code"], "ERROR");
    let read = wait_for(&phoenix, "execute_tool Read", 1);
    let a = &read[0]["attributes"];
    assert_eq!(a["toolgate.decision"], "allow", "{a}");
    assert_eq!(a["gen_ai.tool.call.id"], "tu-2");
    assert!(a["toolgate.outcome"].is_null(), "{a}");
    assert_ne!(read[0]["status_code"], "ERROR");
    stop_exporter(&e);
    // An exporter started by hand runs until the log is quiet, and ends a
    // call the agent never reported as such.
    let e2 = with_telemetry(&format!("http://127.0.0.1:{}", phoenix.port));
    let exporter = e2
        .command(&["telemetry", "export", "--until-idle", "5"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let lock = e2.data.join("telemetry-export.lock");
    let start = Instant::now();
    while std::fs::read_to_string(&lock).map_or(true, |t| t.trim().is_empty()) {
        assert!(start.elapsed() < Duration::from_secs(10), "no exporter");
        std::thread::sleep(Duration::from_millis(50));
    }
    let glob = pre_tool_use(&e2, "tu-3", "Glob", json!({"pattern": "*.txt"}));
    let o = claude_hook(&e2, glob);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let done = exporter.wait_with_output().unwrap();
    assert!(done.status.success(), "{done:?}");
    let told = String::from_utf8_lossy(&done.stdout);
    assert!(told.starts_with("sent 1 spans of hook calls"), "{told}");
    let glob = wait_for(&phoenix, "execute_tool Glob", 1);
    let a = &glob[0]["attributes"];
    assert_eq!(a["toolgate.outcome"], "not reported by the agent", "{a}");
    assert_eq!(a["gen_ai.tool.call.id"], "tu-3");
    // A second exporter by hand finds nothing left to send.
    let o = e2.command(&["telemetry", "export"]).output().unwrap();
    assert!(o.status.success(), "{o:?}");
    assert!(
        String::from_utf8_lossy(&o.stdout).starts_with("sent 0 spans"),
        "{o:?}"
    );
    // Each hook call is one span: nothing sent twice.
    assert_eq!(wait_for(&phoenix, "execute_tool Bash", 1).len(), 1);
    assert_eq!(wait_for(&phoenix, "execute_tool Read", 1).len(), 1);
}

#[test]
fn telemetry_export_without_a_collector_configured_says_so() {
    let e = CliEnv::new();
    let o = e.command(&["telemetry", "export"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("no [telemetry] is configured"), "{err}");
    let o = e
        .command(&["telemetry", "export", "--until-idle", "soon"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert!(String::from_utf8_lossy(&o.stderr).contains("soon"));
}

/// An OTLP/HTTP collector over TLS of this test's own (Python's `ssl` and
/// `http.server`): it answers every POST with 200 and keeps each body in
/// `dir/received-N`.
struct TlsCollector {
    child: Child,
    port: u16,
}

impl Drop for TlsCollector {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

const TLS_COLLECTOR: &str = r#"
import http.server, ssl, sys, os
d = sys.argv[1]
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        n = len(os.listdir(os.path.join(d, "in")))
        with open(os.path.join(d, "in", "received-%d" % n), "wb") as f:
            f.write(self.path.encode() + b"\n" + body)
        self.send_response(200)
        self.send_header("content-type", "application/x-protobuf")
        self.send_header("content-length", "0")
        self.end_headers()
    def log_message(self, *a):
        pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
c = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
c.load_cert_chain(os.path.join(d, "leaf.pem"), os.path.join(d, "leaf.key"))
s.socket = c.wrap_socket(s.socket, server_side=True)
print(s.server_address[1], flush=True)
s.serve_forever()
"#;

/// A CA and a certificate for 127.0.0.1 signed by it, made with `openssl`.
fn make_certificates(dir: &std::path::Path) {
    let run = |args: &[&str]| {
        let o = Command::new("openssl")
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(o.status.success(), "openssl {args:?}: {o:?}");
    };
    run(&[
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:P-256",
        "-nodes",
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
        "-days",
        "2",
        "-subj",
        "/CN=test collector CA",
    ]);
    run(&[
        "req",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:P-256",
        "-nodes",
        "-keyout",
        "leaf.key",
        "-out",
        "leaf.csr",
        "-subj",
        "/CN=127.0.0.1",
    ]);
    std::fs::write(
        dir.join("leaf.ext"),
        "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n",
    )
    .unwrap();
    run(&[
        "x509",
        "-req",
        "-in",
        "leaf.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "leaf.pem",
        "-days",
        "2",
        "-extfile",
        "leaf.ext",
    ]);
}

impl TlsCollector {
    fn start(dir: &std::path::Path) -> TlsCollector {
        make_certificates(dir);
        std::fs::create_dir_all(dir.join("in")).unwrap();
        let mut child = Command::new("python3")
            .arg("-c")
            .arg(TLS_COLLECTOR)
            .arg(dir)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(child.stdout.take().unwrap()),
            &mut line,
        )
        .unwrap();
        let port = line
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("no port: {line:?}"));
        TlsCollector { child, port }
    }
}

#[test]
fn spans_reach_an_https_collector_whose_ca_is_configured_and_no_other() {
    let dir = tempfile::tempdir().unwrap();
    let collector = TlsCollector::start(dir.path());
    let e = with_telemetry(&format!("https://127.0.0.1:{}", collector.port));
    // Without the CA, the collector's certificate is not trusted: the call
    // runs, the span is counted as not delivered, and the log says why.
    let o = e
        .command(&["call", "read", r#"{"path":"a.txt"}"#])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = e.command(&["log"]).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("1 of 1 spans were not delivered"), "{err}");
    assert_eq!(std::fs::read_dir(dir.path().join("in")).unwrap().count(), 0);
    // With the CA from the standard variable: delivered over TLS.
    let o = e
        .command(&["call", "read", r#"{"path":"a.txt"}"#])
        .env("OTEL_EXPORTER_OTLP_CERTIFICATE", dir.path().join("ca.pem"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let received = std::fs::read(dir.path().join("in/received-0")).unwrap();
    assert!(received.starts_with(b"/v1/traces\n"));
    assert!(
        received.windows(17).any(|w| w == b"execute_tool read"),
        "{received:?}"
    );
    // And from `[telemetry] certificate`, relative to the config file.
    std::fs::copy(
        dir.path().join("ca.pem"),
        e.home.join(".config/toolgate/ca.pem"),
    )
    .unwrap();
    e.write(
        e.home.join(".config/toolgate/config.toml"),
        &format!(
            "[telemetry]\nendpoint = \"https://127.0.0.1:{}\"\ncertificate = \"ca.pem\"\n",
            collector.port
        ),
    );
    let o = e
        .command(&["call", "read", r#"{"path":"a.txt"}"#])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(dir.path().join("in/received-1").exists());
    // A certificate setting naming no file: the call still runs, and says
    // why nothing is exported.
    e.write(
        e.home.join(".config/toolgate/config.toml"),
        &format!(
            "[telemetry]\nendpoint = \"https://127.0.0.1:{}\"\ncertificate = \"missing.pem\"\n",
            collector.port
        ),
    );
    let o = e
        .command(&["call", "read", r#"{"path":"a.txt"}"#])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("missing.pem"), "{err}");
}

#[test]
fn a_dead_collector_costs_the_call_nothing() {
    // Nothing listens there.
    let e = with_telemetry(&format!("http://127.0.0.1:{}", free_port()));
    let start = Instant::now();
    let o = e
        .command(&["call", "read", r#"{"path":"a.txt"}"#])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("hello"));
    // The call, plus at most a second waiting for the last batch at exit.
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
    // The span that never arrived is counted, and `toolgate log` says so.
    let o = e.command(&["log"]).output().unwrap();
    assert!(o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("1 of 1 spans were not delivered to the OTLP collector"),
        "{err}"
    );
}

#[test]
fn telemetry_settings_are_checked_and_refused_in_a_project() {
    let e = with_telemetry("collector:4318");
    let o = e
        .command(&["call", "read", r#"{"path":"a.txt"}"#])
        .output()
        .unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("is not an http:// or https:// URL"), "{err}");
    let e = CliEnv::new();
    e.write(e.ws.join("a.txt"), "hello\n");
    e.write(
        e.ws.join(".toolgate/config.toml"),
        "[telemetry]\nendpoint = \"http://attacker.example:4318\"\n",
    );
    let o = e
        .command(&["call", "read", r#"{"path":"a.txt"}"#])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("[telemetry] is not read from a project's config"),
        "{err}"
    );
}
