//! Decision time: a 100-character command and a 1 KB script, with 10, 1,000 and
//! 10,000 rules. Criterion measures the means; a custom loop afterwards times
//! many individual decisions and prints p50 and p99.
//!
//! A decision is the whole gate path: shell analysis, raising, rule lookup and
//! the decision tree (`check::judge_call`). `judge-only` isolates the rule lookup.
//!
//! Run: `cargo bench -p toolgate-policy --bench decide`

use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion};
use toolgate_core::{Location, PermissionRequest, Risk};
use toolgate_policy::check::judge_call;
use toolgate_policy::policy::{NoApprovals, Policy};
use toolgate_policy::rules::Layer;

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

struct Case {
    name: &'static str,
    command: String,
}

fn main() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(dir.path().join("crates/core/src")).expect("mkdir");
    let location = Location::new(dir.path()).expect("location");
    let home = Path::new("/home/bench");
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
        PermissionRequest::new("bash", cmd, Risk::Execute)
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
    c.final_summary();

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
}
