//! CPU per call of the `read` and `write` tools, as the pipeline runs them:
//! the handler decodes the input and computes the intent (`prepare`), then
//! runs the tool (`run`) on a current-thread runtime, so all the work happens
//! on the measuring thread and its CPU time is the cost of one call.
//!
//! `read_4kb_bounded/*` adds the bounding step every output passes (where
//! secrets are redacted and injection cues flagged), with the output checks
//! off and on, so the two figures of one run give what the checks cost a call.
//!
//! Run: `cargo bench -p toolgate-tools --bench file_io`.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use nix::time::{ClockId, clock_gettime};
use serde_json::json;
use tokio_util::sync::CancellationToken;
use toolgate_core::{
    CallIdentity, Location, OutputBounds, OutputChecks, OutputStore, SpillError, ToolContext,
    ToolHandler, bound_checked, handler,
};
use toolgate_tools::file_tools::{FileState, FileToolsConfig, ReadTool, WriteTool};

fn thread_cpu() -> Duration {
    let t = clock_gettime(ClockId::CLOCK_THREAD_CPUTIME_ID).expect("thread CPU clock");
    Duration::new(t.tv_sec() as u64, t.tv_nsec() as u32)
}

/// A store that is never written: no 4 KB read is truncated or redacted.
struct NoSpill;

impl OutputStore for NoSpill {
    fn spill(&self, _: &str, _: &str) -> Result<std::path::PathBuf, SpillError> {
        Ok("/dev/null".into())
    }
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(dir.path().join("src/deep")).expect("mkdir");
    let text: String = (0..200)
        .map(|i| format!("line {i} of a source file\n"))
        .collect();
    std::fs::write(dir.path().join("src/deep/a.rs"), &text).expect("write");
    let location = Arc::new(Location::new(dir.path()).expect("location"));
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    let state = FileState::new(FileToolsConfig::default());
    let read: Arc<dyn ToolHandler> = handler(ReadTool::new(Arc::clone(&state))).expect("read");
    let write: Arc<dyn ToolHandler> = handler(WriteTool::new(state)).expect("write");
    let ctx = || {
        ToolContext::new(
            CallIdentity::default(),
            Arc::clone(&location),
            CancellationToken::new(),
        )
    };
    let mut group = c.benchmark_group("file_io_cpu");
    group.measurement_time(Duration::from_secs(5));
    let read_input = json!({"path": "src/deep/a.rs"});
    group.bench_function("read_200_lines", |b| {
        b.iter_custom(|n| {
            let start = thread_cpu();
            for _ in 0..n {
                let call = read.prepare(&read_input, &location).expect("prepare");
                rt.block_on(call.run(ctx())).expect("read");
            }
            thread_cpu() - start
        })
    });
    // 4 KB of ordinary source, as a model reads it.
    let source = include_str!("../src/file_tools.rs");
    let mut end = 4096.min(source.len());
    while !source.is_char_boundary(end) {
        end -= 1;
    }
    std::fs::write(dir.path().join("src/deep/four.rs"), &source[..end]).expect("write");
    let four_input = json!({"path": "src/deep/four.rs"});
    for (name, checks) in [
        ("checks_off", OutputChecks::NONE),
        ("checks_on", OutputChecks::default()),
    ] {
        group.bench_function(format!("read_4kb_bounded/{name}"), |b| {
            b.iter_custom(|n| {
                let start = thread_cpu();
                for i in 0..n {
                    let call = read.prepare(&four_input, &location).expect("prepare");
                    let out = rt.block_on(call.run(ctx())).expect("read");
                    let call_id = i.to_string();
                    let bounded =
                        bound_checked(out, OutputBounds::default(), checks, &NoSpill, &call_id)
                            .expect("bound");
                    std::hint::black_box(bounded);
                }
                thread_cpu() - start
            })
        });
    }
    let write_input = json!({"path": "src/deep/b.rs", "content": text});
    group.bench_function("write_5kb", |b| {
        b.iter_custom(|n| {
            let start = thread_cpu();
            for _ in 0..n {
                let call = write.prepare(&write_input, &location).expect("prepare");
                rt.block_on(call.run(ctx())).expect("write");
            }
            thread_cpu() - start
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
