//! Interleaved timing for the sandbox benches: each round runs every
//! variant of a command once (the unconfined command, the confined one, and
//! optionally the confined one under an older `toolgate` binary named by
//! `TOOLGATE_BENCH_BEFORE`), in an order that rotates from round to round,
//! so a burst of load from the other programs on the machine falls on all of
//! them alike. What a variant adds is judged per round (its time minus the
//! unconfined time of the same round) and summarised by the median over the
//! rounds, with the quartiles as the spread.

use std::time::{Duration, Instant};

/// One variant's times, one per round.
pub struct Series {
    /// The variant's name.
    pub name: String,
    /// Its time in each round.
    pub times: Vec<Duration>,
}

/// The `q` quantile (0..=1) of `v`, nearest rank.
pub fn quantile(mut v: Vec<f64>, q: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    v[((v.len() as f64 - 1.0) * q).round() as usize]
}

/// Runs `rounds` rounds of every variant; `run(variant, round)` runs one
/// and returns whether it succeeded (the bench stops if not). `prepare`
/// runs before each timed run, untimed.
pub fn rounds(
    names: &[&str],
    rounds: usize,
    mut prepare: impl FnMut(usize, usize),
    mut run: impl FnMut(usize, usize) -> bool,
) -> Vec<Series> {
    let mut out: Vec<Series> = names
        .iter()
        .map(|n| Series {
            name: (*n).to_string(),
            times: Vec::new(),
        })
        .collect();
    for round in 0..rounds {
        for k in 0..names.len() {
            let variant = (round + k) % names.len();
            prepare(variant, round);
            let t = Instant::now();
            assert!(run(variant, round), "{} failed", names[variant]);
            out[variant].times.push(t.elapsed());
        }
    }
    out
}

/// Prints, for each variant after the first (the unconfined baseline), the
/// median of what it adds per round and of its ratio to the baseline, with
/// the quartiles; and each variant's own median. Returns the medians of the
/// added milliseconds, one per variant after the first.
pub fn report(what: &str, series: &[Series]) -> Vec<f64> {
    let ms = |d: &Duration| d.as_secs_f64() * 1000.0;
    let base = &series[0];
    println!(
        "{what}: {} rounds, interleaved (load {})",
        base.times.len(),
        load()
    );
    let mut added = Vec::new();
    for s in series {
        let own: Vec<f64> = s.times.iter().map(ms).collect();
        print!(
            "  {:<22} median {:>9.2} ms  (p25 {:.2}, p75 {:.2})",
            s.name,
            quantile(own.clone(), 0.5),
            quantile(own.clone(), 0.25),
            quantile(own, 0.75)
        );
        if std::ptr::eq(s, base) {
            println!();
            continue;
        }
        let diff: Vec<f64> = s
            .times
            .iter()
            .zip(&base.times)
            .map(|(a, b)| ms(a) - ms(b))
            .collect();
        let ratio: Vec<f64> = s
            .times
            .iter()
            .zip(&base.times)
            .map(|(a, b)| a.as_secs_f64() / b.as_secs_f64())
            .collect();
        let d50 = quantile(diff.clone(), 0.5);
        println!(
            "  adds {:>8.2} ms (p25 {:.2}, p75 {:.2})  ratio {:.3}x (p25 {:.3}, p75 {:.3})",
            d50,
            quantile(diff.clone(), 0.25),
            quantile(diff, 0.75),
            quantile(ratio.clone(), 0.5),
            quantile(ratio.clone(), 0.25),
            quantile(ratio, 0.75)
        );
        added.push(d50);
    }
    added
}

/// The load averages, as `uptime` shows them.
pub fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

/// The variants' programs: this build's `toolgate`, and the older one named
/// by `TOOLGATE_BENCH_BEFORE` when set (to compare before and after in one
/// run).
pub fn toolgates() -> Vec<(String, String)> {
    let mut out = vec![(
        "confined".to_string(),
        env!("CARGO_BIN_EXE_toolgate").to_string(),
    )];
    if let Ok(before) = std::env::var("TOOLGATE_BENCH_BEFORE") {
        out.push(("confined (before)".to_string(), before));
    }
    out
}
