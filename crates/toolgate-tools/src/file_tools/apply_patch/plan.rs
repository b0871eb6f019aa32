//! Planning a patch: every file read and every hunk located before anything is
//! written. The plan holds each touched file's bytes before and after.

use std::collections::HashSet;
use std::fs::Permissions;
use std::io::Read;
use std::path::{Path, PathBuf};

use toolgate_core::{Location, ToolError};

use super::patch_syntax::{FileOp, Hunk, LineKind, Patch};
use super::seek::{self, MatchLevel};
use super::{PatchStatus, PatchedFile};
use crate::file_tools::text::{TextFile, looks_binary};
use crate::file_tools::{fsio, location_paths};

/// One file change: its content before (`None`: did not exist) and after
/// (`None`: deleted).
#[derive(Debug)]
pub struct Change {
    /// The canonical path.
    pub path: PathBuf,
    /// The bytes before, for a rollback.
    pub before: Option<Vec<u8>>,
    /// The permissions before, for a rollback.
    pub before_permissions: Option<Permissions>,
    /// The bytes after.
    pub after: Option<Vec<u8>>,
}

/// Every change of a patch, ready to commit, and the report for each file.
#[derive(Debug)]
pub struct Plan {
    /// Changes in patch order.
    pub changes: Vec<Change>,
    /// What the output reports.
    pub files: Vec<PatchedFile>,
}

/// Reads every file the patch touches and computes its new content. Fails,
/// naming the file and the patch line, if anything cannot be applied.
pub fn plan(patch: &Patch, location: &Location) -> Result<Plan, ToolError> {
    let mut changes = Vec::new();
    let mut files = Vec::new();
    let mut touched = HashSet::new();
    let shown = |p: &PathBuf| location_paths::relative(location.root(), p);
    let mut claim = |path: &PathBuf, line: usize| {
        if touched.insert(path.clone()) {
            Ok(())
        } else {
            Err(failed(
                line,
                &shown(path),
                "the patch touches this file more than once",
            ))
        }
    };
    for op in &patch.ops {
        match op {
            FileOp::Add {
                path,
                contents,
                line,
            } => {
                let target = location.resolve(path)?.path;
                claim(&target, *line)?;
                if std::fs::symlink_metadata(&target).is_ok() {
                    return Err(failed(
                        *line,
                        &shown(&target),
                        "`Add File` but the file already exists; use `Update File`",
                    ));
                }
                changes.push(Change {
                    path: target.clone(),
                    before: None,
                    before_permissions: None,
                    after: Some(contents.clone().into_bytes()),
                });
                files.push(PatchedFile {
                    status: PatchStatus::A,
                    path: shown(&target),
                    moved_from: None,
                    match_level: None,
                });
            }
            FileOp::Delete { path, line } => {
                let target = location.resolve(path)?.path;
                claim(&target, *line)?;
                let (before, perms) = read_existing(location, &target, *line, &shown(&target))?;
                changes.push(Change {
                    path: target.clone(),
                    before: Some(before),
                    before_permissions: Some(perms),
                    after: None,
                });
                files.push(PatchedFile {
                    status: PatchStatus::D,
                    path: shown(&target),
                    moved_from: None,
                    match_level: None,
                });
            }
            FileOp::Update {
                path,
                move_to,
                hunks,
                line,
            } => {
                let source = location.resolve(path)?.path;
                claim(&source, *line)?;
                let name = shown(&source);
                let (before, perms) = read_existing(location, &source, *line, &name)?;
                if looks_binary(&source, &before[..before.len().min(8192)]) {
                    return Err(failed(
                        *line,
                        &name,
                        "is a binary file; patches change text files only",
                    ));
                }
                let file = TextFile::decode(&source, before.clone())
                    .map_err(|e| failed(*line, &name, &e.to_string()))?;
                let (body, level) = apply_hunks(&file.body, hunks, &name)?;
                let after = file.encode(&body);
                let dest = match move_to {
                    Some(m) => Some(location.resolve(m)?.path).filter(|d| *d != source),
                    None => None,
                };
                match dest {
                    None => {
                        changes.push(Change {
                            path: source.clone(),
                            before: Some(before),
                            before_permissions: Some(perms),
                            after: Some(after),
                        });
                        files.push(PatchedFile {
                            status: PatchStatus::M,
                            path: name,
                            moved_from: None,
                            match_level: level,
                        });
                    }
                    Some(dest) => {
                        claim(&dest, *line)?;
                        if std::fs::symlink_metadata(&dest).is_ok() {
                            return Err(failed(
                                *line,
                                &shown(&dest),
                                "`Move to` names a file that already exists",
                            ));
                        }
                        changes.push(Change {
                            path: dest.clone(),
                            before: None,
                            before_permissions: None,
                            after: Some(after),
                        });
                        changes.push(Change {
                            path: source.clone(),
                            before: Some(before),
                            before_permissions: Some(perms),
                            after: None,
                        });
                        files.push(PatchedFile {
                            status: PatchStatus::M,
                            path: shown(&dest),
                            moved_from: Some(name),
                            match_level: level,
                        });
                    }
                }
            }
        }
    }
    Ok(Plan { changes, files })
}

fn failed(line: usize, file: &str, message: &str) -> ToolError {
    ToolError::Failed(format!(
        "{file} (patch line {line}): {message}; nothing was changed"
    ))
}

/// The file at the resolved `path`, opened once as it was judged (no
/// symbolic link anywhere on the way, beneath the location's root, without
/// blocking on a FIFO), and read from that handle after checking its kind:
/// a path swapped for a link or a FIFO after it was resolved is refused,
/// not followed or waited on.
fn read_existing(
    location: &Location,
    path: &Path,
    line: usize,
    name: &str,
) -> Result<(Vec<u8>, Permissions), ToolError> {
    let mut file = fsio::open_read(Some(location), path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            failed(line, name, "file not found")
        } else if fsio::is_swap(&e) {
            failed(
                line,
                name,
                "changed after it was judged (a symbolic link appeared on the way)",
            )
        } else {
            failed(line, name, &format!("cannot inspect: {e}"))
        }
    })?;
    let meta = file
        .metadata()
        .map_err(|e| failed(line, name, &format!("cannot inspect: {e}")))?;
    if meta.is_dir() {
        return Err(failed(line, name, "is a directory, not a file"));
    }
    if !meta.is_file() {
        return Err(failed(
            line,
            name,
            &format!("is {}", location_paths::special_kind(&meta)),
        ));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.read_to_end(&mut bytes)
        .map_err(|e| failed(line, name, &format!("cannot read: {e}")))?;
    Ok((bytes, meta.permissions()))
}

/// Applies `hunks` to `body`; returns the new body and the most lenient match
/// level used (`None` when no hunk needed matching).
fn apply_hunks(
    body: &str,
    hunks: &[Hunk],
    name: &str,
) -> Result<(String, Option<MatchLevel>), ToolError> {
    let trailing_newline = body.ends_with('\n');
    let mut lines: Vec<String> = body.lines().map(str::to_string).collect();
    // Replacements found on the original lines: (start, old length, new lines).
    let mut edits: Vec<(usize, usize, Vec<String>)> = Vec::new();
    let mut cursor = 0usize;
    let mut worst: Option<MatchLevel> = None;
    for hunk in hunks {
        if let Some(anchor) = &hunk.anchor {
            let Some((at, level)) = seek::find(&lines, &[anchor.as_str()], cursor, false) else {
                return Err(failed(
                    hunk.line,
                    name,
                    &format!("the hunk's context line `@@ {anchor}` was not found"),
                ));
            };
            worst = worst.max(Some(level));
            cursor = at + 1;
        }
        let mut old = hunk.old_lines();
        let (start, level) = if old.is_empty() {
            // A hunk that only adds: after its anchor, else at the end.
            let at = if hunk.anchor.is_some() && !hunk.end_of_file {
                cursor
            } else {
                lines.len()
            };
            (at, None)
        } else {
            let mut found = seek::find(&lines, &old, cursor, hunk.end_of_file);
            // A trailing blank context line often stands for the end of the file.
            if found.is_none() && old.last() == Some(&"") {
                old.pop();
                found = seek::find(&lines, &old, cursor, hunk.end_of_file);
            }
            match found {
                Some((s, l)) => (s, Some(l)),
                None => return Err(not_found(hunk, &old, name)),
            }
        };
        worst = worst.max(level);
        let new = new_lines(hunk, &lines[start..start + old.len()]);
        edits.push((start, old.len(), new));
        cursor = start + old.len();
    }
    for (start, len, new) in edits.into_iter().rev() {
        lines.splice(start..start + len, new);
    }
    let mut out = lines.join("\n");
    if !lines.is_empty() && (trailing_newline || body.is_empty()) {
        out.push('\n');
    }
    Ok((out, worst))
}

/// The hunk's replacement: context lines as they are in the file (so lenient
/// matching never rewrites them), added lines from the patch.
fn new_lines(hunk: &Hunk, matched: &[String]) -> Vec<String> {
    let mut file_lines = matched.iter();
    let mut out = Vec::new();
    for (kind, text) in &hunk.lines {
        match kind {
            LineKind::Context => {
                // The dropped trailing blank line has no file line; keep the patch's.
                out.push(file_lines.next().cloned().unwrap_or_else(|| text.clone()));
            }
            LineKind::Remove => {
                file_lines.next();
            }
            LineKind::Add => out.push(text.clone()),
        }
    }
    // A dropped trailing blank context line was not in the file: do not add it.
    if matched.len() < hunk.old_lines().len() && out.last().is_some_and(String::is_empty) {
        out.pop();
    }
    out
}

fn not_found(hunk: &Hunk, old: &[&str], name: &str) -> ToolError {
    let shown: Vec<String> = old.iter().take(6).map(|l| format!("    {l}")).collect();
    let more = if old.len() > 6 {
        format!("\n    … ({} more lines)", old.len() - 6)
    } else {
        String::new()
    };
    failed(
        hunk.line,
        name,
        &format!(
            "the hunk's lines were not found (tried exact, trailing whitespace, surrounding \
             whitespace and Unicode-normalised matching):\n{}{more}\n",
            shown.join("\n")
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::file_tools::apply_patch::patch_syntax::parse;

    fn hunks(patch: &str) -> Vec<Hunk> {
        match parse(patch).unwrap().ops.remove(0) {
            FileOp::Update { hunks, .. } => hunks,
            _ => panic!("not an update"),
        }
    }

    /// The file a patch reads is the one resolved and judged: one swapped
    /// for a link to a file elsewhere afterwards is refused, not read
    /// through (its text would have gone into the patched file), and a FIFO
    /// is refused without waiting for a writer.
    #[test]
    fn a_file_swapped_for_a_link_or_a_fifo_after_it_was_resolved_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let secret = outside.path().join("secret.txt");
        std::fs::write(&secret, "the secret\n").unwrap();
        let location = Location::new(&root).unwrap();
        let swapped = root.join("notes.txt");
        std::os::unix::fs::symlink(&secret, &swapped).unwrap();
        let err = read_existing(&location, &swapped, 3, "notes.txt").unwrap_err();
        assert!(
            err.to_string().contains("changed after it was judged"),
            "{err}"
        );
        let fifo = root.join("pipe.txt");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        assert_eq!(unsafe { nix::libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        let err = read_existing(&location, &fifo, 3, "pipe.txt").unwrap_err();
        assert!(err.to_string().contains("FIFO"), "{err}");
        std::fs::write(root.join("plain.txt"), "text\n").unwrap();
        let (bytes, _) = read_existing(&location, &root.join("plain.txt"), 3, "plain.txt").unwrap();
        assert_eq!(bytes, b"text\n");
    }

    #[test]
    fn keeps_file_context_under_lenient_match() {
        let h = hunks("*** Begin Patch\n*** Update File: x\n@@\n a  \n-b\n+B\n*** End Patch");
        let (out, level) = apply_hunks("a\nb\nc\n", &h, "x").unwrap();
        assert_eq!(out, "a\nB\nc\n");
        assert_eq!(level, Some(MatchLevel::TrailingWhitespace));
    }

    #[test]
    fn anchor_and_end_of_file() {
        let h = hunks(
            "*** Begin Patch\n*** Update File: x\n@@ fn two\n-x\n+y\n*** End of File\n*** End Patch",
        );
        let (out, _) = apply_hunks("fn one\nx\nfn two\nx\n", &h, "x").unwrap();
        assert_eq!(out, "fn one\nx\nfn two\ny\n");
    }

    #[test]
    fn missing_context_names_hunk_line() {
        let h = hunks("*** Begin Patch\n*** Update File: x\n@@\n-nope\n+y\n*** End Patch");
        let e = apply_hunks("a\n", &h, "x").unwrap_err().to_string();
        assert!(e.contains("patch line 3"), "{e}");
        assert!(e.contains("nope"), "{e}");
    }
}
