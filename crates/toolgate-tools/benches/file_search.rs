//! grep and glob against ripgrep, side by side, plus apply_patch of 50 files.
//!
//! Setup: `scripts/bench-tree.sh` (builds bench-data/large, a `cargo vendor` tree
//! of pinned popular crates, and bench-data/small, its first 1,000 files) and
//! `cargo install ripgrep --locked` (rg on PATH, or set RG=/path/to/rg).
//! Run: `cargo bench -p toolgate-tools --bench file_search`; with
//! `INTERLEAVE=N`, grep runs alternately against rg N times instead (medians).
//!
//! Both sides do the same work: a parallel walk honouring .gitignore with
//! hidden files included and `.git` skipped (`rg --hidden --no-require-git
//! -g '!.git'`), binary files skipped, every matching line found. rg's stdout
//! is a pipe read to the end (with /dev/null rg would stop at the first match).
//! Our side runs the tools in-process; the rg side spawns rg each iteration,
//! which is what a tool would have to do to use it.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use tokio_util::sync::CancellationToken;
use toolgate_core::{CallIdentity, Location, Tool, ToolContext};
use toolgate_tools::file_tools::{
    ApplyPatchInput, ApplyPatchTool, FileState, FileToolsConfig, GlobInput, GlobTool, GrepInput,
    GrepTool,
};

/// (name, regex, case-insensitive)
const QUERIES: &[(&str, &str, bool)] = &[
    ("literal", "PhantomData", false),
    ("alternation", r"fn (new|default|from_str)\(", false),
    ("case_insensitive_word", r"\berror\b", true),
];

fn data_dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../bench-data")
        .join(name)
}

fn rg() -> String {
    std::env::var("RG").unwrap_or_else(|_| "rg".into())
}

/// Spawns rg with `args` in `dir`, reads its stdout to the end, returns the
/// number of lines it printed.
fn run_rg(dir: &Path, args: &[&str]) -> usize {
    let mut child = Command::new(rg())
        .args(["--hidden", "--no-require-git", "-g", "!.git"])
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn rg (cargo install ripgrep --locked)");
    let mut out = Vec::new();
    child
        .stdout
        .take()
        .expect("rg stdout")
        .read_to_end(&mut out)
        .expect("read rg output");
    child.wait().expect("wait for rg");
    memchr::memchr_iter(b'\n', &out).count()
}

struct Ours {
    rt: tokio::runtime::Runtime,
    state: Arc<FileState>,
    location: Arc<Location>,
}

impl Ours {
    fn new(dir: &Path) -> Ours {
        Ours {
            rt: tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .enable_all()
                .build()
                .expect("runtime"),
            state: FileState::new(FileToolsConfig::default()),
            location: Arc::new(Location::new(dir).expect("location")),
        }
    }

    fn ctx(&self) -> ToolContext {
        ToolContext::new(
            CallIdentity::default(),
            Arc::clone(&self.location),
            CancellationToken::new(),
        )
    }

    fn grep(&self, pattern: &str, case_insensitive: bool) -> usize {
        let input = GrepInput {
            pattern: pattern.into(),
            path: None,
            include: None,
            case_insensitive: Some(case_insensitive),
            context: None,
        };
        let tool = GrepTool::new(Arc::clone(&self.state));
        self.rt
            .block_on(tool.execute(input, self.ctx()))
            .expect("grep")
            .total_matches
    }

    fn glob(&self, pattern: &str) -> usize {
        let input = GlobInput {
            pattern: pattern.into(),
            path: None,
        };
        let tool = GlobTool::new(Arc::clone(&self.state));
        self.rt
            .block_on(tool.execute(input, self.ctx()))
            .expect("glob")
            .total
    }
}

fn tree_benches(c: &mut Criterion, tree: &str) {
    let dir = data_dir(tree);
    if !dir.is_dir() {
        eprintln!("skipping {tree}: run scripts/bench-tree.sh first");
        return;
    }
    let ours = Ours::new(&dir);
    let mut group = c.benchmark_group(format!("search_{tree}"));
    group.sample_size(10).warm_up_time(Duration::from_secs(1));
    for (name, pattern, ci) in QUERIES {
        let mut rg_args = vec!["-n"];
        if *ci {
            rg_args.push("-i");
        }
        rg_args.push(pattern);
        // The same answer on both sides, shown once before timing.
        eprintln!(
            "{tree}/{name}: toolgate {} matching lines, rg {}",
            ours.grep(pattern, *ci),
            run_rg(&dir, &rg_args)
        );
        group.bench_function(format!("grep_{name}/toolgate"), |b| {
            b.iter(|| ours.grep(pattern, *ci))
        });
        group.bench_function(format!("grep_{name}/rg"), |b| {
            b.iter(|| run_rg(&dir, &rg_args))
        });
    }
    eprintln!(
        "{tree}/glob: toolgate {} files, rg {}",
        ours.glob("**/*.rs"),
        run_rg(&dir, &["--files", "-g", "**/*.rs"])
    );
    group.bench_function("glob_rs/toolgate", |b| b.iter(|| ours.glob("**/*.rs")));
    group.bench_function("glob_rs/rg", |b| {
        b.iter(|| run_rg(&dir, &["--files", "-g", "**/*.rs"]))
    });
    // Like for like: our glob sorts by modification time, which needs a stat per
    // file; rg does the same with --sortr modified (single-threaded then).
    group.bench_function("glob_rs/rg_sorted_by_mtime", |b| {
        b.iter(|| run_rg(&dir, &["--files", "-g", "**/*.rs", "--sortr", "modified"]))
    });
    group.finish();
}

/// Ours and rg alternately, `rounds` times each, so load drift on a shared
/// machine hits both sides alike; prints medians and their ratio.
fn interleaved(tree: &str, rounds: usize) {
    let dir = data_dir(tree);
    if !dir.is_dir() {
        return;
    }
    let ours = Ours::new(&dir);
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    for (name, pattern, ci) in QUERIES {
        let mut rg_args = vec!["-n"];
        if *ci {
            rg_args.push("-i");
        }
        rg_args.push(pattern);
        // rg given the absolute root, as our tools walk it (longer path lookups).
        let abs = dir.canonicalize().expect("canonical tree path");
        let mut rg_abs_args = rg_args.clone();
        rg_abs_args.push(abs.to_str().expect("UTF-8 path"));
        let (mut a, mut b, mut c) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..rounds {
            let t = Instant::now();
            ours.grep(pattern, *ci);
            a.push(t.elapsed().as_secs_f64());
            let t = Instant::now();
            run_rg(&dir, &rg_args);
            b.push(t.elapsed().as_secs_f64());
            let t = Instant::now();
            run_rg(&dir, &rg_abs_args);
            c.push(t.elapsed().as_secs_f64());
        }
        let (a, b, c) = (median(a), median(b), median(c));
        eprintln!(
            "interleaved {tree}/grep_{name}: toolgate {:.1} ms, rg {:.1} ms (ratio {:.2}), \
             rg on the absolute path {:.1} ms (ratio {:.2})",
            a * 1e3,
            b * 1e3,
            a / b,
            c * 1e3,
            a / c
        );
    }
}

fn search(c: &mut Criterion) {
    if let Some(rounds) = std::env::var("INTERLEAVE")
        .ok()
        .and_then(|r| r.parse().ok())
    {
        interleaved("large", rounds);
        interleaved("small", rounds);
        return;
    }
    tree_benches(c, "large");
    tree_benches(c, "small");
}

/// A workspace of 50 files and a patch changing two hunks in each.
fn patch_fixture() -> (tempfile::TempDir, Vec<(PathBuf, String)>, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut files = Vec::new();
    let mut patch = String::from("*** Begin Patch\n");
    for i in 0..50 {
        let body: String = (0..200)
            .map(|l| format!("    let value_{l} = compute({i}, {l});\n"))
            .collect();
        let path = dir.path().join(format!("src/m{i}.rs"));
        files.push((path, body));
        patch.push_str(&format!(
            "*** Update File: src/m{i}.rs\n@@\n     let value_10 = compute({i}, 10);\n-    let value_11 = compute({i}, 11);\n+    let value_11 = compute({i}, 11) + 1;\n     let value_12 = compute({i}, 12);\n@@\n     let value_150 = compute({i}, 150);\n-    let value_151 = compute({i}, 151);\n+    let value_151 = 0;\n"
        ));
    }
    patch.push_str("*** End Patch\n");
    (dir, files, patch)
}

fn apply_patch(c: &mut Criterion) {
    let (dir, files, patch) = patch_fixture();
    std::fs::create_dir_all(dir.path().join("src")).expect("mkdir");
    let location = Arc::new(Location::new(dir.path()).expect("location"));
    let state = FileState::new(FileToolsConfig::default());
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    let mut group = c.benchmark_group("apply_patch");
    group.sample_size(20);
    group.bench_function("50_files", |b| {
        b.iter_batched(
            || {
                for (p, body) in &files {
                    std::fs::write(p, body).expect("reset file");
                }
            },
            |()| {
                let tool = ApplyPatchTool::new(Arc::clone(&state));
                let ctx = ToolContext::new(
                    CallIdentity::default(),
                    Arc::clone(&location),
                    CancellationToken::new(),
                );
                let out = rt
                    .block_on(tool.execute(
                        ApplyPatchInput {
                            patch: patch.clone(),
                        },
                        ctx,
                    ))
                    .expect("apply_patch");
                assert_eq!(out.files.len(), 50);
            },
            BatchSize::PerIteration,
        )
    });
    group.finish();
}

criterion_group!(benches, search, apply_patch);
criterion_main!(benches);
