//! Decision time: a 100-character command and a 1 KB script, with 10, 1,000 and
//! 10,000 rules. Criterion measures the means; a custom loop afterwards times
//! many individual decisions and prints p50 and p99.
//!
//! A decision is the whole gate path: shell analysis, raising, rule lookup and
//! the decision tree (`check::judge_call`). `judge-only` isolates the rule lookup;
//! `analyze-only` compares the plain-line reader with the full grammar.
//! `adversarial` decides inputs built to make the work blow up: a glob that
//! makes a backtracking matcher exponential (`ls long/*a*a…*a*b` next to a
//! 40-character name of `a`s).
//!
//! Last, when the binaries are there, the wall time of whole processes: one
//! `toolgate check` (what an agent hook pays) and one `codex execpolicy check`
//! with an equivalent rules file, on the same command, interleaved so both see
//! the same machine load. `toolgate` is looked up next to this bench binary
//! (`cargo build --release -p toolgate` first) or in `TOOLGATE_BIN`; codex in
//! `CODEX_BIN` or where `benches/install-codex.sh` puts it.
//!
//! The decisions run under the `toolgate` binary's allocator, the system's
//! (glibc), or under mimalloc with `TOOLGATE_BENCH_ALLOCATOR=mimalloc`: the
//! first line printed says which.
//!
//! Run: `cargo build --release -p toolgate && cargo bench -p toolgate-policy --bench decide`

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion};
use toolgate_core::{Location, PermissionRequest, Risk};
use toolgate_policy::check::judge_call;
use toolgate_policy::policy::{NoApprovals, Policy};
use toolgate_policy::repo_config::{GitInvocation, ProcessEnv, inspect};
use toolgate_policy::rules::Layer;
use toolgate_policy::shell::{ShellContext, analyze, analyze_with_grammar};
use toolgate_policy::test_util::wait_until_settled;

const COMMAND_100: &str =
    "git log --oneline -n 20 -- src/lib.rs | grep -v fixup && cargo test -p core --lib -- --quiet";

fn script_1k() -> String {
    let s = r#"#!/bin/sh
set -eu
cd crates/core
for f in src/*.rs; do
  if grep -q "TODO" "$f"; then
    echo "todo in $f" >> todo.txt
  fi
done
cargo fmt --check && cargo clippy --all-targets -- -D warnings
cargo test -p toolgate-core --lib -- --test-threads=2 2>&1 | tee test.log
ls -la target/debug | head -n 20
git status --short && git diff --stat HEAD~1
find . -name '*.orig' -type f | xargs -r wc -l
while read -r line; do echo "line: $line"; done < todo.txt
case "${CI:-no}" in
  yes) echo "running in CI" ;;
  *) echo "local run" ;;
esac
npm run build --if-present && npm test -- --watch=false
python3 -m pytest -q tests/unit || echo "pytest failed"
sort todo.txt | uniq -c | sort -rn | head -n 5 > summary.txt
cat summary.txt; wc -c summary.txt; du -sh target 2>/dev/null || true
mkdir -p out && cp summary.txt out/ && tar -czf out.tgz out
echo "done: $(date +%s)"
"#;
    s.to_string()
}

/// A config of `n` rules in the shapes people write: command prefixes, exact
/// commands, inner wildcards, and path rules.
fn config(n: usize) -> String {
    let mut bash = String::from("[permission.bash]\n\"*\" = \"ask\"\n");
    let mut edit = String::from("[permission.edit]\n");
    for i in 0..n.saturating_sub(1) {
        match i % 10 {
            0..=5 => bash.push_str(&format!("\"tool{i} sub{} *\" = \"allow\"\n", i % 7)),
            6 => bash.push_str(&format!("\"tool{i} --flag{i}\" = \"deny\"\n")),
            7 => bash.push_str(&format!("\"tool{i} * --x{i} *\" = \"ask\"\n")),
            8 => edit.push_str(&format!("\"dir{i}/**\" = \"allow\"\n")),
            _ => edit.push_str(&format!("\"**/*.ext{i}\" = \"deny\"\n")),
        }
    }
    // The rules that actually decide the benchmark commands, last.
    bash.push_str(
        "\"git log *\" = \"allow\"\n\"grep *\" = \"allow\"\n\"cargo test *\" = \"allow\"\n",
    );
    format!("{bash}\n{edit}")
}

/// The allocator, chosen once from `TOOLGATE_BENCH_ALLOCATOR` at the first
/// allocation and never changed after (what one allocates, the same frees).
mod allocator {
    use std::alloc::{GlobalAlloc, Layout, System};
    use std::sync::atomic::{AtomicU8, Ordering};

    const UNSET: u8 = 0;
    const MIMALLOC: u8 = 1;
    const SYSTEM: u8 = 2;

    pub struct Switch(AtomicU8);

    #[global_allocator]
    pub static ALLOCATOR: Switch = Switch(AtomicU8::new(UNSET));

    impl Switch {
        fn system(&self) -> bool {
            let mut chosen = self.0.load(Ordering::Relaxed);
            if chosen == UNSET {
                // getenv allocates nothing, so it may be asked from here.
                // SAFETY: a NUL-terminated name; the value is only read.
                let value = unsafe { libc::getenv(c"TOOLGATE_BENCH_ALLOCATOR".as_ptr()) };
                // SAFETY: getenv's answer is null or a NUL-terminated string.
                let mimalloc = !value.is_null()
                    && unsafe { std::ffi::CStr::from_ptr(value) }.to_bytes() == b"mimalloc";
                chosen = if mimalloc { MIMALLOC } else { SYSTEM };
                self.0.store(chosen, Ordering::Relaxed);
            }
            chosen == SYSTEM
        }

        fn chosen(&self) -> &'static dyn GlobalAlloc {
            if self.system() {
                &System
            } else {
                &mimalloc::MiMalloc
            }
        }

        pub fn name(&self) -> &'static str {
            if self.system() {
                "system (glibc, the toolgate binary's)"
            } else {
                "mimalloc"
            }
        }
    }

    // SAFETY: every call goes to one of two allocators, the same one for the
    // whole process (chosen before the first allocation), with the caller's
    // promises passed on unchanged.
    unsafe impl GlobalAlloc for Switch {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            unsafe { self.chosen().alloc(layout) }
        }
        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            unsafe { self.chosen().dealloc(ptr, layout) }
        }
        unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
            unsafe { self.chosen().alloc_zeroed(layout) }
        }
        unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
            unsafe { self.chosen().realloc(ptr, layout, new_size) }
        }
    }
}

/// Waits until `dir` and each directory above it have settled
/// ([`wait_until_settled`]). The gate's process-wide caches (directories
/// without a repository, listings) take only settled stamps, so the first
/// decisions in a directory just made (or below one just changed, such as
/// `/tmp` when a temporary directory is made in it) look at it afresh; the
/// benchmark measures the steady state, with every directory made before it.
fn settle(dir: &Path) {
    for d in dir.ancestors() {
        wait_until_settled(d);
    }
}

struct Case {
    name: &'static str,
    command: String,
}

fn main() {
    eprintln!("allocator: {}", allocator::ALLOCATOR.name());
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(dir.path().join("crates/core/src")).expect("mkdir");
    let location = Location::new(dir.path()).expect("location");
    let home = Path::new("/home/bench");
    // For the git-config check of `git status`, below: made now, with every
    // other directory, so that nothing changes while decisions are timed.
    // The git-config check for `git status` in a fresh `git init` repository:
    // discovery, stat of every config file, parsed files from the cache.
    let repo_dir = tempfile::tempdir().expect("tempdir");
    let repo_ok = Command::new("git")
        .args(["init", "-q"])
        .current_dir(repo_dir.path())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", repo_dir.path())
        .status()
        .is_ok_and(|s| s.success());
    // For the adversarial glob, below: a 40-character name of `a`s.
    let long = location.root().join("long");
    std::fs::create_dir_all(&long).expect("mkdir");
    std::fs::write(long.join("a".repeat(40)), "x").expect("write");
    settle(&long);
    settle(repo_dir.path());
    let cases = [
        Case {
            name: "command-100B",
            command: COMMAND_100.to_string(),
        },
        Case {
            name: "script-1KB",
            command: script_1k(),
        },
    ];
    let sizes = [10usize, 1_000, 10_000];
    let policies: Vec<(usize, Policy)> = sizes
        .iter()
        .map(|&n| {
            let text = config(n);
            let started = Instant::now();
            let p = Policy::from_texts(
                location.root(),
                home,
                &[("bench.toml", Layer::Project, &text)],
                None,
            )
            .expect("policy");
            eprintln!("compiled {n} rules in {:?}", started.elapsed());
            (n, p)
        })
        .collect();
    let request = |cmd: &str| {
        PermissionRequest::command("bash", cmd, Risk::Execute)
            .with_cwd(location.root().display().to_string())
    };

    let mut c = Criterion::default()
        .configure_from_args()
        .measurement_time(Duration::from_secs(3))
        .warm_up_time(Duration::from_secs(1));
    {
        let mut group = c.benchmark_group("decide");
        for case in &cases {
            for (n, policy) in &policies {
                group.bench_with_input(BenchmarkId::new(case.name, n), &case.command, |b, cmd| {
                    b.iter(|| {
                        black_box(judge_call(
                            policy,
                            vec![request(cmd)],
                            &location,
                            &NoApprovals,
                        ))
                    })
                });
            }
        }
        group.finish();
    }
    {
        // The rule lookup alone, on the parts the analyser produced.
        let mut group = c.benchmark_group("judge-only");
        for (n, policy) in &policies {
            let parts: Vec<PermissionRequest> =
                judge_call(policy, vec![request(COMMAND_100)], &location, &NoApprovals)
                    .into_iter()
                    .map(|j| j.expanded.request)
                    .collect();
            group.bench_with_input(
                BenchmarkId::new("command-100B-parts", n),
                &parts,
                |b, parts| {
                    b.iter(|| {
                        for p in parts {
                            black_box(policy.judge(p, false, None, &location, &NoApprovals));
                        }
                    })
                },
            );
        }
        group.finish();
    }
    {
        // The shell analysis alone: the plain-line reader and the grammar.
        let mut group = c.benchmark_group("analyze-only");
        let ctx = ShellContext {
            location: &location,
            cwd: location.root().to_path_buf(),
            home: home.to_path_buf(),
            inherited_env: true,
        };
        group.bench_function("command-100B/plain-reader", |b| {
            b.iter(|| black_box(analyze(COMMAND_100, &ctx)))
        });
        group.bench_function("command-100B/grammar", |b| {
            b.iter(|| black_box(analyze_with_grammar(COMMAND_100, &ctx)))
        });
        group.finish();
    }
    let repo_location = Location::new(repo_dir.path()).expect("location");
    let git_status = GitInvocation {
        global_args: Vec::new(),
        assignments: Vec::new(),
        process_env: ProcessEnv::fixed([("HOME", "/home/bench")]),
        ..GitInvocation::new(repo_location.root(), home)
    };
    let status_request = || {
        PermissionRequest::command("bash", "git status", Risk::Execute)
            .with_cwd(repo_location.root().display().to_string())
    };
    if repo_ok {
        let mut group = c.benchmark_group("repo-config");
        let policy = &policies[0].1;
        group.bench_function("git-status/decide", |b| {
            b.iter(|| {
                black_box(judge_call(
                    policy,
                    vec![status_request()],
                    &repo_location,
                    &NoApprovals,
                ))
            })
        });
        group.bench_function("git-status/inspect", |b| {
            b.iter(|| black_box(inspect(&git_status, &repo_location)))
        });
        group.bench_function("git-status/decide+inspect", |b| {
            b.iter(|| {
                black_box(inspect(&git_status, &repo_location));
                black_box(judge_call(
                    policy,
                    vec![status_request()],
                    &repo_location,
                    &NoApprovals,
                ))
            })
        });
        group.finish();
    } else {
        eprintln!("repo-config benchmarks skipped: `git init` failed");
    }
    {
        // Inputs built to blow the work up; each must cost about what an
        // ordinary command does.
        let mut group = c.benchmark_group("adversarial");
        let policy = &policies[0].1;
        for stars in [12usize, 24] {
            let command = format!("ls long/{}b", "*a".repeat(stars));
            group.bench_with_input(
                BenchmarkId::new("backtracking-glob", stars),
                &command,
                |b, cmd| {
                    b.iter(|| {
                        black_box(judge_call(
                            policy,
                            vec![request(cmd)],
                            &location,
                            &NoApprovals,
                        ))
                    })
                },
            );
        }
        group.finish();
    }
    c.final_summary();
    if std::env::args().any(|a| a == "--profile-time") {
        // Profiling one benchmark: nothing else may run in the profile.
        return;
    }

    // p50 / p99 over individual decisions.
    println!("\npercentiles over 20000 individual decisions (after 2000 warm-up):");
    println!(
        "{:<14} {:>7} {:>10} {:>10} {:>10}",
        "case", "rules", "p50", "p99", "max"
    );
    for case in &cases {
        for (n, policy) in &policies {
            let mut samples = Vec::with_capacity(20_000);
            for i in 0..22_000 {
                let req = request(&case.command);
                let t = Instant::now();
                black_box(judge_call(policy, vec![req], &location, &NoApprovals));
                if i >= 2_000 {
                    samples.push(t.elapsed());
                }
            }
            samples.sort_unstable();
            let pct = |p: f64| samples[((samples.len() as f64 - 1.0) * p) as usize];
            println!(
                "{:<14} {:>7} {:>10.1?} {:>10.1?} {:>10.1?}",
                case.name,
                n,
                pct(0.50),
                pct(0.99),
                samples[samples.len() - 1]
            );
        }
    }
    if repo_ok {
        let policy = &policies[0].1;
        let time = |what: &str, f: &mut dyn FnMut()| {
            let mut samples = Vec::with_capacity(20_000);
            for i in 0..22_000 {
                let t = Instant::now();
                f();
                if i >= 2_000 {
                    samples.push(t.elapsed());
                }
            }
            samples.sort_unstable();
            let pct = |p: f64| samples[((samples.len() as f64 - 1.0) * p) as usize];
            println!(
                "{what:<26} {:>10.1?} {:>10.1?} {:>10.1?}",
                pct(0.50),
                pct(0.99),
                samples[samples.len() - 1]
            );
        };
        println!("\n`git status`, 10 rules (p50, p99, max):");
        time("decide", &mut || {
            black_box(judge_call(
                policy,
                vec![status_request()],
                &repo_location,
                &NoApprovals,
            ));
        });
        time("repo_config::inspect", &mut || {
            black_box(inspect(&git_status, &repo_location));
        });
        time("decide + inspect", &mut || {
            black_box(inspect(&git_status, &repo_location));
            black_box(judge_call(
                policy,
                vec![status_request()],
                &repo_location,
                &NoApprovals,
            ));
        });
    }
    processes(&sizes);
}

/// The equivalent of [`config`] for `codex execpolicy`: prefix rules only, so
/// inner wildcards become a prefix and path rules become command prefixes,
/// keeping the count at `n`.
fn codex_rules(n: usize) -> String {
    let mut out = String::new();
    let rule = |out: &mut String, words: &[&str], decision: &str| {
        let list: Vec<String> = words.iter().map(|w| format!("\"{w}\"")).collect();
        out.push_str(&format!(
            "prefix_rule(pattern = [{}], decision = \"{decision}\")\n",
            list.join(", ")
        ));
    };
    for i in 0..n.saturating_sub(3) {
        let tool = format!("tool{i}");
        match i % 10 {
            0..=5 => rule(&mut out, &[&tool, &format!("sub{}", i % 7)], "allow"),
            6 => rule(&mut out, &[&tool, &format!("--flag{i}")], "forbidden"),
            7 => rule(&mut out, &[&tool], "prompt"),
            _ => rule(&mut out, &[&format!("cmd{i}")], "allow"),
        }
    }
    rule(&mut out, &["git", "log"], "allow");
    rule(&mut out, &["grep"], "allow");
    rule(&mut out, &["cargo", "test"], "allow");
    out
}

/// `toolgate`: `TOOLGATE_BIN`, or next to the bench's own directory
/// (`target/release/deps/decide-…` → `target/release/toolgate`).
fn toolgate_binary() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("TOOLGATE_BIN") {
        return Some(PathBuf::from(p));
    }
    let exe = std::env::current_exe().ok()?;
    let release = exe.parent()?.parent()?;
    Some(release.join("toolgate")).filter(|p| p.is_file())
}

/// `codex`: `CODEX_BIN`, or under `target/codex` where `install-codex.sh` puts it.
fn codex_binary() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("CODEX_BIN") {
        return Some(PathBuf::from(p));
    }
    let exe = std::env::current_exe().ok()?;
    let vendor = exe
        .parent()?
        .parent()?
        .parent()?
        .join("codex/node_modules/@openai/codex-linux-x64/vendor");
    let triple = std::fs::read_dir(vendor).ok()?.flatten().next()?;
    Some(triple.path().join("bin/codex")).filter(|p| p.is_file())
}

struct Timings(Vec<Duration>);

impl Timings {
    fn line(&mut self, what: &str) -> Duration {
        self.0.sort_unstable();
        let n = self.0.len();
        let mean = self.0.iter().sum::<Duration>() / n as u32;
        let pct = |p: f64| self.0[((n as f64 - 1.0) * p) as usize];
        println!(
            "{what:<34} {:>9.2?} {:>9.2?} {:>9.2?} {:>9.2?}",
            mean,
            pct(0.5),
            pct(0.99),
            self.0[0]
        );
        mean
    }
}

fn time_process(cmd: &mut Command) -> Duration {
    let t = Instant::now();
    let out = cmd.output().expect("spawn");
    let took = t.elapsed();
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    took
}

/// Wall time of whole `toolgate check` and `codex execpolicy check` processes.
fn processes(sizes: &[usize]) {
    const RUNS: usize = 200;
    let Some(toolgate) = toolgate_binary() else {
        println!(
            "\nprocess timings skipped: build `cargo build --release -p toolgate` (or set TOOLGATE_BIN)"
        );
        return;
    };
    let codex = codex_binary();
    if codex.is_none() {
        println!("\ncodex timings skipped: run benches/install-codex.sh (or set CODEX_BIN)");
    }
    let scratch = tempfile::tempdir().expect("tempdir");
    let home = scratch.path().join("home");
    let data = scratch.path().join("data");
    std::fs::create_dir_all(&home).expect("mkdir");
    // The first simple command of COMMAND_100: codex judges one argv, not a line.
    let simple: Vec<&str> = "git log --oneline -n 20 -- src/lib.rs".split(' ').collect();
    println!(
        "\nprocess wall time over {RUNS} runs each (interleaved; toolgate at {}):",
        toolgate.display()
    );
    println!(
        "{:<34} {:>9} {:>9} {:>9} {:>9}",
        "process", "mean", "p50", "p99", "min"
    );
    for &n in sizes {
        let ws = scratch.path().join(format!("ws{n}"));
        std::fs::create_dir_all(ws.join(".toolgate")).expect("mkdir");
        std::fs::create_dir_all(ws.join("src")).expect("mkdir");
        std::fs::write(ws.join(".toolgate/config.toml"), config(n)).expect("write");
        let rules = scratch.path().join(format!("rules{n}.codexpolicy"));
        std::fs::write(&rules, codex_rules(n)).expect("write");
        let check = |command: &str| {
            let mut c = Command::new(&toolgate);
            c.args(["check", "bash"])
                .arg(serde_json::json!({ "command": command }).to_string())
                .arg("--root")
                .arg(&ws)
                .arg("--json")
                .env("HOME", &home)
                .env("TOOLGATE_DATA_DIR", &data)
                .env(
                    "TOOLGATE_MANAGED_CONFIG",
                    scratch.path().join("no-managed.toml"),
                )
                .env_remove("TOOLGATE_LOG");
            c
        };
        let codex_check = |bin: &Path| {
            let mut c = Command::new(bin);
            c.args(["execpolicy", "check", "--rules"])
                .arg(&rules)
                .args(&simple)
                .env("HOME", &home)
                .env("CODEX_HOME", home.join(".codex"));
            c
        };
        let mut full = Timings(Vec::new());
        let mut one = Timings(Vec::new());
        let mut theirs = Timings(Vec::new());
        for i in 0..RUNS + 10 {
            let a = time_process(&mut check(COMMAND_100));
            let b = time_process(&mut check(&simple.join(" ")));
            let c = codex
                .as_deref()
                .map(|bin| time_process(&mut codex_check(bin)));
            if i >= 10 {
                full.0.push(a);
                one.0.push(b);
                theirs.0.extend(c);
            }
        }
        full.line(&format!("toolgate check, 100B line, {n}"));
        let ours = one.line(&format!("toolgate check, git log, {n}"));
        if !theirs.0.is_empty() {
            let codex_mean = theirs.line(&format!("codex execpolicy, git log, {n}"));
            println!(
                "{:<34} {:>9.2}",
                "  ratio toolgate / codex (means)",
                ours.as_secs_f64() / codex_mean.as_secs_f64()
            );
        }
    }
}
