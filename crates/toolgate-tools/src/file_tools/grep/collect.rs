//! Collecting grep hits: a sink per file, and the newest files kept across files.

use std::cmp::Reverse;
use std::collections::BTreeMap;
use std::io;
use std::time::SystemTime;

use grep_searcher::{Searcher, Sink, SinkContext, SinkMatch};

use toolgate_core::visible::name_text;

use super::{GrepFile, GrepLine, GrepOutput};
use crate::file_tools::MAX_LINE_CHARS;
use crate::file_tools::text::{count_chars, cut_line};

/// The hits of one file.
#[derive(Debug)]
pub struct FileHits {
    /// Relative path.
    pub path: String,
    /// Modification time, for newest-first order.
    pub mtime: SystemTime,
    /// All matching lines in the file.
    pub matches: usize,
    /// Lines kept: at most `limit` matches and their context.
    pub lines: Vec<GrepLine>,
}

/// Collects one file's lines; stops keeping text (but goes on counting) after
/// `limit` matches, since no more can be shown.
pub struct LineSink {
    limit: usize,
    /// Matching lines seen.
    pub matches: usize,
    /// Lines kept.
    pub lines: Vec<GrepLine>,
    /// The file turned out to be binary; its hits are discarded.
    pub binary: bool,
}

impl LineSink {
    /// A sink keeping at most `limit` matches.
    pub fn new(limit: usize) -> Self {
        LineSink {
            limit,
            matches: 0,
            lines: Vec::new(),
            binary: false,
        }
    }
}

fn line_text(bytes: &[u8]) -> String {
    let bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
    let text = String::from_utf8_lossy(bytes);
    cut_line(&text, MAX_LINE_CHARS, count_chars(bytes)).0
}

impl Sink for LineSink {
    type Error = io::Error;

    fn matched(&mut self, _: &Searcher, m: &SinkMatch<'_>) -> Result<bool, io::Error> {
        self.matches += 1;
        if self.matches <= self.limit {
            self.lines.push(GrepLine {
                line: m.line_number().unwrap_or(0),
                text: line_text(m.bytes()),
                is_match: true,
            });
        }
        Ok(true)
    }

    fn context(&mut self, _: &Searcher, c: &SinkContext<'_>) -> Result<bool, io::Error> {
        // Before-context of a match past the limit is never shown.
        if self.matches < self.limit
            || (self.matches == self.limit && c.kind() == &grep_searcher::SinkContextKind::After)
        {
            self.lines.push(GrepLine {
                line: c.line_number().unwrap_or(0),
                text: line_text(c.bytes()),
                is_match: false,
            });
        }
        Ok(true)
    }

    fn binary_data(&mut self, _: &Searcher, _offset: u64) -> Result<bool, io::Error> {
        self.binary = true;
        Ok(false)
    }
}

/// The newest files with matches, keeping only as many as can be shown.
pub struct TopFiles {
    limit: usize,
    kept: BTreeMap<(Reverse<SystemTime>, String), FileHits>,
    kept_matches: usize,
    total_matches: usize,
    files_with_matches: usize,
}

impl TopFiles {
    /// Keeps enough files to show `limit` matches.
    pub fn new(limit: usize) -> Self {
        TopFiles {
            limit,
            kept: BTreeMap::new(),
            kept_matches: 0,
            total_matches: 0,
            files_with_matches: 0,
        }
    }

    /// Adds a file; drops the oldest files no longer needed to fill the limit.
    pub fn insert(&mut self, hits: FileHits) {
        self.total_matches += hits.matches;
        self.files_with_matches += 1;
        self.kept_matches += hits.matches;
        self.kept
            .insert((Reverse(hits.mtime), hits.path.clone()), hits);
        while let Some(last) = self.kept.last_key_value().map(|(_, v)| v.matches) {
            if self.kept_matches - last >= self.limit {
                self.kept_matches -= last;
                self.kept.pop_last();
            } else {
                break;
            }
        }
    }

    /// The output: files newest first, lines up to `limit` matches.
    pub fn finish(self, context: usize) -> GrepOutput {
        let mut shown = 0usize;
        let mut files = Vec::new();
        for hits in self.kept.into_values() {
            if shown >= self.limit {
                break;
            }
            let room = self.limit - shown;
            let mut lines = Vec::new();
            let mut taken = 0usize;
            let mut last_match_line = 0u64;
            for line in hits.lines {
                if line.is_match {
                    if taken == room {
                        break;
                    }
                    taken += 1;
                    last_match_line = line.line;
                } else if taken == room && line.line > last_match_line + context as u64 {
                    break;
                }
                lines.push(line);
            }
            // Drop before-context left dangling after the last shown match.
            while lines
                .last()
                .is_some_and(|l| !l.is_match && l.line > last_match_line + context as u64)
            {
                lines.pop();
            }
            shown += taken;
            files.push(GrepFile {
                path: hits.path,
                matches: hits.matches,
                lines,
            });
        }
        GrepOutput {
            path: String::new(),
            files,
            total_matches: self.total_matches,
            shown_matches: shown,
            more: self.total_matches - shown,
            files_with_matches: self.files_with_matches,
            unreadable: 0,
            note: None,
        }
    }
}

/// The model-facing text: `path:line:text` for matches, `path-line-text` for
/// context, `--` between separate groups.
pub fn render(out: &GrepOutput) -> String {
    if out.files.is_empty() {
        return "No matches found".to_string();
    }
    let mut text = format!(
        "{} matching line(s) in {} file(s)",
        out.total_matches, out.files_with_matches
    );
    for file in &out.files {
        text.push('\n');
        // As `name_text` shows it: a name cannot forge a line or a match.
        let path = name_text(&file.path);
        let mut prev: Option<u64> = None;
        for line in &file.lines {
            if prev.is_some_and(|p| line.line > p + 1) {
                text.push_str("--\n");
            }
            let sep = if line.is_match { ':' } else { '-' };
            text.push_str(&format!("{path}{sep}{}{sep}{}\n", line.line, line.text));
            prev = Some(line.line);
        }
    }
    if let Some(note) = &out.note {
        text.push_str(&format!("\n({note})"));
    }
    text
}
