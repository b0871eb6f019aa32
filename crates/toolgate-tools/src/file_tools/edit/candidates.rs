//! The "closest candidate" hint for an `edit` whose old_string is not found.
//!
//! The hint is for the model to retry with the right text; it is never applied.

use std::time::{Duration, Instant};

/// Time spent looking for a near match before giving the best found so far.
const SEARCH_BUDGET: Duration = Duration::from_millis(300);

/// The error text for an old_string that does not occur in `body`.
pub fn not_found_message(display: &str, body: &str, old: &str) -> String {
    let mut msg = format!("old_string was not found in {display}.");
    let file_lines: Vec<&str> = body.lines().collect();
    let want: Vec<&str> = old.lines().collect();
    if file_lines.is_empty() || want.is_empty() {
        return msg;
    }
    let wanted_squashed = squash_lines(&want);
    let n = want.len().min(file_lines.len());
    let mut best: Option<(f32, usize)> = None;
    let started = Instant::now();
    for start in 0..=(file_lines.len() - n) {
        let window = &file_lines[start..start + n];
        let squashed = squash_lines(window);
        if squashed == wanted_squashed {
            best = Some((1.0, start));
            break;
        }
        if started.elapsed() > SEARCH_BUDGET {
            continue;
        }
        let ratio = similar::TextDiff::configure()
            .timeout(Duration::from_millis(10))
            .diff_chars(wanted_squashed.as_str(), squashed.as_str())
            .ratio();
        if best.is_none_or(|(r, _)| ratio > r) {
            best = Some((ratio, start));
        }
    }
    let Some((ratio, start)) = best else {
        return msg;
    };
    if ratio < 0.5 {
        msg.push_str(" No similar lines were found; read the file to see its current content.");
        return msg;
    }
    let what = if ratio >= 1.0 {
        "these lines match when whitespace is ignored".to_string()
    } else {
        format!(
            "the closest lines ({:.0}% similar, ignoring whitespace)",
            ratio * 100.0
        )
    };
    msg.push_str(&format!(
        " Hint only, nothing was changed — {what}, lines {}-{}:\n",
        start + 1,
        start + n
    ));
    for (i, line) in file_lines[start..start + n].iter().enumerate() {
        msg.push_str(&format!("{:>6}\t{line}\n", start + 1 + i));
    }
    msg.push_str("Use the exact text of the file in old_string.");
    msg
}

/// Lines with whitespace runs collapsed to one space and trimmed, joined by `\n`.
fn squash_lines(lines: &[&str]) -> String {
    lines
        .iter()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect::<Vec<_>>()
        .join("\n")
}
