//! `edit`: exact replacement of one string by another in a file.

use std::path::Path;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolgate_core::{
    Location, PermissionRequest, Preview, PreviewBody, Tool, ToolContext, ToolError,
};

use super::ledger::{Freshness, hash_bytes};
use super::text::{TextFile, line_of, looks_binary};
use super::{FileState, fsio, location_paths};

mod candidates;

/// Input of `edit`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EditInput {
    /// The file, relative to the workspace root or absolute.
    pub path: String,
    /// The exact text to replace (must occur once unless `replace_all`).
    pub old_string: String,
    /// The text to put in its place.
    pub new_string: String,
    /// Replace every occurrence. Default false.
    #[serde(default)]
    pub replace_all: Option<bool>,
}

/// Output of `edit`.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct EditOutput {
    /// The canonical path edited.
    pub path: String,
    /// How many occurrences were replaced.
    pub replacements: usize,
    /// Line numbers (1-based, in the old file) where replacements start.
    pub lines: Vec<usize>,
    /// A unified diff of the change.
    pub diff: String,
    /// Bytes written.
    pub bytes: usize,
}

/// The `edit` tool.
#[derive(Debug)]
pub struct EditTool {
    state: Arc<FileState>,
}

impl EditTool {
    /// An `edit` tool over shared state.
    pub fn new(state: Arc<FileState>) -> Self {
        EditTool { state }
    }
}

impl Tool for EditTool {
    type Input = EditInput;
    type Output = EditOutput;

    fn description(&self) -> String {
        "Replaces old_string by new_string in a file, exactly. old_string must occur once \
         unless replace_all is true. Refused if the file changed since this session last \
         read it. Keeps BOM and line endings; returns a unified diff."
            .into()
    }

    fn intent(
        &self,
        input: &EditInput,
        location: &Location,
    ) -> Result<Vec<PermissionRequest>, ToolError> {
        check_strings(input)?;
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

    /// The replacement as a unified diff of `old_string` to `new_string`.
    fn preview(&self, input: &EditInput, _location: &Location) -> Option<Preview> {
        let diff = similar::TextDiff::from_lines(&input.old_string, &input.new_string)
            .unified_diff()
            .context_radius(3)
            .header(&input.path, &input.path)
            .to_string();
        let title = if input.replace_all == Some(true) {
            "Edit (every occurrence)"
        } else {
            "Edit"
        };
        Some(Preview::new(title).with_body(PreviewBody::Diff(diff)))
    }

    async fn execute(&self, input: EditInput, ctx: ToolContext) -> Result<EditOutput, ToolError> {
        check_strings(&input)?;
        let resolved = location_paths::resolve(&ctx.location, Some(&input.path))?;
        let shown = location_paths::relative(ctx.location.root(), &resolved.path);
        let judged = location_paths::judged(&ctx, "edit", &resolved)?.cloned();
        let state = Arc::clone(&self.state);
        let session = ctx.identity.session_id.clone();
        let call_id = ctx.identity.call_id.clone();
        let location = Arc::clone(&ctx.location);
        tokio::task::spawn_blocking(move || {
            let target = (location.as_ref(), judged.as_ref());
            let ids = (session.as_str(), call_id.as_str());
            edit_file(&state, ids, target, &resolved.path, &shown, &input)
        })
        .await
        .map_err(|e| ToolError::caused("edit task failed", e))?
    }

    fn project(&self, output: &EditOutput) -> Vec<toolgate_core::Content> {
        vec![toolgate_core::Content::text(format!(
            "Edited {} ({} replacement{}):\n{}",
            output.path,
            output.replacements,
            if output.replacements == 1 { "" } else { "s" },
            output.diff
        ))]
    }
}

fn check_strings(input: &EditInput) -> Result<(), ToolError> {
    if input.old_string.is_empty() {
        return Err(ToolError::InvalidInput(
            "old_string is empty; to create or replace a whole file use write".into(),
        ));
    }
    if input.old_string == input.new_string {
        return Err(ToolError::InvalidInput(
            "old_string and new_string are identical; nothing would change".into(),
        ));
    }
    Ok(())
}

fn edit_file(
    state: &FileState,
    (session, call_id): (&str, &str),
    (location, judged): (&Location, Option<&PermissionRequest>),
    path: &Path,
    shown: &str,
    input: &EditInput,
) -> Result<EditOutput, ToolError> {
    let display = path.display().to_string();
    location_paths::require_file(path, &display)?;
    // Read as judged: no symlink followed on the way.
    let bytes = fsio::read_existing(location, path, judged)?
        .ok_or_else(|| ToolError::Failed(format!("file not found: {display}")))?;
    if state.ledger.check(session, path, &hash_bytes(&bytes)) == Freshness::Stale {
        return Err(ToolError::Failed(format!(
            "{display} changed since it was last read; read it again before editing it"
        )));
    }
    if looks_binary(
        path,
        &bytes[..bytes.len().min(super::text::BINARY_SAMPLE_BYTES)],
    ) {
        return Err(ToolError::Failed(format!(
            "{display} is a binary file; edit changes text files only"
        )));
    }
    let file = TextFile::decode(path, bytes)?;
    let old = file.normalise_input(&input.old_string);
    let new = file.normalise_input(&input.new_string);
    let starts: Vec<usize> = file
        .body
        .match_indices(old.as_str())
        .map(|(i, _)| i)
        .collect();
    if starts.is_empty() {
        return Err(ToolError::Failed(candidates::not_found_message(
            &display, &file.body, &old,
        )));
    }
    let lines: Vec<usize> = starts.iter().map(|&i| line_of(&file.body, i)).collect();
    let replace_all = input.replace_all.unwrap_or(false);
    if starts.len() > 1 && !replace_all {
        let list: Vec<String> = lines.iter().map(usize::to_string).collect();
        return Err(ToolError::Failed(format!(
            "old_string occurs {} times in {display} (starting on lines {}); add surrounding \
             context to make it unique, or set replace_all to replace every occurrence",
            starts.len(),
            list.join(", ")
        )));
    }
    let body = if replace_all {
        file.body.replace(old.as_str(), &new)
    } else {
        file.body.replacen(old.as_str(), &new, 1)
    };
    let out = file.encode(&body);
    super::as_checkpoint(state, call_id, "edit", &[path], || {
        fsio::write_atomic(Some(location), path, &out).map_err(|e| fsio::write_error(path, e))
    })?;
    state.ledger.record(session, path, hash_bytes(&out));
    let diff = similar::TextDiff::from_lines(&file.body, &body)
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{shown}"), &format!("b/{shown}"))
        .to_string();
    Ok(EditOutput {
        path: display,
        replacements: starts.len(),
        lines,
        diff,
        bytes: out.len(),
    })
}
