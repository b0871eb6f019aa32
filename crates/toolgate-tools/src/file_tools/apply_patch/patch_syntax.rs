//! Parsing the `*** Begin Patch` format.
//!
//! ```text
//! *** Begin Patch
//! *** Add File: path          (followed by `+` lines)
//! *** Delete File: path
//! *** Update File: path
//! *** Move to: new/path       (optional)
//! @@ optional context line
//!  context
//! -removed
//! +added
//! *** End of File             (optional: the hunk ends at the end of the file)
//! *** End Patch
//! ```

/// A parse failure, naming the patch line (1-based).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("patch line {line}: {message}")]
pub struct ParseError {
    /// The line of the patch text.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

/// A parsed patch: file operations in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Patch {
    /// The operations.
    pub ops: Vec<FileOp>,
}

/// One file operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileOp {
    /// Create a file with `contents`.
    Add {
        /// The path as written.
        path: String,
        /// The new file's text.
        contents: String,
        /// The patch line of the header.
        line: usize,
    },
    /// Delete a file.
    Delete {
        /// The path as written.
        path: String,
        /// The patch line of the header.
        line: usize,
    },
    /// Change a file, possibly moving it.
    Update {
        /// The path as written.
        path: String,
        /// The new path, for a move.
        move_to: Option<String>,
        /// The hunks, in file order.
        hunks: Vec<Hunk>,
        /// The patch line of the header.
        line: usize,
    },
}

/// The kind of a hunk line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineKind {
    /// ` ` kept.
    Context,
    /// `-` removed.
    Remove,
    /// `+` added.
    Add,
}

/// One `@@` hunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hunk {
    /// The text after `@@`, a line to find before the hunk.
    pub anchor: Option<String>,
    /// The hunk's lines in order.
    pub lines: Vec<(LineKind, String)>,
    /// The hunk must match at the end of the file.
    pub end_of_file: bool,
    /// The patch line where the hunk starts.
    pub line: usize,
}

impl Hunk {
    /// The lines the hunk expects in the file (context and removed).
    pub fn old_lines(&self) -> Vec<&str> {
        self.lines
            .iter()
            .filter(|(k, _)| *k != LineKind::Add)
            .map(|(_, t)| t.as_str())
            .collect()
    }
}

const BEGIN: &str = "*** Begin Patch";
const END: &str = "*** End Patch";
const ADD: &str = "*** Add File: ";
const DELETE: &str = "*** Delete File: ";
const UPDATE: &str = "*** Update File: ";
const MOVE: &str = "*** Move to: ";
const EOF_MARK: &str = "*** End of File";

fn err(line: usize, message: impl Into<String>) -> ParseError {
    ParseError {
        line,
        message: message.into(),
    }
}

/// The largest patch accepted, in bytes (2 MiB): far above any change a
/// model writes in one call, and small enough that reading it and judging
/// every file it names stays within the decision budget.
pub const MAX_PATCH_BYTES: usize = 2 * 1024 * 1024;

/// The most file sections (`*** Add File`, `*** Update File`, `*** Delete
/// File`) one patch may hold: each is a permission request of its own.
pub const MAX_PATCH_FILES: usize = 500;

/// Parses `text`; every structural problem is an error naming its line. A
/// patch longer than [`MAX_PATCH_BYTES`] or with more than
/// [`MAX_PATCH_FILES`] file sections is refused before anything else.
pub fn parse(text: &str) -> Result<Patch, ParseError> {
    if text.len() > MAX_PATCH_BYTES {
        return Err(err(
            1,
            format!(
                "the patch is {} bytes; the limit is {MAX_PATCH_BYTES} bytes (2 MiB): split it into several patches",
                text.len()
            ),
        ));
    }
    let sections = text
        .split('\n')
        .filter(|l| l.starts_with(ADD) || l.starts_with(DELETE) || l.starts_with(UPDATE))
        .count();
    if sections > MAX_PATCH_FILES {
        return Err(err(
            1,
            format!(
                "the patch has {sections} file sections; the limit is {MAX_PATCH_FILES}: split it into several patches"
            ),
        ));
    }
    let lines: Vec<(usize, &str)> = text
        .split('\n')
        .enumerate()
        .map(|(i, l)| (i + 1, l.strip_suffix('\r').unwrap_or(l)))
        .collect();
    let first = lines.iter().position(|(_, l)| !l.trim().is_empty());
    let last = lines.iter().rposition(|(_, l)| !l.trim().is_empty());
    let (Some(first), Some(last)) = (first, last) else {
        return Err(err(
            1,
            "the patch is empty; it must start with `*** Begin Patch`",
        ));
    };
    let (begin_line, begin) = lines[first];
    if begin.trim() != BEGIN {
        return Err(err(
            begin_line,
            format!("expected `{BEGIN}`, found `{begin}`"),
        ));
    }
    let (end_line, end) = lines[last];
    if last == first || end.trim() != END {
        return Err(err(end_line, format!("the patch must end with `{END}`")));
    }
    let body = &lines[first + 1..last];
    let mut ops = Vec::new();
    let mut i = 0;
    while i < body.len() {
        let (n, l) = body[i];
        if let Some(path) = l.strip_prefix(ADD) {
            let path = file_path(n, path)?;
            i += 1;
            let mut contents = String::new();
            while i < body.len() && !is_header(body[i].1) {
                let (m, c) = body[i];
                let Some(added) = c.strip_prefix('+') else {
                    return Err(err(
                        m,
                        format!(
                            "in `*** Add File: {path}` every line must start with `+`, found `{c}`"
                        ),
                    ));
                };
                contents.push_str(added);
                contents.push('\n');
                i += 1;
            }
            ops.push(FileOp::Add {
                path,
                contents,
                line: n,
            });
        } else if let Some(path) = l.strip_prefix(DELETE) {
            ops.push(FileOp::Delete {
                path: file_path(n, path)?,
                line: n,
            });
            i += 1;
        } else if let Some(path) = l.strip_prefix(UPDATE) {
            let path = file_path(n, path)?;
            i += 1;
            let mut move_to = None;
            if let Some((m, next)) = body.get(i) {
                if let Some(dest) = next.strip_prefix(MOVE) {
                    move_to = Some(file_path(*m, dest)?);
                    i += 1;
                }
            }
            let (hunks, next) = parse_hunks(body, i, &path)?;
            i = next;
            if hunks.is_empty() && move_to.is_none() {
                return Err(err(n, format!("`*** Update File: {path}` has no hunks")));
            }
            ops.push(FileOp::Update {
                path,
                move_to,
                hunks,
                line: n,
            });
        } else if l.trim().is_empty() {
            i += 1;
        } else {
            return Err(err(
                n,
                format!(
                    "expected `*** Add File:`, `*** Update File:`, `*** Delete File:` or `{END}`, found `{l}`"
                ),
            ));
        }
    }
    if ops.is_empty() {
        return Err(err(begin_line, "the patch contains no file operations"));
    }
    Ok(Patch { ops })
}

fn file_path(line: usize, raw: &str) -> Result<String, ParseError> {
    let p = raw.trim();
    if p.is_empty() {
        return Err(err(line, "missing file path"));
    }
    Ok(p.to_string())
}

fn is_header(l: &str) -> bool {
    l.starts_with(ADD) || l.starts_with(DELETE) || l.starts_with(UPDATE) || l.trim() == END
}

/// Parses hunks from `body[i..]` up to the next file header.
fn parse_hunks(
    body: &[(usize, &str)],
    mut i: usize,
    path: &str,
) -> Result<(Vec<Hunk>, usize), ParseError> {
    let mut hunks: Vec<Hunk> = Vec::new();
    let mut current: Option<Hunk> = None;
    while i < body.len() && !is_header(body[i].1) {
        let (n, l) = body[i];
        i += 1;
        if let Some(rest) = l.strip_prefix("@@") {
            if let Some(h) = current.take() {
                hunks.push(finish(h, path)?);
            }
            let anchor = rest.trim();
            current = Some(Hunk {
                anchor: (!anchor.is_empty()).then(|| anchor.to_string()),
                lines: Vec::new(),
                end_of_file: false,
                line: n,
            });
            continue;
        }
        if l.trim() == EOF_MARK {
            match current.as_mut() {
                Some(h) => h.end_of_file = true,
                None => return Err(err(n, format!("`{EOF_MARK}` outside a hunk in {path}"))),
            }
            if let Some(h) = current.take() {
                hunks.push(finish(h, path)?);
            }
            continue;
        }
        let (kind, text) = match l.chars().next() {
            Some(' ') => (LineKind::Context, &l[1..]),
            Some('-') => (LineKind::Remove, &l[1..]),
            Some('+') => (LineKind::Add, &l[1..]),
            // A blank line inside a hunk is an empty context line.
            None => (LineKind::Context, ""),
            Some(_) => {
                return Err(err(
                    n,
                    format!(
                        "in the hunk for {path}, lines must start with ' ', '-' or '+', found `{l}`"
                    ),
                ));
            }
        };
        // The first hunk may omit its `@@` line.
        let hunk = current.get_or_insert_with(|| Hunk {
            anchor: None,
            lines: Vec::new(),
            end_of_file: false,
            line: n,
        });
        hunk.lines.push((kind, text.to_string()));
    }
    if let Some(h) = current.take() {
        hunks.push(finish(h, path)?);
    }
    Ok((hunks, i))
}

fn finish(h: Hunk, path: &str) -> Result<Hunk, ParseError> {
    if h.lines.is_empty() {
        return Err(err(h.line, format!("empty hunk in {path}")));
    }
    if h.lines.iter().all(|(k, _)| *k == LineKind::Context) {
        return Err(err(
            h.line,
            format!("the hunk for {path} changes nothing (no `-` or `+` lines)"),
        ));
    }
    Ok(h)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_operation() {
        let p = parse(
            "*** Begin Patch\n*** Add File: a.txt\n+hello\n*** Delete File: b.txt\n\
             *** Update File: c.txt\n*** Move to: d.txt\n@@ fn main\n ctx\n-old\n+new\n\
             *** End of File\n*** End Patch\n",
        )
        .unwrap();
        assert_eq!(p.ops.len(), 3);
        assert_eq!(
            p.ops[0],
            FileOp::Add {
                path: "a.txt".into(),
                contents: "hello\n".into(),
                line: 2
            }
        );
        let FileOp::Update { move_to, hunks, .. } = &p.ops[2] else {
            panic!("expected update");
        };
        assert_eq!(move_to.as_deref(), Some("d.txt"));
        assert_eq!(hunks[0].anchor.as_deref(), Some("fn main"));
        assert!(hunks[0].end_of_file);
        assert_eq!(hunks[0].old_lines(), ["ctx", "old"]);
        assert_eq!(hunks[0].line, 7);
    }

    #[test]
    fn rejects_structural_errors_with_line_numbers() {
        assert_eq!(parse("").unwrap_err().line, 1);
        assert!(
            parse("*** Begin Patch\n*** End Patch")
                .unwrap_err()
                .message
                .contains("no file operations")
        );
        assert_eq!(parse("hello\n*** End Patch").unwrap_err().line, 1);
        assert_eq!(
            parse("*** Begin Patch\n*** Add File: a\n+x\n")
                .unwrap_err()
                .line,
            3
        );
        let e = parse("*** Begin Patch\n*** Update File: a\n@@\n?bad\n*** End Patch").unwrap_err();
        assert_eq!(e.line, 4);
        let e = parse("*** Begin Patch\n*** Add File: a\nno plus\n*** End Patch").unwrap_err();
        assert_eq!(e.line, 3);
        let e = parse("*** Begin Patch\n*** Update File: a\n*** End Patch").unwrap_err();
        assert!(e.message.contains("no hunks"));
    }
}
