//! `list`: the files under a directory, honouring `.gitignore`.

use std::path::Path;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolgate_core::{
    Content, Location, PermissionRequest, Tool, ToolContext, ToolError, ToolTraits,
};

use super::walk::{self, PathGlobs};
use super::{FileState, paths};

/// Input of `list`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListInput {
    /// The directory to list; default the workspace root.
    #[serde(default)]
    pub path: Option<String>,
    /// Globs of files or directories to leave out (`target`, `*.log`, `docs/**`).
    #[serde(default)]
    pub ignore: Option<Vec<String>>,
}

/// Output of `list`.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct ListOutput {
    /// The canonical directory listed.
    pub path: String,
    /// Files, relative to `path`, sorted.
    pub files: Vec<String>,
    /// Files found in all.
    pub total: usize,
    /// Files found but not returned.
    pub more: usize,
    /// Entries that could not be read.
    pub unreadable: usize,
    /// The "more results" note.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// The `list` tool.
#[derive(Debug)]
pub struct ListTool {
    state: Arc<FileState>,
}

impl ListTool {
    /// A `list` tool over shared state.
    pub fn new(state: Arc<FileState>) -> Self {
        ListTool { state }
    }
}

impl Tool for ListTool {
    type Input = ListInput;
    type Output = ListOutput;

    fn description(&self) -> String {
        "Lists the files under a directory (default the workspace root) as a tree, \
         honouring .gitignore; `ignore` takes globs to leave out. At most 100 files."
            .into()
    }

    fn traits(&self) -> ToolTraits {
        ToolTraits::read_only()
    }

    fn intent(
        &self,
        input: &ListInput,
        location: &Location,
    ) -> Result<Vec<PermissionRequest>, ToolError> {
        PathGlobs::new(input.ignore.as_deref().unwrap_or(&[]))?;
        let resolved = paths::resolve(location, input.path.as_deref())?;
        Ok(vec![paths::read_request("list", &resolved)])
    }

    async fn execute(&self, input: ListInput, ctx: ToolContext) -> Result<ListOutput, ToolError> {
        let ignore = PathGlobs::new(input.ignore.as_deref().unwrap_or(&[]))?;
        let resolved = paths::resolve(&ctx.location, input.path.as_deref())?;
        let root = resolved.path;
        let display = root.display().to_string();
        if !resolved.exists {
            return Err(ToolError::Failed(format!("directory not found: {display}")));
        }
        if !resolved.is_dir {
            return Err(ToolError::Failed(format!(
                "{display} is a file, not a directory"
            )));
        }
        let builder = walk::walker(&root, &self.state.config, Some(ignore));
        let visit = |e: &ignore::DirEntry| walk::is_file(e).then(|| relative_name(&root, e.path()));
        // A small tree is walked right here; a large one again, in parallel, off
        // the event loop.
        let walked = match walk::collect_small(&builder, &ctx.cancel, INLINE_WALK_ENTRIES, visit)? {
            Some(found) => found,
            None => {
                let cancel = ctx.cancel.clone();
                let root = root.clone();
                tokio::task::spawn_blocking(move || {
                    walk::collect_parallel(
                        &builder,
                        &cancel,
                        || (),
                        |_, e| walk::is_file(e).then(|| relative_name(&root, e.path())),
                    )
                })
                .await
                .map_err(|e| ToolError::Failed(format!("list task failed: {e}")))??
            }
        };
        Ok(listing(display, walked, self.state.config.result_limit))
    }

    fn project(&self, output: &ListOutput) -> Vec<Content> {
        let mut text = format!("{}/\n{}", output.path, render_tree(&output.files));
        if let Some(note) = &output.note {
            text.push_str(&format!("\n({note})"));
        }
        vec![Content::text(text)]
    }
}

/// Entries walked on the event loop before a walk moves to walker threads.
const INLINE_WALK_ENTRIES: usize = 4096;

/// The output for the files found: sorted, the first `limit` of them.
fn listing(
    path: String,
    (mut files, unreadable): (Vec<String>, usize),
    limit: usize,
) -> ListOutput {
    let total = files.len();
    first_sorted(&mut files, limit);
    let more = total - files.len();
    ListOutput {
        path,
        note: more_note(more, "files", "give a narrower path or more `ignore` globs"),
        files,
        total,
        more,
        unreadable,
    }
}

/// Keeps the `limit` smallest of `items`, sorted. Only those are returned, so
/// the rest are set apart in linear time (`select_nth_unstable`) instead of
/// being sorted too.
fn first_sorted<T: Ord>(items: &mut Vec<T>, limit: usize) {
    if limit == 0 {
        items.clear();
        return;
    }
    if items.len() > limit {
        items.select_nth_unstable(limit - 1);
        items.truncate(limit);
    }
    items.sort_unstable();
}

/// `path` relative to `root`, `/` separated.
pub fn relative_name(root: &Path, path: &Path) -> String {
    walk::path_text(walk::under(root, path)).into_owned()
}

/// The "N more" note shared by `list`, `glob` and `grep`.
pub fn more_note(more: usize, what: &str, how: &str) -> Option<String> {
    (more > 0).then(|| format!("{more} more {what} not shown; {how}"))
}

/// Sorted relative paths as an indented tree.
fn render_tree(files: &[String]) -> String {
    let mut out = String::new();
    let mut open: Vec<&str> = Vec::new();
    for file in files {
        let parts: Vec<&str> = file.split('/').collect();
        let (dirs, name) = parts.split_at(parts.len() - 1);
        let common = open.iter().zip(dirs).take_while(|(a, b)| a == b).count();
        open.truncate(common);
        for d in &dirs[common..] {
            out.push_str(&format!("{}{d}/\n", "  ".repeat(open.len() + 1)));
            open.push(d);
        }
        out.push_str(&format!("{}{}\n", "  ".repeat(open.len() + 1), name[0]));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_sorted_keeps_the_smallest_in_order() {
        // A fixed shuffle of 0..500 (multiplying by a unit mod 500).
        let shuffled: Vec<u32> = (0..500).map(|i| (i * 37 + 11) % 500).collect();
        for limit in [0, 1, 2, 99, 100, 499, 500, 501, 1000] {
            let mut items = shuffled.clone();
            first_sorted(&mut items, limit);
            let want: Vec<u32> = (0..500).take(limit).collect();
            assert_eq!(items, want, "limit {limit}");
        }
        let mut names = ["b/a", "a", "a/b", "B", "a.b", "ä"]
            .map(String::from)
            .to_vec();
        first_sorted(&mut names, 4);
        assert_eq!(names, ["B", "a", "a.b", "a/b"]);
    }

    #[test]
    fn listing_counts_every_file_and_returns_the_first() {
        let files: Vec<String> = (0..250).rev().map(|i| format!("f{i:03}")).collect();
        let out = listing("/ws".into(), (files, 2), 100);
        assert_eq!(out.total, 250);
        assert_eq!(out.more, 150);
        assert_eq!(out.unreadable, 2);
        assert_eq!(out.files.len(), 100);
        assert_eq!(out.files[0], "f000");
        assert_eq!(out.files[99], "f099");
        assert!(out.note.is_some_and(|n| n.starts_with("150 more files")));
        let out = listing("/ws".into(), (vec!["b".into(), "a".into()], 0), 100);
        assert_eq!(
            (out.files, out.total, out.more),
            (vec!["a".into(), "b".into()], 2, 0)
        );
        assert!(out.note.is_none());
    }

    #[test]
    fn tree_rendering() {
        let files = ["a/b/c.rs", "a/b/d.rs", "a/e.rs", "f.rs"].map(String::from);
        assert_eq!(
            render_tree(&files),
            "  a/\n    b/\n      c.rs\n      d.rs\n    e.rs\n  f.rs\n"
        );
    }
}
