//! The cost of the output checks per 4 KB of tool output: secret redaction and
//! injection flags, separately and together through `bound_checked` (the
//! budget is 20 µs per 4 KB).
//!
//! ```sh
//! cargo bench -p toolgate-core --bench output_checks
//! ```
//!
//! Inputs: 4 KB pieces of this crate's own source (ordinary code), a build and
//! server log, a markdown README, and a log with three secrets in it.

// A failed setup step should stop a bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use toolgate_core::output_check::scanner;
use toolgate_core::{
    Content, OutputBounds, OutputChecks, OutputStore, SpillError, ToolOutput, bound_checked,
};

const SIZE: usize = 4096;

fn four_kb(seed: &str) -> String {
    let mut s = String::with_capacity(SIZE + seed.len());
    while s.len() < SIZE {
        s.push_str(seed);
    }
    let mut end = SIZE;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s.truncate(end);
    s
}

fn inputs() -> Vec<(&'static str, String)> {
    let source = include_str!("../src/bound.rs");
    let log = (0..80)
        .map(|i| {
            format!(
                "2026-05-01T12:00:{:02}Z INFO request id={i} path=/api/items/{i} status=200 ms={}\n",
                i % 60,
                i * 7 % 97
            )
        })
        .collect::<String>();
    let readme = "# thing\n\n[![build](https://img.shields.io/github/actions/workflow/status/acme/thing/ci.yml?branch=main)](https://github.com/acme/thing)\n\nA library for parsing things. Ignore the warnings from the previous release; see the system requirements.\n\n```sh\ncargo add thing\n```\n\nConnect with `postgres://user:password@localhost/db` in the examples.\n\n";
    let secrets = format!(
        "{}export GITHUB_TOKEN=ghp_R8dKq2LmX9vTz4NcB7wYp1sHf6Gj3Ue0Ai5o\nDATABASE_URL=postgres://app:Wq7rT2zLp9@db.internal/app\nAWS_ACCESS_KEY_ID=AKIAQ3RZ7MNV5TWK2B4Y\n",
        &log[..3000]
    );
    vec![
        ("rust-source", four_kb(&source[source.len() / 3..])),
        ("log", four_kb(&log)),
        ("readme", four_kb(readme)),
        ("log-with-3-secrets", four_kb(&secrets)),
    ]
}

struct NoSpill;

impl OutputStore for NoSpill {
    fn spill(&self, _: &str, _: &str) -> Result<std::path::PathBuf, SpillError> {
        Ok("/dev/null".into())
    }
}

fn bench(c: &mut Criterion) {
    let s = scanner().unwrap();
    let mut group = c.benchmark_group("output_checks_4k");
    for (name, text) in inputs() {
        group.bench_function(format!("redact/{name}"), |b| {
            b.iter(|| black_box(s.redact(black_box(&text))))
        });
        group.bench_function(format!("one_pass/{name}"), |b| {
            b.iter(|| black_box(s.check(black_box(&text), OutputChecks::default())))
        });
        group.bench_function(format!("flags/{name}"), |b| {
            b.iter(|| black_box(s.flags(black_box(&text))))
        });
        let output = ToolOutput {
            structured: serde_json::json!({"stdout": text}),
            content: vec![Content::text(text.clone())],
            exit_status: Some(0),
        };
        group.bench_function(format!("bound_checked/{name}"), |b| {
            b.iter(|| {
                black_box(bound_checked(
                    output.clone(),
                    OutputBounds::default(),
                    OutputChecks::default(),
                    &NoSpill,
                    "c",
                ))
            })
        });
        group.bench_function(format!("bound_unchecked/{name}"), |b| {
            b.iter(|| {
                black_box(bound_checked(
                    output.clone(),
                    OutputBounds::default(),
                    OutputChecks::NONE,
                    &NoSpill,
                    "c",
                ))
            })
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(std::time::Duration::from_millis(500))
        .measurement_time(std::time::Duration::from_secs(2));
    targets = bench
}
criterion_main!(benches);
