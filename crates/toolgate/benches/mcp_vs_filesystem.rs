//! toolgate's MCP server against the reference `@modelcontextprotocol/server-filesystem`,
//! with the same client over stdio, the same files, in the same run, alternating
//! the two servers.
//!
//! Measures cold start to the first `tools/list`; latency p50/p99 and server CPU
//! per call (from `/proc/PID/stat`) for reading a 4 KB file, listing a 1,000-entry
//! directory, a name search (`**/*signal*.rs` over a few hundred files) and writing
//! a 4 KB file; calls per second reading the 4 KB file with 8 calls in flight on
//! the one connection; and peak RSS (`VmHWM`). toolgate runs with its audit log on, in
//! `accept-edits` mode so writes are allowed.
//!
//! Two floor servers run in the same rotation (see `floor/mod.rs`): the least a
//! server can spend on the same work with blocking `std` I/O, without and with
//! toolgate's audit log. They show which part of the CPU per call no server
//! doing this work can avoid.
//!
//! Run: `scripts/setup-bench-peers.sh && cargo bench -p toolgate --bench mcp_vs_filesystem`
//! (`BENCH_CALLS=N` changes the calls per operation, default 500; `BENCH_TOOLGATE=PATH`
//! runs another toolgate binary, such as an older commit's, against the same reference).

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

mod floor;

struct Server {
    name: &'static str,
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
}

impl Server {
    fn spawn(name: &'static str, mut cmd: Command) -> Server {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {name}: {e}"));
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Server {
            name,
            child,
            stdin,
            stdout,
            next_id: 1,
        }
    }

    fn send(&mut self, msg: &Value) {
        let mut line = serde_json::to_vec(msg).unwrap();
        line.push(b'\n');
        self.stdin.write_all(&line).unwrap();
        self.stdin.flush().unwrap();
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let mut line = String::new();
            let n = self.stdout.read_line(&mut line).unwrap();
            assert!(n > 0, "{} closed its stdout", self.name);
            let v: Value = match serde_json::from_str(&line) {
                Ok(v) => v,
                Err(_) => continue,
            };
            if v.get("id") == Some(&json!(id)) && v.get("method").is_none() {
                if let Some(err) = v.get("error") {
                    panic!("{} {method} failed: {err}", self.name);
                }
                return v["result"].clone();
            }
        }
    }

    fn initialize(&mut self) -> Value {
        self.request(
            "initialize",
            json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "toolgate-bench", "version": "1"}
            }),
        );
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        self.request("tools/list", json!({}))
    }

    fn call(&mut self, tool: &str, args: Value) -> Value {
        let r = self.request("tools/call", json!({"name": tool, "arguments": args}));
        assert_ne!(
            r["isError"],
            json!(true),
            "{} {tool} failed: {r}",
            self.name
        );
        r
    }

    /// Calls `tool` `total` times over the one connection, keeping `depth`
    /// requests outstanding (a new one is sent as each answer arrives); returns
    /// the wall time from the first request to the last answer.
    fn call_in_flight(&mut self, tool: &str, args: &Value, total: usize, depth: usize) -> Duration {
        let started = Instant::now();
        let mut sent = 0;
        let mut answered = 0;
        let mut outstanding = std::collections::HashSet::new();
        let send_next = |s: &mut Server, outstanding: &mut std::collections::HashSet<u64>| {
            let id = s.next_id;
            s.next_id += 1;
            s.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": tool, "arguments": args}}));
            outstanding.insert(id);
        };
        while sent < depth.min(total) {
            send_next(self, &mut outstanding);
            sent += 1;
        }
        while answered < total {
            let mut line = String::new();
            let n = self.stdout.read_line(&mut line).unwrap();
            assert!(n > 0, "{} closed its stdout", self.name);
            let Ok(v) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            if v.get("method").is_some() {
                continue;
            }
            let Some(id) = v.get("id").and_then(Value::as_u64) else {
                continue;
            };
            if !outstanding.remove(&id) {
                continue;
            }
            assert!(v.get("error").is_none(), "{} {tool} failed: {v}", self.name);
            assert_ne!(
                v["result"]["isError"],
                json!(true),
                "{} {tool} failed: {v}",
                self.name
            );
            answered += 1;
            if sent < total {
                send_next(self, &mut outstanding);
                sent += 1;
            }
        }
        started.elapsed()
    }

    fn cpu(&self) -> Duration {
        cpu_time(self.child.id())
    }

    fn peak_rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse().ok())
            .unwrap_or(0)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// CPU time of a process, all its threads. `/proc/PID/stat` counts it in 10 ms
/// ticks, too coarse for a few hundred calls of 30 µs, so the nanosecond
/// counters of each live thread (`/proc/PID/task/*/schedstat`) are summed
/// instead. A thread that exited takes its time with it there, so when the tick
/// count is clearly ahead (by more than two ticks), the ticks are used.
fn cpu_time(pid: u32) -> Duration {
    let precise: u64 = std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .filter_map(|t| std::fs::read_to_string(t.unwrap().path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .sum();
    let precise = Duration::from_nanos(precise);
    let ticks = cpu_ticks(pid);
    if ticks > precise + Duration::from_millis(20) {
        ticks
    } else {
        precise
    }
}

/// utime + stime of a process (all its threads, live or not), from /proc/PID/stat.
fn cpu_ticks(pid: u32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = after.split_whitespace().collect();
    // Fields 14 and 15 of stat(5), counted from after the command name.
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    let hz = 100; // sysconf(_SC_CLK_TCK) on Linux
    Duration::from_micros(ticks * 1_000_000 / hz)
}

struct Fixture {
    _dir: tempfile::TempDir,
    root: PathBuf,
    data: PathBuf,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let root = base.join("ws");
    std::fs::create_dir_all(root.join("dir1000")).unwrap();
    let line = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde\n";
    std::fs::write(root.join("file4k.txt"), line.repeat(64)).unwrap();
    // 4 KB of this repository's source, prose comments and code, for the
    // output checks (a file of one repeated line costs them almost nothing).
    let source = include_str!("../src/engine.rs");
    let mut end = 4096.min(source.len());
    while !source.is_char_boundary(end) {
        end -= 1;
    }
    std::fs::write(root.join("source4k.rs"), &source[..end]).unwrap();
    std::fs::create_dir_all(base.join("data")).unwrap();
    std::fs::write(
        base.join("data/checks-off.toml"),
        "[tool_output]\nredact_secrets = false\nflag_injection = false\n",
    )
    .unwrap();
    for i in 0..1000 {
        std::fs::write(root.join(format!("dir1000/entry-{i:04}.txt")), "x").unwrap();
    }
    let words = ["signal", "handler", "parser", "engine", "store", "router"];
    for i in 0..400 {
        let sub = root.join(format!("src/m{}/sub{}", i % 10, i % 7));
        std::fs::create_dir_all(&sub).unwrap();
        let name = format!("{}_{i}.rs", words[i % words.len()]);
        std::fs::write(sub.join(name), "fn main() {}\n").unwrap();
    }
    Fixture {
        data: base.join("data"),
        _dir: dir,
        root,
    }
}

fn toolgate(f: &Fixture) -> Command {
    // `BENCH_TOOLGATE=PATH` measures another build (an older commit's) with this bench.
    let bin = std::env::var_os("BENCH_TOOLGATE").map_or_else(
        || PathBuf::from(env!("CARGO_BIN_EXE_toolgate")),
        PathBuf::from,
    );
    let mut cmd = Command::new(bin);
    cmd.args(["mcp", "--root"])
        .arg(&f.root)
        .args(["--mode", "accept-edits"])
        .env("TOOLGATE_DATA_DIR", &f.data)
        .env("TOOLGATE_MANAGED_CONFIG", f.data.join("none.toml"));
    cmd
}

fn reference(f: &Fixture, script: &Path) -> Command {
    let mut cmd = Command::new("node");
    cmd.arg(script).arg(&f.root);
    cmd
}

fn floor_server(f: &Fixture, with_log: bool) -> Command {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.arg(floor::FLAG).arg(&f.root);
    if with_log {
        cmd.arg("--log").arg(f.data.join("floor"));
    }
    cmd
}

/// What the output checks (secret redaction, injection flags) add to a
/// `read` of 4 KB of source over MCP: two toolgate servers, one with the
/// checks off (`--config` with `[tool_output]`), alternating call by call.
fn output_checks_cost(f: &Fixture, calls: usize) {
    let mut off = toolgate(f);
    off.arg("--config").arg(f.data.join("checks-off.toml"));
    let mut servers = [
        Server::spawn("toolgate, checks on", toolgate(f)),
        Server::spawn("toolgate, checks off", off),
    ];
    let args = json!({"path": "source4k.rs"});
    for s in &mut servers {
        s.initialize();
        for _ in 0..20 {
            s.call("read", args.clone());
        }
    }
    let cpu0: Vec<Duration> = servers.iter().map(Server::cpu).collect();
    for _ in 0..calls {
        for s in &mut servers {
            s.call("read", args.clone());
        }
    }
    let per_call: Vec<f64> = servers
        .iter()
        .zip(cpu0)
        .map(|(s, c0)| micros(s.cpu().saturating_sub(c0)) / calls as f64)
        .collect();
    println!(
        "\noutput checks, read of 4 KB of source: toolgate CPU per call {:.0} µs with them, {:.0} µs without ({:+.1} %)",
        per_call[0],
        per_call[1],
        (per_call[0] / per_call[1] - 1.0) * 100.0
    );
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

struct OpStats {
    latencies: Vec<Duration>,
    cpu: Duration,
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(at) = args.iter().position(|a| a == floor::FLAG) {
        floor::serve(&args[at + 1..]);
        return;
    }
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(
        "../../bench-data/peers/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js",
    );
    if !script.exists() {
        eprintln!("reference server missing: run scripts/setup-bench-peers.sh first");
        std::process::exit(1);
    }
    let calls: usize = std::env::var("BENCH_CALLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(500);
    let f = fixture();
    let root = f.root.display().to_string();
    let content4k = "y".repeat(4095) + "\n";

    // Cold start, alternating.
    let mut cold = [Vec::new(), Vec::new()];
    for _ in 0..10 {
        for (i, cmd) in [toolgate(&f), reference(&f, &script)]
            .into_iter()
            .enumerate()
        {
            let t = Instant::now();
            let mut s = Server::spawn(if i == 0 { "toolgate" } else { "reference" }, cmd);
            let tools = s.initialize();
            cold[i].push(t.elapsed());
            assert!(tools["tools"].as_array().is_some_and(|a| !a.is_empty()));
        }
    }

    let mut servers = [
        Server::spawn("toolgate", toolgate(&f)),
        Server::spawn("reference", reference(&f, &script)),
        Server::spawn("floor", floor_server(&f, false)),
        Server::spawn("floor+log", floor_server(&f, true)),
    ];
    for s in &mut servers {
        s.initialize();
    }
    type Op = (&'static str, [(&'static str, Value); 2]);
    let ops: Vec<Op> = vec![
        (
            "read 4 KB",
            [
                ("read", json!({"path": "file4k.txt"})),
                (
                    "read_text_file",
                    json!({"path": format!("{root}/file4k.txt")}),
                ),
            ],
        ),
        (
            "list 1,000 entries",
            [
                ("list", json!({"path": "dir1000"})),
                ("list_directory", json!({"path": format!("{root}/dir1000")})),
            ],
        ),
        (
            "name search **/*signal*.rs",
            [
                ("glob", json!({"pattern": "**/*signal*.rs"})),
                (
                    "search_files",
                    json!({"path": root, "pattern": "**/*signal*.rs"}),
                ),
            ],
        ),
        (
            "write 4 KB",
            [
                (
                    "write",
                    json!({"path": "out/written.txt", "content": content4k}),
                ),
                (
                    "write_file",
                    json!({"path": format!("{root}/out/written2.txt"), "content": content4k}),
                ),
            ],
        ),
    ];
    std::fs::create_dir_all(f.root.join("out")).unwrap();
    println!("calls per operation: {calls}; alternating servers call by call\n");
    println!(
        "{:<28} {:>10} {:>10} {:>12} | {:>10} {:>10} {:>12} | {:>8}",
        "operation",
        "tg p50 µs",
        "tg p99 µs",
        "tg CPU µs",
        "ref p50",
        "ref p99",
        "ref CPU µs",
        "CPU ratio"
    );
    let mut floors = Vec::new();
    for (label, variants) in &ops {
        // Warm up both.
        for (i, s) in servers.iter_mut().enumerate() {
            for _ in 0..5 {
                // Server 1 is the reference; the floor servers take toolgate's calls.
                let (tool, args) = &variants[usize::from(i == 1)];
                s.call(tool, args.clone());
            }
        }
        let mut stats: Vec<OpStats> = (0..servers.len())
            .map(|_| OpStats {
                latencies: Vec::new(),
                cpu: Duration::ZERO,
            })
            .collect();
        // CPU is read over the whole loop: a server is idle while another works.
        let cpu0: Vec<Duration> = servers.iter().map(Server::cpu).collect();
        for _ in 0..calls {
            for (i, s) in servers.iter_mut().enumerate() {
                let (tool, args) = &variants[usize::from(i == 1)];
                let t = Instant::now();
                s.call(tool, args.clone());
                stats[i].latencies.push(t.elapsed());
            }
        }
        for (i, s) in servers.iter().enumerate() {
            stats[i].cpu = s.cpu().saturating_sub(cpu0[i]);
        }
        let mut row = Vec::new();
        for st in &mut stats {
            st.latencies.sort();
            row.push((
                micros(percentile(&st.latencies, 0.5)),
                micros(percentile(&st.latencies, 0.99)),
                micros(st.cpu) / calls as f64,
            ));
        }
        let ratio = if row[0].2 > 0.0 {
            row[1].2 / row[0].2
        } else {
            f64::INFINITY
        };
        println!(
            "{label:<28} {:>10.0} {:>10.0} {:>12.0} | {:>10.0} {:>10.0} {:>12.0} | {:>7.1}x",
            row[0].0, row[0].1, row[0].2, row[1].0, row[1].1, row[1].2, ratio
        );
        floors.push((*label, row[1].2, row[2].2, row[3].2));
    }
    // Throughput with several calls outstanding on the one connection, as an
    // agent that runs tool calls in parallel sends them. Alternating in rounds.
    const IN_FLIGHT: usize = 8;
    const ROUNDS: usize = 5;
    let per_round = calls.div_ceil(ROUNDS).max(IN_FLIGHT);
    let read_variants = &ops[0].1;
    let mut wall = [Duration::ZERO; 2];
    let mut flight_cpu = [Duration::ZERO; 2];
    for (i, s) in servers[..2].iter_mut().enumerate() {
        let (tool, args) = &read_variants[i];
        s.call_in_flight(tool, args, IN_FLIGHT * 4, IN_FLIGHT);
    }
    for _ in 0..ROUNDS {
        for (i, s) in servers[..2].iter_mut().enumerate() {
            let (tool, args) = &read_variants[i];
            let cpu0 = s.cpu();
            wall[i] += s.call_in_flight(tool, args, per_round, IN_FLIGHT);
            flight_cpu[i] += s.cpu().saturating_sub(cpu0);
        }
    }
    let total = (per_round * ROUNDS) as f64;
    let rate = |i: usize| total / wall[i].as_secs_f64();
    println!(
        "{:<28} {:>10.0} {:>10} {:>12.0} | {:>10.0} {:>10} {:>12.0} | {:>7.1}x",
        format!("read 4 KB, {IN_FLIGHT} in flight"),
        rate(0),
        "calls/s",
        micros(flight_cpu[0]) / total,
        rate(1),
        "calls/s",
        micros(flight_cpu[1]) / total,
        rate(0) / rate(1)
    );
    println!(
        "  ({IN_FLIGHT} requests outstanding on one stdio connection, {} calls each in {ROUNDS} alternating rounds; the ratio is toolgate's calls/s over the reference's)",
        per_round * ROUNDS
    );
    println!(
        "\nfloor: the same calls on a blocking std server (no SDK, no policy), without and with toolgate's audit log"
    );
    println!(
        "{:<28} {:>12} {:>12} {:>14} | {:>12} {:>14}",
        "operation",
        "floor CPU µs",
        "ref / floor",
        "floor+log CPU",
        "ref / f+log",
        "1/10 of ref µs"
    );
    for (label, reference, bare, logged) in floors {
        println!(
            "{label:<28} {bare:>12.0} {:>11.1}x {logged:>14.0} | {:>11.1}x {:>14.0}",
            reference / bare,
            reference / logged,
            reference / 10.0
        );
    }
    output_checks_cost(&f, calls);
    let med = |v: &mut Vec<Duration>| {
        v.sort();
        micros(percentile(v, 0.5)) / 1000.0
    };
    println!(
        "\ncold start to first tools/list (median of 10): toolgate {:.1} ms, reference {:.1} ms",
        med(&mut cold[0]),
        med(&mut cold[1])
    );
    println!(
        "peak RSS: toolgate {:.1} MiB, reference {:.1} MiB",
        servers[0].peak_rss_kib() as f64 / 1024.0,
        servers[1].peak_rss_kib() as f64 / 1024.0
    );
}
