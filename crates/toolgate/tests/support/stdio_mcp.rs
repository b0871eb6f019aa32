//! A `toolgate mcp` on real pipes, initialised, for tests that talk to it as
//! a client does: one JSON-RPC message per line.

use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};

use serde_json::{Value, json};

use super::cli_env::isolate;

/// The running server and both ends of its pipe.
pub struct StdioMcp {
    child: Child,
    to_server: Option<ChildStdin>,
    from_server: BufReader<ChildStdout>,
    /// The server's answer to `initialize`.
    pub init: Value,
}

impl StdioMcp {
    /// Starts `toolgate mcp --root WS --no-web --approval-channels mcp EXTRA…`
    /// with its data in `data` and `home` as HOME, and completes the
    /// initialize handshake (a client without elicitation).
    pub fn start(ws: &Path, data: &Path, home: &Path, extra: &[&OsStr], client: &str) -> StdioMcp {
        let mut command = Command::new(env!("CARGO_BIN_EXE_toolgate"));
        command.arg("mcp").arg("--root").arg(ws).args(extra).args([
            "--no-web",
            "--approval-channels",
            "mcp",
        ]);
        let mut child = isolate(&mut command, data, home)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let to_server = child.stdin.take();
        let from_server = BufReader::new(child.stdout.take().unwrap());
        let mut server = StdioMcp {
            child,
            to_server,
            from_server,
            init: Value::Null,
        };
        server.send(json!({
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                // No elicitation: the client cannot be asked.
                "capabilities": {},
                "clientInfo": {"name": client, "version": "1"}
            }
        }));
        let init = server.next().expect("the server answers initialize");
        assert!(init["result"]["protocolVersion"].is_string(), "{init}");
        server.init = init;
        server.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        server
    }

    /// Sends one message.
    pub fn send(&mut self, message: Value) {
        let to = self.to_server.as_mut().expect("stdin is still open");
        writeln!(to, "{message}").unwrap();
        to.flush().unwrap();
    }

    /// The next message from the server; `None` when it hung up.
    pub fn next(&mut self) -> Option<Value> {
        let mut line = String::new();
        let n = self.from_server.read_line(&mut line).unwrap();
        (n > 0).then(|| serde_json::from_str(&line).unwrap())
    }

    /// The next answer to a request (notifications and the server's own
    /// requests skipped), with its id; `None` when the server hung up.
    pub fn next_answer(&mut self) -> Option<(i64, Value)> {
        loop {
            let message = self.next()?;
            if message.get("method").is_some() {
                continue;
            }
            if let Some(id) = message["id"].as_i64() {
                return Some((id, message));
            }
        }
    }

    /// Kills the server with SIGKILL, as a crash or the OOM killer would.
    pub fn kill(&mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }

    /// Closes stdin, as a client that is done does, and waits for the exit.
    pub fn close(mut self) -> ExitStatus {
        drop(self.to_server.take());
        self.child.wait().unwrap()
    }
}
