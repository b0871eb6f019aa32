//! `glob`: files matching a pattern, newest first.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::Arc;
use std::time::SystemTime;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolgate_core::{
    Content, Location, PermissionRequest, Tool, ToolContext, ToolError, ToolTraits,
};

use super::list::more_note;
use toolgate_core::visible::name_text;

use super::path_globs::{self, PathGlobs};
use super::{FileState, location_paths, tree_walk};

/// Input of `glob`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GlobInput {
    /// The glob, e.g. `**/*.rs` or `src/*.{ts,tsx}`; without `/` it matches file
    /// names at any depth.
    pub pattern: String,
    /// The directory to search; default the workspace root.
    #[serde(default)]
    pub path: Option<String>,
}

/// Output of `glob`.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct GlobOutput {
    /// The canonical directory searched.
    pub path: String,
    /// Matching files relative to `path`, newest first.
    pub files: Vec<String>,
    /// Matching files in all.
    pub total: usize,
    /// Matching files not returned.
    pub more: usize,
    /// Entries that could not be read.
    pub unreadable: usize,
    /// The "more results" note.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// The `glob` tool.
#[derive(Debug)]
pub struct GlobTool {
    state: Arc<FileState>,
}

impl GlobTool {
    /// A `glob` tool over shared state.
    pub fn new(state: Arc<FileState>) -> Self {
        GlobTool { state }
    }
}

/// A file at `rel` under `root` matching `globs`, with its modification time
/// (of the file itself, not of what a link points to).
fn hit(root: &Path, globs: &PathGlobs, rel: &Path) -> Option<(SystemTime, String)> {
    if !globs.is_match(rel) {
        return None;
    }
    let mtime = root
        .join(rel)
        .symlink_metadata()
        .ok()
        .and_then(|m| m.modified().ok())
        .unwrap_or(SystemTime::UNIX_EPOCH);
    Some((mtime, rel.to_string_lossy().into_owned()))
}

/// The output for the files found: newest first, the first `limit` of them.
fn newest_first(
    path: String,
    (mut found, unreadable): (Vec<(SystemTime, String)>, usize),
    limit: usize,
) -> GlobOutput {
    // Newest first; equal times by name, so the order is stable.
    found.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    let total = found.len();
    found.truncate(limit);
    let more = total - found.len();
    GlobOutput {
        path,
        files: found.into_iter().map(|(_, f)| f).collect(),
        total,
        more,
        unreadable,
        note: more_note(more, "files", "use a more specific pattern or path"),
    }
}

fn compile(pattern: &str) -> Result<PathGlobs, ToolError> {
    if pattern.starts_with('/') {
        return Err(ToolError::InvalidInput(format!(
            "glob pattern {pattern:?} is absolute; give it relative to `path`"
        )));
    }
    // `$HOME/…`, `${X}`, `~/…`: the glob tool expands no variables; taking
    // them literally would quietly match nothing.
    let bytes = pattern.as_bytes();
    let expands = pattern.starts_with('~')
        || bytes
            .windows(2)
            .any(|w| w[0] == b'$' && (w[1] == b'{' || w[1] == b'_' || w[1].is_ascii_alphabetic()));
    if expands {
        return Err(ToolError::InvalidInput(format!(
            "glob pattern {pattern:?} holds a shell expansion (`~`, `$NAME`); the glob tool expands none: give a pattern relative to `path`"
        )));
    }
    PathGlobs::new(&[pattern])
}

impl Tool for GlobTool {
    type Input = GlobInput;
    type Output = GlobOutput;

    fn description(&self) -> String {
        "Finds files by glob pattern (`**/*.rs`, `src/**/*.{ts,tsx}`), honouring .gitignore, \
         newest first, at most 100."
            .into()
    }

    fn traits(&self) -> ToolTraits {
        ToolTraits::read_only()
    }

    fn intent(
        &self,
        input: &GlobInput,
        location: &Location,
    ) -> Result<Vec<PermissionRequest>, ToolError> {
        compile(&input.pattern)?;
        let resolved = location_paths::resolve(location, input.path.as_deref())?;
        Ok(vec![location_paths::read_request(
            location, "glob", &resolved,
        )])
    }

    async fn execute(&self, input: GlobInput, ctx: ToolContext) -> Result<GlobOutput, ToolError> {
        let globs = compile(&input.pattern)?;
        let (root, display) = location_paths::existing_dir(&ctx, "glob", input.path.as_deref())?;
        // A small tree is walked right here (a thread hand-off costs more
        // than the walk); a large one goes on where it was, off the event
        // loop.
        let rules = tree_walk::Rules {
            allow_credentials: self.state.config.allow_credential_files,
            skip: None,
        };
        let mut found = Vec::new();
        let mut visit = |e: &tree_walk::Entry<'_>| {
            if e.kind == tree_walk::Kind::File {
                let rel = Path::new(OsStr::from_bytes(e.relative));
                found.extend(hit(&root, &globs, rel));
            }
        };
        let mut walk = tree_walk::Walk::new(&root, rules);
        let unreadable = match walk.run(&ctx.cancel, path_globs::INLINE_WALK_ENTRIES, &mut visit)? {
            Some(unreadable) => unreadable,
            None => {
                tree_walk::off_the_event_loop(|| walk.run(&ctx.cancel, usize::MAX, &mut visit))?
                    // An unbounded walk always finishes.
                    .unwrap_or_default()
            }
        };
        let walked = (found, unreadable);
        Ok(newest_first(
            display,
            walked,
            self.state.config.result_limit,
        ))
    }

    fn project(&self, output: &GlobOutput) -> Vec<Content> {
        let mut text = if output.files.is_empty() {
            "No files found".to_string()
        } else {
            // One line per path, each as `name_text` shows it: a line break
            // in a name cannot forge another path.
            let shown: Vec<_> = output.files.iter().map(|f| name_text(f)).collect();
            shown.join("\n")
        };
        if let Some(note) = &output.note {
            text.push_str(&format!("\n\n({note})"));
        }
        vec![Content::text(text)]
    }
}
