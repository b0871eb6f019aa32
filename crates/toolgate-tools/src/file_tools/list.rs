//! `list`: the files under a directory, honouring `.gitignore`.

use std::cmp::Ordering;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolgate_core::{
    Content, Location, PermissionRequest, Tool, ToolContext, ToolError, ToolTraits,
};

use toolgate_core::visible::name_text;

use super::path_globs::{self, PathGlobs};
use super::tree_walk;
use super::{FileState, location_paths};

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
        let resolved = location_paths::resolve(location, input.path.as_deref())?;
        Ok(vec![location_paths::read_request(
            location, "list", &resolved,
        )])
    }

    async fn execute(&self, input: ListInput, ctx: ToolContext) -> Result<ListOutput, ToolError> {
        let ignore = PathGlobs::new(input.ignore.as_deref().unwrap_or(&[]))?;
        let (root, display) = location_paths::existing_dir(&ctx, "list", input.path.as_deref())?;
        let limit = self.state.config.result_limit;
        // A small tree is walked right here, its names gathered in one buffer;
        // a large one goes on where it was, off the event loop.
        let mut text = String::new();
        let mut spans = Vec::new();
        let rules = tree_walk::Rules {
            allow_credentials: self.state.config.allow_credential_files,
            skip: Some(&ignore).filter(|globs| !globs.is_empty()),
        };
        let mut visit = |e: &tree_walk::Entry<'_>| {
            if e.kind == tree_walk::Kind::File {
                let start = text.len();
                text.push_str(&path_globs::path_text(Path::new(OsStr::from_bytes(
                    e.relative,
                ))));
                spans.push(Span(start, text.len()));
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
        Ok(listing(display, spans, &text, unreadable, limit))
    }

    fn project(&self, output: &ListOutput) -> Vec<Content> {
        let mut text = format!(
            "{}/\n{}",
            name_text(&output.path),
            render_tree(&output.files)
        );
        if let Some(note) = &output.note {
            text.push_str(&format!("\n({note})"));
        }
        vec![Content::text(text)]
    }
}

/// A name found by a walk, as the byte range it takes in a shared buffer: one
/// buffer grows for all names instead of an allocation each, and only the
/// names returned become `String`s.
#[derive(Clone, Copy, Debug)]
struct Span(usize, usize);

/// Something that gives a file name, itself or out of a shared buffer.
trait Named {
    /// The name, `text` being the shared buffer (unused by owned names).
    fn name<'a>(&'a self, text: &'a str) -> &'a str;
}

impl Named for Span {
    fn name<'a>(&'a self, text: &'a str) -> &'a str {
        &text[self.0..self.1]
    }
}

impl Named for String {
    fn name<'a>(&'a self, _text: &'a str) -> &'a str {
        self
    }
}

/// The output for the files found: sorted, the first `limit` of them.
fn listing<T: Named>(
    path: String,
    mut found: Vec<T>,
    text: &str,
    unreadable: usize,
    limit: usize,
) -> ListOutput {
    let total = found.len();
    first_sorted_by(&mut found, limit, |a, b| a.name(text).cmp(b.name(text)));
    let files: Vec<String> = found.iter().map(|f| f.name(text).to_owned()).collect();
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

/// Keeps the `limit` first of `items` in the order `cmp`, sorted. Only those
/// are returned, so the rest are set apart in linear time
/// (`select_nth_unstable_by`) instead of being sorted too.
fn first_sorted_by<T>(items: &mut Vec<T>, limit: usize, cmp: impl Fn(&T, &T) -> Ordering) {
    if limit == 0 {
        items.clear();
        return;
    }
    if items.len() > limit {
        items.select_nth_unstable_by(limit - 1, &cmp);
        items.truncate(limit);
    }
    items.sort_unstable_by(cmp);
}

/// The "N more" note shared by `list`, `glob` and `grep`.
pub fn more_note(more: usize, what: &str, how: &str) -> Option<String> {
    (more > 0).then(|| format!("{more} more {what} not shown; {how}"))
}

/// Sorted relative paths as an indented tree, each name as
/// [`name_text`] shows it (a line break in a name cannot forge an entry).
/// Writes straight into one buffer: no vector or string per file.
fn render_tree(files: &[String]) -> String {
    let mut out = String::with_capacity(files.iter().map(|f| f.len() + 8).sum());
    let mut open: Vec<&str> = Vec::new();
    for file in files {
        let (dirs, name) = match file.rsplit_once('/') {
            Some((dirs, name)) => (Some(dirs), name),
            None => (None, file.as_str()),
        };
        let mut depth = 0;
        for dir in dirs.into_iter().flat_map(|d| d.split('/')) {
            if open.get(depth) != Some(&dir) {
                open.truncate(depth);
                indent(&mut out, depth + 1);
                out.push_str(&name_text(dir));
                out.push_str("/\n");
                open.push(dir);
            }
            depth += 1;
        }
        open.truncate(depth);
        indent(&mut out, depth + 1);
        out.push_str(&name_text(name));
        out.push('\n');
    }
    out
}

/// Two spaces per level.
fn indent(out: &mut String, levels: usize) {
    for _ in 0..levels {
        out.push_str("  ");
    }
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
            first_sorted_by(&mut items, limit, Ord::cmp);
            let want: Vec<u32> = (0..500).take(limit).collect();
            assert_eq!(items, want, "limit {limit}");
        }
        let mut names = ["b/a", "a", "a/b", "B", "a.b", "ä"]
            .map(String::from)
            .to_vec();
        first_sorted_by(&mut names, 4, Ord::cmp);
        assert_eq!(names, ["B", "a", "a.b", "a/b"]);
    }

    #[test]
    fn listing_counts_every_file_and_returns_the_first() {
        let files: Vec<String> = (0..250).rev().map(|i| format!("f{i:03}")).collect();
        let out = listing("/ws".into(), files, "", 2, 100);
        assert_eq!(out.total, 250);
        assert_eq!(out.more, 150);
        assert_eq!(out.unreadable, 2);
        assert_eq!(out.files.len(), 100);
        assert_eq!(out.files[0], "f000");
        assert_eq!(out.files[99], "f099");
        assert!(out.note.is_some_and(|n| n.starts_with("150 more files")));
        let out = listing("/ws".into(), vec!["b".to_string(), "a".into()], "", 0, 100);
        assert_eq!(
            (out.files, out.total, out.more),
            (vec!["a".into(), "b".into()], 2, 0)
        );
        assert!(out.note.is_none());
    }

    #[test]
    fn listing_of_names_in_a_shared_buffer() {
        let text = "zz/bb/ab/a";
        let spans = vec![Span(0, 2), Span(2, 4), Span(4, 7), Span(7, 8), Span(8, 10)];
        let out = listing("/ws".into(), spans.clone(), text, 0, 3);
        assert_eq!(out.files, ["/a", "/b", "b"]);
        assert_eq!((out.total, out.more), (5, 2));
        let out = listing("/ws".into(), spans, text, 0, 100);
        assert_eq!(out.files, ["/a", "/b", "b", "b/a", "zz"]);
    }

    #[test]
    fn tree_rendering_of_nested_and_sibling_directories() {
        let files = [
            "/abs",
            "a/b/c/d.rs",
            "a/b/e.rs",
            "a/bc/f.rs",
            "a/g.rs",
            "ab/c/h.rs",
            "i.rs",
            "j/k.rs",
        ]
        .map(String::from);
        assert_eq!(
            render_tree(&files),
            "  /\n    abs\n  a/\n    b/\n      c/\n        d.rs\n      e.rs\n    bc/\n      f.rs\n    \
             g.rs\n  ab/\n    c/\n      h.rs\n  i.rs\n  j/\n    k.rs\n"
        );
        assert_eq!(render_tree(&[]), "");
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
