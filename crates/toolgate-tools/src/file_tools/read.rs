//! `read`: a text file by lines, a directory as a listing, an image as content.

use std::fmt::Write as _;
use std::fs::File;
use std::io::{self, Read};
use std::path::Path;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolgate_core::visible::name_text;
use toolgate_core::{
    Content, Location, PermissionRequest, Tool, ToolContext, ToolError, ToolTraits,
};

use super::ledger::ContentHash;
use super::text::{BINARY_SAMPLE_BYTES, count_chars, cut_line, looks_binary};
use super::{DEFAULT_READ_LINES, FileState, MAX_LINE_CHARS, fsio, location_paths};

mod image_read;

pub use image_read::ImageRead;

/// Input of `read`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadInput {
    /// The file or directory, relative to the workspace root or absolute.
    pub path: String,
    /// The first line (or directory entry) to return, 1-based. Default 1.
    #[serde(default)]
    pub offset: Option<usize>,
    /// How many lines (or entries) to return. Default 2000.
    #[serde(default)]
    pub limit: Option<usize>,
}

/// What was read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ReadKind {
    /// A text file.
    Text,
    /// A directory.
    Directory,
    /// An image.
    Image,
}

/// Output of `read`: exactly one of `text`, `directory`, `image` is set, as
/// `kind` says.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct ReadOutput {
    /// The canonical path read.
    pub path: String,
    /// What it is.
    pub kind: ReadKind,
    /// The lines, for a text file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<TextRead>,
    /// The entries, for a directory.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub directory: Option<DirectoryListing>,
    /// The image, for png, jpeg, gif and webp.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image: Option<ImageRead>,
}

/// Lines of a text file.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct TextRead {
    /// The lines, each prefixed by its number and a tab.
    pub content: String,
    /// The first line returned (1-based; 0 when none).
    pub start_line: usize,
    /// The last line returned (0 when none).
    pub end_line: usize,
    /// Lines in the whole file.
    pub total_lines: usize,
    /// Numbers of the lines that were cut at 2000 characters.
    pub cut_lines: Vec<usize>,
    /// Whether the file starts with a UTF-8 byte order mark (not shown).
    pub bom: bool,
    /// Whether some returned line was not valid UTF-8 (shown with U+FFFD).
    pub invalid_utf8: bool,
    /// How to read on, or other remarks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// A page of a directory listing.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct DirectoryListing {
    /// Entry names, sorted; directories end with `/`.
    pub entries: Vec<String>,
    /// The first entry returned (1-based; 0 when none).
    pub start: usize,
    /// Entries in the directory.
    pub total_entries: usize,
    /// How to read on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// The `read` tool.
#[derive(Debug)]
pub struct ReadTool {
    state: Arc<FileState>,
}

impl ReadTool {
    /// A `read` tool over shared state.
    pub fn new(state: Arc<FileState>) -> Self {
        ReadTool { state }
    }
}

impl Tool for ReadTool {
    type Input = ReadInput;
    type Output = ReadOutput;

    fn description(&self) -> String {
        "Reads a file by lines (offset is 1-based, default 2000 lines, long lines cut at \
         2000 characters), lists a directory, or returns a png/jpeg/gif/webp image. \
         Binary files are refused."
            .into()
    }

    fn traits(&self) -> ToolTraits {
        ToolTraits::read_only()
    }

    fn intent(
        &self,
        input: &ReadInput,
        location: &Location,
    ) -> Result<Vec<PermissionRequest>, ToolError> {
        check_window(input)?;
        let resolved = location_paths::resolve(location, Some(&input.path))?;
        Ok(vec![location_paths::read_request(
            location, "read", &resolved,
        )])
    }

    async fn execute(&self, input: ReadInput, ctx: ToolContext) -> Result<ReadOutput, ToolError> {
        check_window(&input)?;
        let resolved = location_paths::resolve(&ctx.location, Some(&input.path))?;
        let judged = location_paths::judged(&ctx, "read", &resolved)?.cloned();
        let state = Arc::clone(&self.state);
        let session = ctx.identity.session_id.clone();
        let location = Arc::clone(&ctx.location);
        // A missing file fails at once either way; only a small regular file is read inline.
        let inline = super::small_or_missing(&resolved.path);
        super::run_file_io(inline, "read", move || {
            let at = (location.as_ref(), judged.as_ref());
            read_path(&state, &session, at, &resolved.path, &input)
        })
        .await
    }

    fn project(&self, output: &ReadOutput) -> Vec<Content> {
        if let Some(t) = &output.text {
            let mut s = t.content.clone();
            if let Some(note) = &t.note {
                s.push_str(&format!("\n\n({note})"));
            }
            return vec![Content::text(s)];
        }
        if let Some(d) = &output.directory {
            // Each name as `list` shows it (a line break in one cannot forge
            // another entry); a directory's `/` stays outside the quotes.
            let shown: Vec<String> = d
                .entries
                .iter()
                .map(|e| match e.strip_suffix('/') {
                    Some(dir) => format!("{}/", name_text(dir)),
                    None => name_text(e).into_owned(),
                })
                .collect();
            let mut s = format!("{}/\n{}", name_text(&output.path), shown.join("\n"));
            if let Some(note) = &d.note {
                s.push_str(&format!("\n\n({note})"));
            }
            return vec![Content::text(s)];
        }
        if let Some(i) = &output.image {
            return vec![
                Content::Image {
                    data: i.data.clone(),
                    mime_type: i.mime_type.clone(),
                },
                Content::text(image_read::describe(&output.path, i)),
            ];
        }
        vec![Content::text(String::new())]
    }
}

fn check_window(input: &ReadInput) -> Result<(), ToolError> {
    if input.offset == Some(0) {
        return Err(ToolError::InvalidInput(
            "offset is 1-based: the first line is 1, not 0".into(),
        ));
    }
    if input.limit == Some(0) {
        return Err(ToolError::InvalidInput("limit must be at least 1".into()));
    }
    Ok(())
}

fn read_path(
    state: &FileState,
    session: &str,
    (location, judged): (&Location, Option<&PermissionRequest>),
    path: &Path,
    input: &ReadInput,
) -> Result<ReadOutput, ToolError> {
    let display = path.display().to_string();
    // Opened as judged: no symlink followed on the way (a swap fails here).
    let mut file =
        fsio::open_read(Some(location), path).map_err(|e| fsio::open_error(path, "read", e))?;
    let meta = file
        .metadata()
        .map_err(|e| ToolError::io(format!("cannot read {display}"), e))?;
    let offset = input.offset.unwrap_or(1);
    let limit = input.limit.unwrap_or(DEFAULT_READ_LINES);
    if meta.is_dir() {
        let listing = list_directory(file, path, offset, limit)?;
        return Ok(ReadOutput {
            path: display,
            kind: ReadKind::Directory,
            text: None,
            directory: Some(listing),
            image: None,
        });
    }
    if !meta.is_file() {
        return Err(ToolError::Failed(format!(
            "{display} is {}; only regular files and directories can be read",
            location_paths::special_kind(&meta)
        )));
    }
    location_paths::check_opened(location, path, &meta, judged)?;
    let mut sample = Vec::with_capacity(BINARY_SAMPLE_BYTES);
    (&mut file)
        .take(BINARY_SAMPLE_BYTES as u64)
        .read_to_end(&mut sample)
        .map_err(|e| ToolError::io(format!("cannot read {display}"), e))?;
    if let Some(format) = image_read::image_format(path, &sample) {
        let image = image_read::read_image(path, file, sample, meta.len(), format)?;
        return Ok(ReadOutput {
            path: display,
            kind: ReadKind::Image,
            text: None,
            directory: None,
            image: Some(image),
        });
    }
    if looks_binary(path, &sample) {
        return Err(ToolError::Failed(format!(
            "{display} is a binary file ({} bytes); read returns text and png/jpeg/gif/webp images only",
            meta.len()
        )));
    }
    let scan = scan_lines(io::Cursor::new(sample).chain(file), offset, limit)
        .map_err(|e| ToolError::io(format!("cannot read {display}"), e))?;
    state.ledger.record(session, path, scan.hash);
    let text = text_read(scan, offset, limit)?;
    Ok(ReadOutput {
        path: display,
        kind: ReadKind::Text,
        text: Some(text),
        directory: None,
        image: None,
    })
}

fn text_read(scan: Scan, offset: usize, limit: usize) -> Result<TextRead, ToolError> {
    if scan.total_lines > 0 && offset > scan.total_lines {
        return Err(ToolError::InvalidInput(format!(
            "offset {offset} is past the end of the file, which has {} lines",
            scan.total_lines
        )));
    }
    let mut content = String::new();
    let mut cut_lines = Vec::new();
    let mut invalid_utf8 = false;
    for (i, line) in scan.lines.iter().enumerate() {
        let number = offset + i;
        if line.cut {
            cut_lines.push(number);
        }
        invalid_utf8 |= line.invalid;
        if i > 0 {
            content.push('\n');
        }
        // Writing to a String cannot fail.
        let _ = write!(content, "{number:>6}\t{}", line.text);
    }
    let shown = scan.lines.len();
    let end_line = if shown == 0 { 0 } else { offset + shown - 1 };
    let mut notes = Vec::new();
    if scan.total_lines == 0 {
        notes.push("the file is empty".to_string());
    } else if end_line < scan.total_lines {
        notes.push(format!(
            "showing lines {offset}-{end_line} of {}; to read on, use offset={} (limit={limit})",
            scan.total_lines,
            end_line + 1
        ));
    }
    if !cut_lines.is_empty() {
        notes.push(format!(
            "{} line(s) longer than {MAX_LINE_CHARS} characters were cut",
            cut_lines.len()
        ));
    }
    if invalid_utf8 {
        notes.push("the file is not valid UTF-8; invalid bytes are shown as U+FFFD".into());
    }
    Ok(TextRead {
        content,
        start_line: if shown == 0 { 0 } else { offset },
        end_line,
        total_lines: scan.total_lines,
        cut_lines,
        bom: scan.bom,
        invalid_utf8,
        note: if notes.is_empty() {
            None
        } else {
            Some(notes.join("; "))
        },
    })
}

/// One line kept by [`scan_lines`].
struct ScannedLine {
    text: String,
    cut: bool,
    invalid: bool,
}

/// The lines of the window, the line count and the hash of the whole file.
struct Scan {
    lines: Vec<ScannedLine>,
    total_lines: usize,
    hash: ContentHash,
    bom: bool,
}

/// Most bytes kept of one line: enough for [`MAX_LINE_CHARS`] characters.
const KEEP_BYTES: usize = MAX_LINE_CHARS * 4 + 4;

/// Streams `reader` once: hashes every byte, counts lines, and keeps lines
/// `offset..offset+limit`, each at most [`KEEP_BYTES`] long, so memory stays
/// bounded whatever the line lengths.
fn scan_lines(mut reader: impl Read, offset: usize, limit: usize) -> io::Result<Scan> {
    let mut hasher = blake3::Hasher::new();
    let mut buf = vec![0u8; 64 * 1024];
    let mut lines = Vec::new();
    let mut line_no = 1usize; // the line being scanned
    let mut cur: Vec<u8> = Vec::new();
    let mut cur_chars = 0usize;
    let mut cur_bytes = 0usize;
    let mut cur_last = 0u8;
    let mut cur_has_bytes = false;
    let mut first_chunk = true;
    let mut bom = false;
    let last = offset.saturating_add(limit);
    loop {
        let n = match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        hasher.update(&buf[..n]);
        let mut chunk = &buf[..n];
        if first_chunk {
            first_chunk = false;
            if let Some(rest) = chunk.strip_prefix(b"\xEF\xBB\xBF") {
                bom = true;
                chunk = rest;
            }
        }
        while !chunk.is_empty() {
            let (part, ends) = match memchr::memchr(b'\n', chunk) {
                Some(i) => (&chunk[..i], true),
                None => (chunk, false),
            };
            cur_has_bytes = true;
            if line_no >= offset && line_no < last && !part.is_empty() {
                let room = KEEP_BYTES.saturating_sub(cur.len());
                cur.extend_from_slice(&part[..part.len().min(room)]);
                cur_chars += count_chars(part);
                cur_bytes += part.len();
                cur_last = part[part.len() - 1];
            }
            if ends {
                if line_no >= offset && line_no < last {
                    lines.push(finish_line(&mut cur, cur_chars, cur_bytes, cur_last));
                }
                cur.clear();
                cur_chars = 0;
                cur_bytes = 0;
                cur_last = 0;
                cur_has_bytes = false;
                line_no += 1;
                chunk = &chunk[part.len() + 1..];
            } else {
                chunk = &[];
            }
        }
    }
    let total_lines = if cur_has_bytes {
        if line_no >= offset && line_no < last {
            lines.push(finish_line(&mut cur, cur_chars, cur_bytes, cur_last));
        }
        line_no
    } else {
        line_no - 1
    };
    Ok(Scan {
        lines,
        total_lines,
        hash: *hasher.finalize().as_bytes(),
        bom,
    })
}

/// Ends a kept line: `total_bytes` is the line's full length and `last` its
/// final byte (a `\r` of a CRLF ending is dropped).
fn finish_line(bytes: &mut Vec<u8>, mut chars: usize, total_bytes: usize, last: u8) -> ScannedLine {
    if last == b'\r' {
        chars -= 1;
        if bytes.len() == total_bytes {
            bytes.pop();
        }
    }
    let kept_all = chars <= MAX_LINE_CHARS;
    let invalid = match std::str::from_utf8(bytes) {
        // The common line: valid and short, taken as is (one pass, one copy).
        Ok(text) if kept_all => {
            return ScannedLine {
                text: text.to_owned(),
                cut: false,
                invalid: false,
            };
        }
        Ok(_) => false,
        // A character split by the keep limit lies past the cut; not an error.
        Err(e) => e.error_len().is_some() || kept_all,
    };
    let decoded = String::from_utf8_lossy(bytes);
    let (text, cut) = cut_line(&decoded, MAX_LINE_CHARS, chars);
    ScannedLine { text, cut, invalid }
}

/// Lists the directory opened as `dir` (at `path`, for messages): the names
/// come from the handle that was opened as judged, not from the path again.
fn list_directory(
    dir: File,
    path: &Path,
    offset: usize,
    limit: usize,
) -> Result<DirectoryListing, ToolError> {
    use rustix::fs::{AtFlags, FileType};
    let display = path.display();
    let fail = |e: rustix::io::Errno| ToolError::io(format!("cannot list {display}"), e.into());
    let fd = std::os::fd::OwnedFd::from(dir);
    let mut names = Vec::new();
    let entries = rustix::fs::Dir::read_from(&fd).map_err(fail)?;
    for entry in entries {
        let entry = entry.map_err(fail)?;
        let raw = entry.file_name().to_bytes();
        if raw == b"." || raw == b".." {
            continue;
        }
        let mut name = String::from_utf8_lossy(raw).into_owned();
        let is_dir = match entry.file_type() {
            FileType::Directory => true,
            // Where a link (or an entry of unknown type) leads, for the `/` only.
            FileType::Symlink | FileType::Unknown => {
                rustix::fs::statat(&fd, entry.file_name(), AtFlags::empty())
                    .is_ok_and(|st| FileType::from_raw_mode(st.st_mode) == FileType::Directory)
            }
            _ => false,
        };
        if is_dir {
            name.push('/');
        }
        names.push(name);
    }
    names.sort();
    let total = names.len();
    if total > 0 && offset > total {
        return Err(ToolError::InvalidInput(format!(
            "offset {offset} is past the end of the directory, which has {total} entries"
        )));
    }
    let entries: Vec<String> = names.into_iter().skip(offset - 1).take(limit).collect();
    let end = offset - 1 + entries.len();
    let note = if total == 0 {
        Some("the directory is empty".to_string())
    } else if end < total {
        Some(format!(
            "showing entries {offset}-{end} of {total}; to read on, use offset={} (limit={limit})",
            end + 1
        ))
    } else {
        None
    };
    Ok(DirectoryListing {
        start: if entries.is_empty() { 0 } else { offset },
        entries,
        total_entries: total,
        note,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(text: &[u8], offset: usize, limit: usize) -> Scan {
        scan_lines(io::Cursor::new(text.to_vec()), offset, limit).unwrap()
    }

    #[test]
    fn counts_lines_with_and_without_final_newline() {
        assert_eq!(scan(b"a\nb\n", 1, 10).total_lines, 2);
        assert_eq!(scan(b"a\nb", 1, 10).total_lines, 2);
        assert_eq!(scan(b"", 1, 10).total_lines, 0);
        assert_eq!(scan(b"\n", 1, 10).total_lines, 1);
    }

    #[test]
    fn strips_cr_and_bom() {
        let s = scan(b"\xEF\xBB\xBFone\r\ntwo\r\n", 1, 10);
        assert!(s.bom);
        assert_eq!(s.lines[0].text, "one");
        assert_eq!(s.lines[1].text, "two");
    }

    #[test]
    fn window_keeps_only_requested_lines() {
        let s = scan(b"1\n2\n3\n4\n", 2, 2);
        let texts: Vec<_> = s.lines.iter().map(|l| l.text.as_str()).collect();
        assert_eq!(texts, ["2", "3"]);
        assert_eq!(s.total_lines, 4);
    }

    #[test]
    fn multibyte_line_cut_on_char_boundary() {
        let line = "é".repeat(3000);
        let s = scan(line.as_bytes(), 1, 1);
        assert!(s.lines[0].cut);
        assert!(!s.lines[0].invalid);
        assert!(s.lines[0].text.starts_with(&"é".repeat(2000)));
        assert!(s.lines[0].text.contains("3000 characters"));
    }
}
