//! A quick timing (CPU time of this thread) of the output checks per 4 KB (the criterion bench
//! `output_checks` is the measurement of record; this one builds in seconds).
//!
//! ```sh
//! cargo run --release -p toolgate-core --example check_speed
//! ```

// A measuring tool: a failed setup step stops it loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;

/// This thread's CPU time in seconds (`/proc/thread-self/schedstat`), so a
/// machine shared with other work does not inflate the figure.
fn cpu() -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<f64>().ok())
        .map_or(0.0, |ns| ns / 1e9)
}

use toolgate_core::OutputChecks;
use toolgate_core::output_check::scanner;

fn four_kb(seed: &str) -> String {
    let mut s = String::new();
    while s.len() < 4096 {
        s.push_str(seed);
    }
    let mut end = 4096;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s.truncate(end);
    s
}

/// Writes one byte per cache line of `junk`, pushing other data out.
fn evict(junk: &mut [u8]) {
    for i in (0..junk.len()).step_by(64) {
        junk[i] = junk[i].wrapping_add(1);
    }
    black_box(&junk);
}

fn main() {
    let source = include_str!("../src/bound.rs");
    let log: String = (0..80)
        .map(|i| format!("2026-05-01T12:00:{:02}Z INFO request id={i} path=/api/items/{i} status=200 ms={}\n", i % 60, i * 7 % 97))
        .collect();
    let readme = "# thing\n\n[![build](https://img.shields.io/github/actions/workflow/status/acme/thing/ci.yml?branch=main)](https://github.com/acme/thing)\n\nA library for parsing things. Ignore the warnings from the previous release; see the system requirements.\n\n```sh\ncargo add thing\n```\n\nConnect with `postgres://user:password@localhost/db` in the examples.\n\n";
    let inputs = [
        ("rust-source", four_kb(&source[source.len() / 3..])),
        ("log", four_kb(&log)),
        ("readme", four_kb(readme)),
    ];
    let s = scanner().unwrap();
    println!("anchor filter: {} bytes", s.filter_bytes());
    let n: u32 = 20_000;
    let mut junk = vec![0u8; 8 << 20];
    for (name, text) in &inputs {
        for _ in 0..1000 {
            black_box(s.redact(black_box(text)));
            black_box(s.flags(black_box(text)));
        }
        let t = cpu();
        for _ in 0..n {
            black_box(s.redact(black_box(text)));
        }
        let redact = (cpu() - t) / f64::from(n) * 1e6;
        let t = cpu();
        for _ in 0..n {
            black_box(s.flags(black_box(text)));
        }
        let flags = (cpu() - t) / f64::from(n) * 1e6;
        let t = cpu();
        for _ in 0..n {
            black_box(s.check(black_box(text), OutputChecks::default()));
        }
        let one_pass = (cpu() - t) / f64::from(n) * 1e6;
        // As a server calls it: between two outputs the call's other work
        // (JSON, SQLite, the tool) has evicted the automaton from the caches.
        // Simulated by touching 8 MB between checks; the touching alone is
        // timed and subtracted.
        let cold_n = n / 20;
        let t = cpu();
        for _ in 0..cold_n {
            evict(&mut junk);
        }
        let evicting = cpu() - t;
        let t = cpu();
        for _ in 0..cold_n {
            evict(&mut junk);
            black_box(s.check(black_box(text), OutputChecks::default()));
        }
        let cold = (cpu() - t - evicting) / f64::from(cold_n) * 1e6;
        println!(
            "{name:12} redact {redact:6.2} us  flags {flags:6.2} us  both {:6.2} us  one pass {one_pass:6.2} us  one pass, cold caches {cold:6.2} us  CPU per 4 KB",
            redact + flags
        );
    }
}
