//! Finding a hunk's lines in a file, at increasing levels of leniency.

use schemars::JsonSchema;
use serde::Serialize;

/// How leniently a hunk had to be matched, least lenient first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MatchLevel {
    /// Byte for byte.
    Exact,
    /// Ignoring trailing whitespace.
    TrailingWhitespace,
    /// Ignoring leading and trailing whitespace.
    Whitespace,
    /// Ignoring surrounding whitespace, with Unicode dashes, quotes and spaces
    /// read as their ASCII counterparts.
    Unicode,
}

impl MatchLevel {
    const ALL: [MatchLevel; 4] = [
        MatchLevel::Exact,
        MatchLevel::TrailingWhitespace,
        MatchLevel::Whitespace,
        MatchLevel::Unicode,
    ];

    fn same(self, a: &str, b: &str) -> bool {
        match self {
            MatchLevel::Exact => a == b,
            MatchLevel::TrailingWhitespace => a.trim_end() == b.trim_end(),
            MatchLevel::Whitespace => a.trim() == b.trim(),
            MatchLevel::Unicode => a
                .trim()
                .chars()
                .map(ascii_like)
                .eq(b.trim().chars().map(ascii_like)),
        }
    }
}

/// The ASCII character a typographic one stands for.
fn ascii_like(c: char) -> char {
    match c {
        '\u{2010}' | '\u{2011}' | '\u{2012}' | '\u{2013}' | '\u{2014}' | '\u{2015}'
        | '\u{2212}' => '-',
        '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' | '\u{2032}' => '\'',
        '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' | '\u{2033}' => '"',
        '\u{00A0}' | '\u{2002}' | '\u{2003}' | '\u{2007}' | '\u{2009}' | '\u{202F}' => ' ',
        other => other,
    }
}

/// Finds `pattern` in `lines` at or after `from`. With `at_end`, a match ending at
/// the last line is preferred. Each level is tried over the whole range before
/// the next, more lenient, one.
pub fn find<S: AsRef<str>>(
    lines: &[S],
    pattern: &[&str],
    from: usize,
    at_end: bool,
) -> Option<(usize, MatchLevel)> {
    if pattern.len() > lines.len() {
        return None;
    }
    let last_start = lines.len() - pattern.len();
    for level in MatchLevel::ALL {
        let matches_at = |start: usize| {
            pattern
                .iter()
                .zip(&lines[start..start + pattern.len()])
                .all(|(p, l)| level.same(l.as_ref(), p))
        };
        if at_end && last_start >= from && matches_at(last_start) {
            return Some((last_start, level));
        }
        if let Some(start) = (from..=last_start).find(|&s| matches_at(s)) {
            return Some((start, level));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_in_order() {
        let file = ["fn a() {", "    let x = 1;   ", "}"];
        assert_eq!(
            find(&file, &["fn a() {"], 0, false),
            Some((0, MatchLevel::Exact))
        );
        assert_eq!(
            find(&file, &["    let x = 1;"], 0, false),
            Some((1, MatchLevel::TrailingWhitespace))
        );
        assert_eq!(
            find(&file, &["let x = 1;"], 0, false),
            Some((1, MatchLevel::Whitespace))
        );
        let quotes = ["say(\u{201C}hi\u{201D}) \u{2014} ok"];
        assert_eq!(
            find(&quotes, &["say(\"hi\") - ok"], 0, false),
            Some((0, MatchLevel::Unicode))
        );
        assert_eq!(find(&file, &["nothing"], 0, false), None);
    }

    #[test]
    fn respects_start_and_end_preference() {
        let file = ["x", "y", "x"];
        assert_eq!(find(&file, &["x"], 1, false), Some((2, MatchLevel::Exact)));
        assert_eq!(find(&file, &["x"], 0, true), Some((2, MatchLevel::Exact)));
        assert_eq!(find(&file, &["x"], 0, false), Some((0, MatchLevel::Exact)));
    }
}
