//! `write`: create or overwrite a file, keeping an existing BOM and line endings.

use std::path::Path;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolgate_core::{
    Location, PermissionRequest, Preview, PreviewBody, Tool, ToolContext, ToolError,
};

use super::ledger::{Freshness, hash_bytes};
use super::text::{BOM, LineEnding};
use super::{FileState, fsio, location_paths};

/// Input of `write`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteInput {
    /// The file, relative to the workspace root or absolute.
    pub path: String,
    /// The whole new content.
    pub content: String,
}

/// Output of `write`.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct WriteOutput {
    /// The canonical path written.
    pub path: String,
    /// True when the file did not exist before.
    pub created: bool,
    /// Bytes written.
    pub bytes: usize,
    /// Whether the file starts with a UTF-8 BOM (kept from the old file).
    pub bom: bool,
    /// `lf` or `crlf`: the line endings written.
    pub line_ending: String,
    /// Directories created for the file.
    pub created_dirs: Vec<String>,
}

/// The `write` tool.
#[derive(Debug)]
pub struct WriteTool {
    state: Arc<FileState>,
}

impl WriteTool {
    /// A `write` tool over shared state.
    pub fn new(state: Arc<FileState>) -> Self {
        WriteTool { state }
    }
}

impl Tool for WriteTool {
    type Input = WriteInput;
    type Output = WriteOutput;

    fn action(&self) -> Option<&'static str> {
        Some("edit")
    }

    fn description(&self) -> String {
        "Creates or overwrites a file with the given content, creating missing parent \
         directories. An existing file keeps its BOM and line-ending style. Refused if the \
         file changed since this session last read it."
            .into()
    }

    fn intent(
        &self,
        input: &WriteInput,
        location: &Location,
    ) -> Result<Vec<PermissionRequest>, ToolError> {
        let resolved = location_paths::resolve(location, Some(&input.path))?;
        let note = if resolved.exists {
            "overwrite"
        } else {
            "create"
        };
        Ok(vec![location_paths::edit_request(
            location, &resolved, note,
        )])
    }

    /// The path, the size and the whole new content as added lines.
    fn preview(&self, input: &WriteInput, _location: &Location) -> Option<Preview> {
        let lines = input.content.lines().count();
        let added: String = input.content.lines().map(|l| format!("+{l}\n")).collect();
        let diff = format!("+++ {} (whole new content)\n{added}", input.path);
        Some(
            Preview::new("Write")
                .with_field("path", &input.path)
                .with_field(
                    "size",
                    format!("{} bytes, {lines} lines", input.content.len()),
                )
                .with_body(PreviewBody::Diff(diff)),
        )
    }

    async fn execute(&self, input: WriteInput, ctx: ToolContext) -> Result<WriteOutput, ToolError> {
        let resolved = location_paths::resolve(&ctx.location, Some(&input.path))?;
        let judged = location_paths::judged(&ctx, "edit", &resolved)?.cloned();
        let state = Arc::clone(&self.state);
        let session = ctx.identity.session_id.clone();
        let call_id = ctx.identity.call_id.clone();
        let location = Arc::clone(&ctx.location);
        // Writing reads the old file first: both must be small to stay inline.
        let inline = input.content.len() as u64 <= super::INLINE_FILE_BYTES
            && super::small_or_missing(&resolved.path);
        super::run_file_io(inline, "write", move || {
            let target = Target {
                location: &location,
                path: &resolved.path,
                judged: judged.as_ref(),
            };
            write_file(&state, (&session, &call_id), target, &input.content)
        })
        .await
    }
}

/// What a write acts on: the resolved path, where it was judged.
struct Target<'a> {
    location: &'a Location,
    path: &'a Path,
    judged: Option<&'a PermissionRequest>,
}

fn write_file(
    state: &FileState,
    (session, call_id): (&str, &str),
    target: Target<'_>,
    content: &str,
) -> Result<WriteOutput, ToolError> {
    let path = target.path;
    let display = path.display().to_string();
    let existing = fsio::read_existing(target.location, path, target.judged)?;
    if let Some(old) = &existing {
        if state.ledger.check(session, path, &hash_bytes(old)) == Freshness::Stale {
            return Err(ToolError::Failed(format!(
                "{display} changed since it was last read; read it again before overwriting it"
            )));
        }
    }
    let (bytes, bom, ending) = shape_content(existing.as_deref(), content);
    let created_dirs = super::as_checkpoint(state, call_id, "write", &[path], || {
        fsio::write_atomic(Some(target.location), path, &bytes)
            .map_err(|e| fsio::write_error(path, e))
    })?;
    state.ledger.record(session, path, hash_bytes(&bytes));
    Ok(WriteOutput {
        path: display,
        created: existing.is_none(),
        bytes: bytes.len(),
        bom,
        line_ending: ending.name().to_string(),
        created_dirs: created_dirs
            .iter()
            .map(|d| d.to_string_lossy().into_owned())
            .collect(),
    })
}

/// The bytes to write: `content` with the old file's BOM and line-ending style.
/// A new file is written exactly as given.
pub fn shape_content(existing: Option<&[u8]>, content: &str) -> (Vec<u8>, bool, LineEnding) {
    let Some(old) = existing else {
        let ending = LineEnding::detect(content);
        return (
            content.as_bytes().to_vec(),
            content.starts_with(BOM),
            ending,
        );
    };
    let old_text = String::from_utf8_lossy(old);
    let old_bom = old_text.starts_with(BOM);
    let old_body = old_text.strip_prefix(BOM).unwrap_or(&old_text);
    let new_body = content.strip_prefix(BOM).unwrap_or(content);
    let ending = if old_body.contains('\n') {
        LineEnding::detect(old_body)
    } else {
        LineEnding::detect(new_body)
    };
    let bom = old_bom || content.starts_with(BOM);
    let mut out = String::with_capacity(content.len() + 16);
    if bom {
        out.push_str(BOM);
    }
    out.push_str(&ending.apply(new_body));
    (out.into_bytes(), bom, ending)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_bom_and_crlf_of_existing_file() {
        let old = "\u{feff}a\r\nb\r\n".as_bytes();
        let (bytes, bom, ending) = shape_content(Some(old), "x\ny\n");
        assert_eq!(bytes, "\u{feff}x\r\ny\r\n".as_bytes());
        assert!(bom);
        assert_eq!(ending, LineEnding::Crlf);
    }

    #[test]
    fn new_file_is_written_as_given() {
        let (bytes, bom, _) = shape_content(None, "a\r\nb\n");
        assert_eq!(bytes, b"a\r\nb\n");
        assert!(!bom);
    }

    #[test]
    fn lf_file_gets_lf() {
        let (bytes, _, ending) = shape_content(Some(b"a\nb\n"), "x\r\ny\r\n");
        assert_eq!(bytes, b"x\ny\n");
        assert_eq!(ending, LineEnding::Lf);
    }
}
