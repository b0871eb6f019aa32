//! `apply_patch`: several file changes in the `*** Begin Patch` format, all or
//! nothing.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolgate_core::{
    Content, Location, PermissionRequest, Preview, PreviewBody, Tool, ToolContext, ToolError,
};

use super::ledger::hash_bytes;
use super::{FileState, location_paths};

mod commit;
mod patch_syntax;
mod plan;
mod seek;

use patch_syntax::{FileOp, Patch, parse};
pub use seek::MatchLevel;

/// Input of `apply_patch`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ApplyPatchInput {
    /// The patch, from `*** Begin Patch` to `*** End Patch`.
    pub patch: String,
}

/// What happened to a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub enum PatchStatus {
    /// Added.
    A,
    /// Modified (or moved).
    M,
    /// Deleted.
    D,
}

/// One file of a patch.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct PatchedFile {
    /// `A`, `M` or `D`.
    pub status: PatchStatus,
    /// The file (its new path after a move), relative to the workspace root when inside it.
    pub path: String,
    /// The old path, for a move.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub moved_from: Option<String>,
    /// How leniently its hunks matched (the most lenient level any hunk needed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub match_level: Option<MatchLevel>,
}

/// Output of `apply_patch`.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct ApplyPatchOutput {
    /// Every file touched, in patch order.
    pub files: Vec<PatchedFile>,
    /// The most lenient match level any hunk needed (`exact` when none did).
    pub match_level: MatchLevel,
    /// One `A path` / `M path` / `D path` line per file.
    pub summary: String,
}

/// The `apply_patch` tool.
#[derive(Debug)]
pub struct ApplyPatchTool {
    state: Arc<FileState>,
}

impl ApplyPatchTool {
    /// An `apply_patch` tool over shared state.
    pub fn new(state: Arc<FileState>) -> Self {
        ApplyPatchTool { state }
    }
}

fn parse_input(patch: &str) -> Result<Patch, ToolError> {
    parse(patch).map_err(|e| ToolError::InvalidInput(e.to_string()))
}

impl Tool for ApplyPatchTool {
    type Input = ApplyPatchInput;
    type Output = ApplyPatchOutput;

    fn action(&self) -> Option<&'static str> {
        Some("edit")
    }

    fn description(&self) -> String {
        "Applies a patch in the `*** Begin Patch` format (Add File / Update File with \
         optional Move to / Delete File; @@ hunks of ' ', '-', '+' lines; *** End of File; \
         *** End Patch). Every hunk is located before anything is written, and the change is \
         all or nothing."
            .into()
    }

    fn intent(
        &self,
        input: &ApplyPatchInput,
        location: &Location,
    ) -> Result<Vec<PermissionRequest>, ToolError> {
        let patch = parse_input(&input.patch)?;
        let mut requests = Vec::new();
        for op in &patch.ops {
            match op {
                FileOp::Add { path, .. } => {
                    requests.push(location_paths::edit_request(
                        location,
                        &location.resolve(path)?,
                        "add",
                    ));
                }
                FileOp::Delete { path, .. } => {
                    requests.push(location_paths::edit_request(
                        location,
                        &location.resolve(path)?,
                        "delete",
                    ));
                }
                FileOp::Update { path, move_to, .. } => {
                    let source = location.resolve(path)?;
                    match move_to {
                        Some(dest) => {
                            let dest = location.resolve(dest)?;
                            requests.push(location_paths::edit_request(
                                location,
                                &source,
                                "move-from",
                            ));
                            requests.push(location_paths::edit_request(location, &dest, "move-to"));
                        }
                        None => {
                            requests.push(location_paths::edit_request(location, &source, "update"))
                        }
                    }
                }
            }
        }
        Ok(requests)
    }

    /// The patch as the model wrote it.
    fn preview(&self, input: &ApplyPatchInput, _location: &Location) -> Option<Preview> {
        Some(Preview::new("Patch").with_body(PreviewBody::Diff(input.patch.clone())))
    }

    async fn execute(
        &self,
        input: ApplyPatchInput,
        ctx: ToolContext,
    ) -> Result<ApplyPatchOutput, ToolError> {
        // Before any file is read for the plan (whose errors quote lines), the
        // paths must still resolve to what was judged.
        if let Some(judged) = ctx.judged() {
            let now = self.intent(&input, &ctx.location)?;
            if now.as_slice() != judged {
                return Err(ToolError::Failed(
                    "the patch's paths changed after they were judged (a symbolic link \
                     swapped?); nothing was done"
                        .into(),
                ));
            }
        }
        let patch = parse_input(&input.patch)?;
        let state = Arc::clone(&self.state);
        let session = ctx.identity.session_id.clone();
        let call_id = ctx.identity.call_id.clone();
        let location = Arc::clone(&ctx.location);
        let cancel = ctx.cancel.clone();
        let judged: Option<Vec<PermissionRequest>> = ctx.judged().map(<[_]>::to_vec);
        tokio::task::spawn_blocking(move || {
            let plan = plan::plan(&patch, &location)?;
            if cancel.is_cancelled() {
                return Err(ToolError::Cancelled);
            }
            // Every file the plan changes, as resolved now, must be one judged.
            if let Some(judged) = &judged {
                for change in &plan.changes {
                    let text = change.path.to_string_lossy();
                    if !judged
                        .iter()
                        .any(|r| r.action == "edit" && r.resource == text)
                    {
                        return Err(ToolError::Failed(format!(
                            "{text} is not a path that was judged: a path changed after the \
                             decision (a symbolic link swapped?); nothing was done"
                        )));
                    }
                }
            }
            let paths: Vec<&std::path::Path> =
                plan.changes.iter().map(|c| c.path.as_path()).collect();
            super::as_checkpoint(&state, &call_id, "apply_patch", &paths, || {
                commit::commit(&location, &plan.changes, |p| {
                    location_paths::relative(location.root(), p)
                })
            })?;
            for change in &plan.changes {
                match &change.after {
                    Some(bytes) => state
                        .ledger
                        .record(&session, &change.path, hash_bytes(bytes)),
                    None => state.ledger.forget(&session, &change.path),
                }
            }
            let match_level = plan
                .files
                .iter()
                .filter_map(|f| f.match_level)
                .max()
                .unwrap_or(MatchLevel::Exact);
            let summary = plan
                .files
                .iter()
                .map(|f| format!("{:?} {}", f.status, f.path))
                .collect::<Vec<_>>()
                .join("\n");
            Ok(ApplyPatchOutput {
                files: plan.files,
                match_level,
                summary,
            })
        })
        .await
        .map_err(|e| ToolError::caused("apply_patch task failed", e))?
    }

    fn project(&self, output: &ApplyPatchOutput) -> Vec<Content> {
        let mut text = format!("Patch applied:\n{}", output.summary);
        if output.match_level != MatchLevel::Exact {
            text.push_str(&format!(
                "\n(some hunks matched only leniently: {:?})",
                output.match_level
            ));
        }
        vec![Content::text(text)]
    }
}
