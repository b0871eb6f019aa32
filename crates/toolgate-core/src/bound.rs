//! Output bounding: the one place tool output is truncated (invariant 6).
//!
//! Tools return everything. [`bound`] measures the text the model would receive
//! (the structured output when there is no text); over the limit, the full text is
//! spilled through an [`OutputStore`] and the model gets a head and a tail around
//! one line naming the spill file. If the spill fails, the call fails.
//!
//! It is also where the output is checked ([`crate::output_check`]): secret
//! content is redacted from what the model receives (the spilled full text keeps
//! the original, and any output with a redaction is spilled), and
//! prompt-injection cues are flagged. Both are listed on the [`Bounded`].

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::content::{Content, ToolOutput};
use crate::output_check::{
    CheckError, Flag, OutputChecks, Redacted, Redaction, redact_value_with, scanner,
};

/// Default line limit.
pub const DEFAULT_MAX_LINES: usize = 2000;
/// Default byte limit (50 KiB).
pub const DEFAULT_MAX_BYTES: usize = 50 * 1024;
/// The largest media block passed through (5 MiB of decoded bytes).
pub const MAX_MEDIA_BYTES: usize = 5 * 1024 * 1024;

/// The limits, configurable as `[tool_output] max_lines, max_bytes`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutputBounds {
    /// Most lines the model receives.
    pub max_lines: usize,
    /// Most bytes the model receives.
    pub max_bytes: usize,
}

impl Default for OutputBounds {
    fn default() -> Self {
        OutputBounds {
            max_lines: DEFAULT_MAX_LINES,
            max_bytes: DEFAULT_MAX_BYTES,
        }
    }
}

/// Errors from spilling.
#[derive(Debug, thiserror::Error)]
#[error("could not save full tool output to {path}: {source}")]
pub struct SpillError {
    /// Where the spill was attempted.
    pub path: PathBuf,
    /// The OS error.
    pub source: std::io::Error,
}

/// Where full outputs are kept. Implemented by `toolgate-store` (files under the
/// data directory's `tool-output/`, swept after 7 days).
pub trait OutputStore: Send + Sync {
    /// Saves `text` in full and returns the file's path.
    fn spill(&self, call_id: &str, text: &str) -> Result<PathBuf, SpillError>;
}

/// Errors from bounding.
#[derive(Debug, thiserror::Error)]
pub enum BoundError {
    /// The full text could not be saved, so it cannot be truncated safely.
    #[error(transparent)]
    Spill(#[from] SpillError),
    /// A media block is over [`MAX_MEDIA_BYTES`].
    #[error("{mime_type} content is {bytes} bytes; the limit is {MAX_MEDIA_BYTES}")]
    MediaTooLarge {
        /// Its type.
        mime_type: String,
        /// Its decoded size.
        bytes: usize,
    },
    /// The output checks could not be built, so the output cannot be passed on
    /// safely.
    #[error(transparent)]
    Check(#[from] CheckError),
}

/// A bounded output, ready for the model.
#[derive(Clone, Debug, PartialEq)]
pub struct Bounded {
    /// The content the model receives.
    pub content: Vec<Content>,
    /// The structured output; shrunk (long strings cut, long arrays shortened)
    /// when the text was truncated.
    pub structured: Option<serde_json::Value>,
    /// Bytes of the full text measured.
    pub bytes_full: u64,
    /// Bytes of text the model receives.
    pub bytes_returned: u64,
    /// The spill file, when the output was truncated or redacted. It holds
    /// the full original text.
    pub spill_path: Option<PathBuf>,
    /// The secrets replaced in what the model receives.
    pub redactions: Vec<Redaction>,
    /// The prompt-injection cues seen in what the model receives.
    pub flags: Vec<Flag>,
}

/// Bounds `output` to `bounds`, spilling the full text to `store` when over,
/// with every output check on (see [`bound_checked`]).
///
/// ```
/// use toolgate_core::{bound, Content, OutputBounds, ToolOutput};
/// # struct NoSpill;
/// # impl toolgate_core::OutputStore for NoSpill {
/// #     fn spill(&self, _: &str, _: &str) -> Result<std::path::PathBuf, toolgate_core::SpillError> { unreachable!() }
/// # }
/// let out = ToolOutput { structured: serde_json::json!({}), content: vec![Content::text("hi")], exit_status: None };
/// let b = bound(out, OutputBounds::default(), &NoSpill, "call-1").unwrap();
/// assert_eq!(b.content, vec![Content::text("hi")]);
/// assert!(b.spill_path.is_none());
/// ```
pub fn bound(
    output: ToolOutput,
    bounds: OutputBounds,
    store: &dyn OutputStore,
    call_id: &str,
) -> Result<Bounded, BoundError> {
    bound_checked(output, bounds, OutputChecks::default(), store, call_id)
}

/// Bounds `output` to `bounds` after the output checks `checks`: secrets are
/// redacted from the content and the structured output (each listed with its
/// kind and line), injection cues are flagged, and the full original text is
/// spilled to `store` when the output is over the bounds or anything was
/// redacted.
///
/// ```
/// use toolgate_core::{bound_checked, Content, OutputBounds, OutputChecks, ToolOutput};
/// # struct Spill;
/// # impl toolgate_core::OutputStore for Spill {
/// #     fn spill(&self, _: &str, _: &str) -> Result<std::path::PathBuf, toolgate_core::SpillError> { Ok("/data/tool-output/c".into()) }
/// # }
/// let out = ToolOutput {
///     structured: serde_json::json!({}),
///     content: vec![Content::text("export NPM_TOKEN=npm_4fQz8Lr2Kc9Wx1Bv7Ns3Hd6Tj0Ym5Pa2Ge8R\n")],
///     exit_status: None,
/// };
/// let b = bound_checked(out, OutputBounds::default(), OutputChecks::default(), &Spill, "c").unwrap();
/// assert_eq!(b.content, vec![Content::text("export NPM_TOKEN=[REDACTED:npm-token]\n")]);
/// assert_eq!(b.redactions[0].kind, "npm-token");
/// assert!(b.spill_path.is_some()); // the original is kept there
/// ```
pub fn bound_checked(
    mut output: ToolOutput,
    bounds: OutputBounds,
    checks: OutputChecks,
    store: &dyn OutputStore,
    call_id: &str,
) -> Result<Bounded, BoundError> {
    for c in &output.content {
        if let Content::Image { data, mime_type } = c {
            let bytes = data.len() / 4 * 3;
            if bytes > MAX_MEDIA_BYTES {
                return Err(BoundError::MediaTooLarge {
                    mime_type: mime_type.clone(),
                    bytes,
                });
            }
        }
    }
    let from_structured = !output.content.iter().any(|c| c.as_text().is_some());
    let original = full_text(&output, from_structured);
    let bytes_full = original.len() as u64;
    let mut redactions = Vec::new();
    let mut flags = Vec::new();
    let mut full = None;
    if checks.redact_secrets || checks.flag_injection {
        let scanner = scanner()?;
        // One text block (the usual case) is the whole text: one pass over it
        // answers both checks.
        let mut texts = output.content.iter().filter_map(Content::as_text);
        let one_pass = match (texts.next(), texts.next()) {
            (Some(only), None) if !from_structured => Some(scanner.check(only, checks)),
            _ => None,
        };
        let (known_redaction, known_flags) = match one_pass {
            Some(c) => (Some(c.redacted), Some(c.flags)),
            None => (None, None),
        };
        if checks.redact_secrets {
            redact_output(scanner, &mut output, &mut redactions, known_redaction);
        }
        if !redactions.is_empty() {
            full = Some(full_text(&output, from_structured));
        }
        if checks.flag_injection {
            flags = match known_flags {
                Some(flags) => flags,
                None => scanner.flags(full.as_deref().unwrap_or(&original)),
            };
        }
    }
    let redacted = !redactions.is_empty();
    let full = full.unwrap_or(original.clone());
    if fits(&full, bounds) {
        let spill_path = if redacted {
            Some(store.spill(call_id, &original)?)
        } else {
            None
        };
        let bytes_returned = if from_structured {
            0
        } else {
            full.len() as u64
        };
        return Ok(Bounded {
            content: output.content,
            structured: Some(output.structured),
            bytes_full,
            bytes_returned,
            spill_path,
            redactions,
            flags,
        });
    }
    let path = store.spill(call_id, &original)?;
    let text = head_and_tail(&full, bounds, &path);
    let bytes_returned = text.len() as u64;
    let structured = shrink_structured(output.structured, bounds, &path);
    let mut content = vec![Content::text(text)];
    content.extend(
        output
            .content
            .into_iter()
            .filter(|c| matches!(c, Content::Image { .. })),
    );
    Ok(Bounded {
        content,
        structured: Some(structured),
        bytes_full,
        bytes_returned,
        spill_path: Some(path),
        redactions,
        flags,
    })
}

/// The text measured and spilled: the text blocks joined by line breaks, or
/// the structured output when there is no text.
fn full_text(output: &ToolOutput, from_structured: bool) -> String {
    if from_structured {
        serde_json::to_string_pretty(&output.structured).unwrap_or_default()
    } else {
        let texts: Vec<&str> = output.content.iter().filter_map(Content::as_text).collect();
        texts.join("\n")
    }
}

/// Redacts the text blocks (lines counted in the joined text) and every
/// string of the structured output (lines counted in the string, with its
/// pointer). `known` is the redaction of the only text block, when the
/// caller already has it.
fn redact_output(
    scanner: &crate::output_check::Scanner,
    output: &mut ToolOutput,
    redactions: &mut Vec<Redaction>,
    mut known: Option<Option<Redacted>>,
) {
    let mut line_offset = 0;
    // Each text block as it was, with its redaction: a structured string
    // equal to one (bash's stdout is often both) is not scanned twice. A
    // block with nothing redacted is still in `content` as it was, so only
    // a redacted block's original is kept aside (no copy of every output).
    let ToolOutput {
        content,
        structured,
        ..
    } = output;
    let mut seen: Vec<(usize, Option<(String, Redacted)>)> = Vec::new();
    for (i, c) in content.iter_mut().enumerate() {
        if let Content::Text { text } = c {
            let lines = text.bytes().filter(|&b| b == b'\n').count() + 1;
            let result = match known.take() {
                Some(result) => result,
                None => scanner.redact(text),
            };
            if let Some(r) = result {
                redactions.extend(r.found.iter().map(|(kind, line)| Redaction {
                    kind: (*kind).to_string(),
                    line: line + line_offset,
                    field: None,
                }));
                let original = std::mem::replace(text, r.text.clone());
                seen.push((i, Some((original, r))));
            } else {
                seen.push((i, None));
            }
            line_offset += lines;
        }
    }
    redact_across_blocks(scanner, content, redactions);
    let content = &*content;
    let redact = |s: &str| {
        let known = seen.iter().find_map(|(i, r)| match r {
            Some((original, r)) => (original == s).then(|| Some(r.clone())),
            None => content
                .get(*i)
                .and_then(Content::as_text)
                .is_some_and(|t| t == s)
                .then_some(None),
        });
        match known {
            Some(known) => known,
            None => scanner.redact(s),
        }
    };
    redact_value_with(&redact, structured, redactions);
}

/// A secret the model reads across consecutive text blocks, which each
/// passed the check alone (`token: ghp_aBcD` then `eFgH…`): each run of two
/// or more text blocks is scanned as it is read, joined, and every secret that
/// crosses a block's end is cut out of each block it touches (its marker where
/// it starts).
fn redact_across_blocks(
    scanner: &crate::output_check::Scanner,
    content: &mut [Content],
    redactions: &mut Vec<Redaction>,
) {
    let mut i = 0;
    while i < content.len() {
        let start = i;
        while i < content.len() && content[i].as_text().is_some() {
            i += 1;
        }
        if i == start {
            i += 1;
            continue;
        }
        if i - start < 2 {
            continue;
        }
        let run = &mut content[start..i];
        let mut joined = String::new();
        let mut ends = vec![0];
        for c in run.iter() {
            joined.push_str(c.as_text().unwrap_or(""));
            ends.push(joined.len());
        }
        let crossing: Vec<_> = scanner
            .find_secrets(&joined)
            .into_iter()
            .filter(|s| ends.iter().any(|&e| s.start < e && e < s.end))
            .collect();
        if crossing.is_empty() {
            continue;
        }
        let mut texts: Vec<String> = run
            .iter()
            .map(|c| c.as_text().unwrap_or("").to_string())
            .collect();
        // Right to left, so that earlier offsets in a block stay valid.
        for span in crossing.iter().rev() {
            for (k, w) in ends.windows(2).enumerate() {
                let (lo, hi) = (span.start.max(w[0]), span.end.min(w[1]));
                if lo >= hi {
                    continue;
                }
                let marker = if lo == span.start {
                    format!("[REDACTED:{}]", span.kind)
                } else {
                    String::new()
                };
                texts[k].replace_range(lo - w[0]..hi - w[0], &marker);
            }
            redactions.push(Redaction {
                kind: span.kind.to_string(),
                line: joined[..span.start].bytes().filter(|&b| b == b'\n').count() + 1,
                field: None,
            });
        }
        for (c, text) in run.iter_mut().zip(texts) {
            *c = Content::text(text);
        }
    }
}

/// The most array items kept in a shrunk structured output.
const MAX_ITEMS: usize = 200;

/// Shrinks a structured output that went with truncated text: long strings are
/// cut (with the spill marker) and long arrays shortened until the whole fits in
/// twice the byte budget. Types are kept, so it usually still matches the output
/// schema; the pipeline checks, and drops it when it does not.
fn shrink_structured(
    value: serde_json::Value,
    bounds: OutputBounds,
    path: &std::path::Path,
) -> serde_json::Value {
    let marker = format!(
        "\n... truncated; full content saved to {} ...",
        path.display()
    );
    let target = bounds.max_bytes.saturating_mul(2);
    let mut limit = (bounds.max_bytes / 4).max(64);
    let mut current = value;
    loop {
        current = shrink_value(current, limit, &marker);
        let size = serde_json::to_string(&current).map_or(0, |s| s.len());
        if size <= target || limit <= 64 {
            return current;
        }
        limit = (limit / 4).max(64);
    }
}

fn shrink_value(value: serde_json::Value, limit: usize, marker: &str) -> serde_json::Value {
    use serde_json::Value;
    match value {
        Value::String(s) if s.len() > limit => {
            let mut cut = cut_at_char(&s, limit).to_string();
            cut.push_str(marker);
            Value::String(cut)
        }
        Value::Array(items) => Value::Array(
            items
                .into_iter()
                .take(MAX_ITEMS)
                .map(|v| shrink_value(v, limit, marker))
                .collect(),
        ),
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| (k, shrink_value(v, limit, marker)))
                .collect(),
        ),
        other => other,
    }
}

fn fits(text: &str, bounds: OutputBounds) -> bool {
    text.len() <= bounds.max_bytes && line_count(text) <= bounds.max_lines
}

fn line_count(text: &str) -> usize {
    if text.is_empty() {
        0
    } else {
        text.lines().count()
    }
}

/// Head and tail of `full`, each within half of the budget, around the marker.
fn head_and_tail(full: &str, bounds: OutputBounds, path: &std::path::Path) -> String {
    let marker = format!(
        "... output truncated; full content saved to {} ...",
        path.display()
    );
    let half_lines = (bounds.max_lines.saturating_sub(1) / 2).max(1);
    let budget = bounds.max_bytes.saturating_sub(marker.len() + 2) / 2;
    let lines: Vec<&str> = full.lines().collect();

    let mut head = Vec::new();
    let mut used = 0;
    for line in lines.iter().take(half_lines) {
        if used + line.len() + 1 > budget {
            if head.is_empty() {
                head.push(cut_at_char(line, budget));
            }
            break;
        }
        used += line.len() + 1;
        head.push(*line);
    }
    let mut tail = Vec::new();
    let mut used = 0;
    for line in lines.iter().skip(head.len()).rev().take(half_lines) {
        if used + line.len() + 1 > budget {
            break;
        }
        used += line.len() + 1;
        tail.push(*line);
    }
    tail.reverse();
    let mut out = head.join("\n");
    out.push('\n');
    out.push_str(&marker);
    if !tail.is_empty() {
        out.push('\n');
        out.push_str(&tail.join("\n"));
    }
    out
}

fn cut_at_char(s: &str, max: usize) -> &str {
    let mut end = max.min(s.len());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}
