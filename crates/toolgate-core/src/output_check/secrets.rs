//! Finding secret content in text: the anchors of
//! [`SECRET_FORMATS`] and the PEM header, then each candidate confirmed by its
//! row's pattern at that place.

use regex::Regex;

use super::CheckError;
use super::secret_formats::{HTTP_AUTHORIZATION_KIND, PEM_KIND, SECRET_FORMATS, SecretFormat};

/// One secret found: the byte range to redact and its kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SecretSpan {
    /// The format's kind.
    pub kind: &'static str,
    /// First byte redacted.
    pub start: usize,
    /// One past the last byte redacted.
    pub end: usize,
}

/// The compiled table.
#[derive(Debug)]
pub(crate) struct SecretScanner {
    /// The anchor literals, by pattern id (the last is the PEM header).
    literals: Vec<&'static str>,
    /// Per anchor pattern id: the rows it belongs to (`None`: the PEM header).
    anchor_rows: Vec<Vec<usize>>,
    /// Per row: the pattern, anchored at the anchor when `before == 0`.
    patterns: Vec<Regex>,
    /// Per row: whether the pattern has a group (only the group is redacted).
    grouped: Vec<bool>,
    pem_header: Regex,
    pem_body: Regex,
}

/// The PEM header anchor.
const PEM_ANCHOR: &str = "-----BEGIN ";
/// How far after a PEM header its END line is looked for.
const PEM_MAX_BODY: usize = 16 * 1024;
/// Fewest base64 characters in a row that make a PEM body (a bare header in a
/// parser's source is not a key).
const PEM_MIN_RUN: usize = 32;

impl SecretScanner {
    pub(crate) fn new() -> Result<Self, CheckError> {
        let mut literals: Vec<&'static str> = Vec::new();
        let mut anchor_rows: Vec<Vec<usize>> = Vec::new();
        for (row, format) in SECRET_FORMATS.iter().enumerate() {
            for anchor in format.anchors {
                match literals.iter().position(|l| l == anchor) {
                    Some(i) => anchor_rows[i].push(row),
                    None => {
                        literals.push(anchor);
                        anchor_rows.push(vec![row]);
                    }
                }
            }
        }
        literals.push(PEM_ANCHOR);
        anchor_rows.push(Vec::new());
        let patterns = SECRET_FORMATS
            .iter()
            .map(|f| {
                let source = if f.before == 0 {
                    format!(r"\A(?:{})", f.pattern)
                } else {
                    f.pattern.to_string()
                };
                Regex::new(&source).map_err(|e| CheckError::Build(format!("{}: {e}", f.kind)))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let grouped = patterns.iter().map(|re| re.captures_len() > 1).collect();
        let pem_header = Regex::new(r"\A-----BEGIN (?:[A-Z0-9]+ ){0,3}PRIVATE KEY(?: BLOCK)?-----")
            .map_err(|e| CheckError::Build(format!("pem header: {e}")))?;
        // A body without its END line (the output was cut): line breaks (real
        // or escaped as in JSON), each followed by a base64 line or an RFC
        // 1421 header; or, where the line breaks were turned into spaces,
        // base64 words long enough not to be prose.
        let pem_body = Regex::new(
            r"\A(?:(?:\r?\n|\\r\\n|\\n)[ \t]*(?:[A-Za-z0-9+/=]+|(?:Proc-Type|DEK-Info|Comment|Version|Hash):[^\r\n\\]*)?|[ \t]+[A-Za-z0-9+/=]{20,})+",
        )
        .map_err(|e| CheckError::Build(format!("pem body: {e}")))?;
        Ok(SecretScanner {
            literals,
            anchor_rows,
            patterns,
            grouped,
            pem_header,
            pem_body,
        })
    }

    /// The anchor literals, by anchor id: matched exactly (case-sensitive).
    pub(crate) fn literals(&self) -> &[&'static str] {
        &self.literals
    }

    /// Every secret in `text`, given the anchors found in it as (start,
    /// anchor id), leftmost-longest and not overlapping, in order.
    pub(crate) fn find_from(
        &self,
        text: &str,
        anchors: impl Iterator<Item = (usize, usize)>,
    ) -> Vec<SecretSpan> {
        let mut found: Vec<SecretSpan> = Vec::new();
        let mut covered = 0usize;
        for (at, anchor) in anchors {
            let rows = &self.anchor_rows[anchor];
            let span = |s: &Self| {
                if rows.is_empty() {
                    s.pem(text, at)
                } else {
                    rows.iter()
                        .find_map(|&row| s.row_at(text, at, row, &SECRET_FORMATS[row]))
                }
            };
            if at < covered {
                // A credential found only by the header that carries it
                // (`Authorization: Bearer …`) gives way to a format that
                // knows the token itself and covers all of it, so the
                // redaction names what the token is.
                let Some(last) = found.last_mut() else {
                    continue;
                };
                if last.kind != HTTP_AUTHORIZATION_KIND || at < last.start {
                    continue;
                }
                if let Some(inner) = span(self) {
                    if inner.start <= last.start && inner.end >= last.end {
                        covered = covered.max(inner.end);
                        *last = inner;
                    }
                }
                continue;
            }
            if let Some(span) = span(self) {
                if span.start < covered {
                    continue;
                }
                covered = span.end.max(at + 1);
                found.push(span);
            }
        }
        found
    }

    /// Row `row` matched around the anchor at `at`, when it does.
    fn row_at(
        &self,
        text: &str,
        at: usize,
        row: usize,
        format: &SecretFormat,
    ) -> Option<SecretSpan> {
        let bytes = text.as_bytes();
        let grouped = self.grouped[row];
        // Cheap refusals before any pattern runs: a prefix inside a longer
        // word or identifier (`TASK…`, `disk-…`, `the_ghp_…`; a row that
        // names its context, as `AccountKey=…`, may follow `_`), an anchor
        // in the middle of a token with nothing before it, and a URL
        // without a password.
        if format.before == 0 && at > 0 {
            let prev = bytes[at - 1];
            if is_word_byte(prev) || (!grouped && prev == b'_') {
                return None;
            }
        }
        if format.before > 0 && (at == 0 || !is_word_byte(bytes[at - 1])) {
            return None;
        }
        if format.kind == CONNECTION_KIND {
            // The password, found by looking, before any pattern runs: most
            // URLs have none, and most that do in prose are stand-ins.
            let password = userinfo_password(&bytes[at + 3..])?;
            let value = &text[at + 3 + password.0..at + 3 + password.1];
            if is_placeholder(format.kind, value) {
                return None;
            }
        }
        // One byte past the longest match, to see what follows it.
        let window_end = ceil_char(text, (at + format.max_len + 1).min(text.len()));
        let re = &self.patterns[row];
        let part = if format.before == 0 {
            let hay = &text[at..window_end];
            if grouped {
                let caps = re.captures(hay)?;
                let part = caps.get(1).or_else(|| caps.get(0))?;
                (at + part.start(), at + part.end())
            } else {
                let m = re.find(hay)?;
                (at + m.start(), at + m.end())
            }
        } else {
            let window_start = floor_char(text, at.saturating_sub(format.before));
            let window = &text[window_start..window_end];
            let m = re
                .find_iter(window)
                .find(|m| window_start + m.start() <= at && at < window_start + m.end())?;
            let whole = (window_start + m.start(), window_start + m.end());
            let part = if grouped {
                let caps = re.captures(&text[whole.0..whole.1])?;
                let g = caps.get(1)?;
                (whole.0 + g.start(), whole.0 + g.end())
            } else {
                whole
            };
            // A token inside a longer word is not the token.
            if whole.0 > 0 && is_word_byte(bytes[whole.0 - 1]) {
                return None;
            }
            part
        };
        if part.1 < bytes.len() && is_word_byte(bytes[part.1]) {
            return None;
        }
        let value = &text[part.0..part.1];
        if is_placeholder(format.kind, value) {
            return None;
        }
        Some(SecretSpan {
            kind: format.kind,
            start: part.0,
            end: part.1,
        })
    }

    /// A PEM private-key block whose header starts at `at`: the body between
    /// the header and the END line (or, when the END line is missing, the run
    /// of base64 lines after the header).
    fn pem(&self, text: &str, at: usize) -> Option<SecretSpan> {
        let header = self.pem_header.find(&text[at..])?;
        let body_start = at + header.end();
        let limit = ceil_char(text, (body_start + PEM_MAX_BODY).min(text.len()));
        let rest = &text[body_start..limit];
        let body_end = match rest.find("-----END ") {
            Some(i) if !rest[..i].contains(PEM_ANCHOR) => body_start + i,
            _ => body_start + self.pem_body.find(rest).map_or(0, |m| m.end()),
        };
        if longest_base64_run(&text[body_start..body_end]) < PEM_MIN_RUN {
            return None;
        }
        Some(SecretSpan {
            kind: PEM_KIND,
            start: body_start,
            end: body_end,
        })
    }
}

/// The kind of the connection-string row, which a cheap look decides first.
const CONNECTION_KIND: &str = "connection-string-password";

/// Where the password of a `user:password@` part is in what follows a
/// `://`: after the first `:` and before the `@`, when the `@` comes before
/// the authority ends.
fn userinfo_password(rest: &[u8]) -> Option<(usize, usize)> {
    let mut colon = None;
    for (i, &b) in rest.iter().enumerate().take(400) {
        match b {
            b':' if colon.is_none() => colon = Some(i + 1),
            b'@' => return colon.map(|c| (c, i)),
            b'/' | b'?' | b'#' | b' ' | b'\t' | b'\n' | b'\r' | b'"' | b'\'' | b'<' | b'>'
            | b'`' => {
                return None;
            }
            _ => {}
        }
    }
    None
}

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric()
}

fn longest_base64_run(s: &str) -> usize {
    let mut best = 0;
    let mut run = 0;
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b == b'+' || b == b'/' {
            run += 1;
            best = best.max(run);
        } else {
            run = 0;
        }
    }
    best
}

fn floor_char(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_char(s: &str, mut i: usize) -> usize {
    while i < s.len() && !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

/// Words that stand for a password in documentation and examples.
const PLACEHOLDER_WORDS: &[&str] = &[
    "pass", "passwd", "password", "pwd", "pw", "secret", "changeme", "example", "xxx", "redacted",
    "hunter2", "foobar", "token", "apikey", "api_key", "mask", "masked", "hidden",
];

/// Substrings that mark a value as an example rather than a secret.
const PLACEHOLDER_PARTS: &[&str] = &[
    "password", "passwd", "example", "changeme", "secret", "redacted",
];

/// Whether `value`, matched as `kind`, is a stand-in rather than a secret:
/// a template variable, a run of one character, a documented example (AWS's
/// `…EXAMPLE` keys), or, for a connection string, a word that means "password".
fn is_placeholder(kind: &str, value: &str) -> bool {
    let first = value.chars().next();
    if matches!(first, Some('$' | '%' | '<' | '{' | '*' | '[' | '(')) || value.contains("{{") {
        return true;
    }
    if let Some(c) = first {
        if value.chars().all(|x| x == c) {
            return true;
        }
    }
    let distinct = {
        let mut seen = [false; 256];
        let mut n = 0;
        for b in value.bytes() {
            if !seen[usize::from(b)] {
                seen[usize::from(b)] = true;
                n += 1;
            }
        }
        n
    };
    if kind == "connection-string-password" {
        let lower = value.to_ascii_lowercase();
        return PLACEHOLDER_WORDS.contains(&lower.as_str())
            || PLACEHOLDER_PARTS.iter().any(|p| lower.contains(p))
            || lower.starts_with("your")
            // Too short to be a password, or a port in a URL-confusion
            // string (`http://localhost:3000@evil.test`).
            || value.len() < 4
            || (value.len() <= 5 && value.bytes().all(|b| b.is_ascii_digit()));
    }
    // A real token's random part uses many symbols; `ghp_xxxx…` or
    // `AKIA0000…` in documentation does not.
    distinct < 8 || value.contains("EXAMPLE")
}
