//! `grep`: regex search over files, in-process on ripgrep's crates.

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolgate_core::credential::{self, CredentialInodes};
use toolgate_core::{
    Content, Location, PermissionRequest, Tool, ToolContext, ToolError, ToolTraits,
};

use super::list::more_note;
use super::path_globs::{PathGlobs, path_text};
use super::{FileState, fsio, location_paths, tree_walk, walk_pool};

mod collect;

use collect::{FileHits, LineSink, TopFiles};

/// One glob or several.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum IncludeGlobs {
    /// One glob, e.g. `*.rs` or `*.{ts,tsx}`.
    One(String),
    /// Several globs; a file matching any is searched.
    Many(Vec<String>),
}

impl IncludeGlobs {
    fn patterns(&self) -> Vec<String> {
        match self {
            IncludeGlobs::One(p) => vec![p.clone()],
            IncludeGlobs::Many(ps) => ps.clone(),
        }
    }
}

/// Input of `grep`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GrepInput {
    /// A regular expression (Rust `regex` syntax).
    pub pattern: String,
    /// A directory or file to search; default the workspace root.
    #[serde(default)]
    pub path: Option<String>,
    /// Only search files matching these globs (`*.rs`, `src/**/*.{ts,tsx}`).
    #[serde(default)]
    pub include: Option<IncludeGlobs>,
    /// Match regardless of case. Default false.
    #[serde(default)]
    pub case_insensitive: Option<bool>,
    /// Lines of context before and after each match. Default 0.
    #[serde(default)]
    pub context: Option<u32>,
}

/// A line of output: a match or context.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct GrepLine {
    /// 1-based line number.
    pub line: u64,
    /// The text (cut at 2000 characters).
    pub text: String,
    /// True for a matching line, false for context.
    pub is_match: bool,
}

/// The hits in one file.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct GrepFile {
    /// Relative to the search path (the file name when a file was searched).
    pub path: String,
    /// Matching lines in this file (all of them, shown or not).
    pub matches: usize,
    /// Lines shown, in order.
    pub lines: Vec<GrepLine>,
}

/// Output of `grep`.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct GrepOutput {
    /// The canonical path searched.
    pub path: String,
    /// Files with shown matches, newest first.
    pub files: Vec<GrepFile>,
    /// Matching lines in all files.
    pub total_matches: usize,
    /// Matching lines shown.
    pub shown_matches: usize,
    /// Matching lines not shown.
    pub more: usize,
    /// Files with at least one match.
    pub files_with_matches: usize,
    /// Entries that could not be read.
    pub unreadable: usize,
    /// The "more results" note.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// The `grep` tool.
#[derive(Debug)]
pub struct GrepTool {
    state: Arc<FileState>,
}

impl GrepTool {
    /// A `grep` tool over shared state.
    pub fn new(state: Arc<FileState>) -> Self {
        GrepTool { state }
    }
}

/// The compiled search: matcher, include globs, context.
struct Query {
    matcher: RegexMatcher,
    include: Option<PathGlobs>,
    context: usize,
}

fn compile(input: &GrepInput) -> Result<Query, ToolError> {
    if input.pattern.is_empty() {
        return Err(ToolError::InvalidInput("pattern is empty".into()));
    }
    let matcher = RegexMatcherBuilder::new()
        .case_insensitive(input.case_insensitive.unwrap_or(false))
        .line_terminator(Some(b'\n'))
        .build(&input.pattern)
        .map_err(|e| ToolError::InvalidInput(format!("invalid regex {:?}: {e}", input.pattern)))?;
    let include = match &input.include {
        Some(g) => Some(PathGlobs::new(&g.patterns())?),
        None => None,
    };
    let context = input.context.unwrap_or(0) as usize;
    Ok(Query {
        matcher,
        include,
        context,
    })
}

impl Tool for GrepTool {
    type Input = GrepInput;
    type Output = GrepOutput;

    fn description(&self) -> String {
        "Searches file contents with a regular expression, honouring .gitignore and skipping \
         binary files. `include` limits the files by glob; `context` adds lines around each \
         match. At most 100 matching lines, from the newest files first."
            .into()
    }

    fn traits(&self) -> ToolTraits {
        ToolTraits::read_only()
    }

    fn intent(
        &self,
        input: &GrepInput,
        location: &Location,
    ) -> Result<Vec<PermissionRequest>, ToolError> {
        compile(input)?;
        let resolved = location_paths::resolve(location, input.path.as_deref())?;
        Ok(vec![location_paths::read_request(
            location, "grep", &resolved,
        )])
    }

    async fn execute(&self, input: GrepInput, ctx: ToolContext) -> Result<GrepOutput, ToolError> {
        let query = compile(&input)?;
        let resolved = location_paths::resolve(&ctx.location, input.path.as_deref())?;
        location_paths::judged(&ctx, "grep", &resolved)?;
        let state = Arc::clone(&self.state);
        let cancel = ctx.cancel.clone();
        let location = Arc::clone(&ctx.location);
        tokio::task::spawn_blocking(move || {
            let root = resolved.path;
            let display = root.display().to_string();
            if !resolved.exists {
                return Err(ToolError::Failed(format!("path not found: {display}")));
            }
            search(&state, &location, &root, &query, &cancel).map(|mut out| {
                out.path = display;
                out
            })
        })
        .await
        .map_err(|e| ToolError::caused("grep task failed", e))?
    }

    fn project(&self, output: &GrepOutput) -> Vec<Content> {
        vec![Content::text(collect::render(output))]
    }
}

/// The most heap a search holds for one file's lines: a line longer than
/// this (with its context) makes the file unreadable. Without a limit the
/// searcher's buffer grew to the longest line, a whole file with no line
/// break (300 MB of one line: 430 MB held), on every worker at once.
pub const LINE_HEAP_MAX: usize = 32 * 1024 * 1024;

fn searcher(context: usize) -> Searcher {
    SearcherBuilder::new()
        .heap_limit(Some(LINE_HEAP_MAX))
        .line_number(true)
        .binary_detection(BinaryDetection::quit(b'\x00'))
        .before_context(context)
        .after_context(context)
        .build()
}

fn search(
    state: &FileState,
    location: &Location,
    root: &Path,
    query: &Query,
    cancel: &tokio_util::sync::CancellationToken,
) -> Result<GrepOutput, ToolError> {
    let limit = state.config.result_limit;
    let top = Mutex::new(TopFiles::new(limit));
    // Hard links to credential files, looked up only once a file with more
    // than one link matches.
    let allow_credentials = state.config.allow_credential_files;
    let roots: Vec<&Path> = location.roots().collect();
    let inodes: OnceLock<Arc<CredentialInodes>> = OnceLock::new();
    let home = credential::home_dir();
    // A matcher per thread: a clone gets its own regex cache pool, so the
    // threads do not contend for one.
    // Files whose search failed part way (a line past LINE_HEAP_MAX).
    let cut_short = std::sync::atomic::AtomicUsize::new(0);
    let init = || (searcher(query.context), query.matcher.clone());
    // `named`: the file is the path the call gave (and the gate judged), not
    // one found under it.
    let search_file = |(searcher, matcher): &mut (Searcher, RegexMatcher),
                       relative: &Path,
                       path: &Path,
                       named: bool| {
        if let Some(include) = &query.include {
            if !include.is_match(relative) {
                return;
            }
        }
        // Opened as walked: no symlink followed (one swapped in is skipped).
        let file = match fsio::open_read(Some(location), path) {
            Ok(f) => f,
            Err(err) => {
                tracing::debug!(path = %path.display(), error = %err, "grep skipped a file");
                return;
            }
        };
        let mut sink = LineSink::new(limit);
        if let Err(err) = searcher.search_file(&*matcher, &file, &mut sink) {
            tracing::debug!(path = %path.display(), error = %err, "grep skipped a file");
            cut_short.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            return;
        }
        if sink.binary || sink.matches == 0 {
            return;
        }
        let meta = file.metadata().ok();
        if !allow_credentials && !named {
            if let Some(m) = meta.as_ref().filter(|m| m.nlink() > 1) {
                let set = inodes.get_or_init(|| CredentialInodes::snapshot(&home, &roots));
                if let Some(of) = set.link_of(m) {
                    tracing::debug!(path = %path.display(), of = %of.display(), "grep skipped a hard link to a credential");
                    return;
                }
            }
        }
        let mtime = meta
            .and_then(|m| m.modified().ok())
            .unwrap_or(std::time::SystemTime::UNIX_EPOCH);
        let hits = FileHits {
            path: path_text(relative).into_owned(),
            mtime,
            matches: sink.matches,
            lines: sink.lines,
        };
        top.lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(hits);
    };
    let unreadable = if root.is_dir() {
        let rules = tree_walk::Rules {
            allow_credentials,
            skip: None,
        };
        let workers = state.config.walk_threads();
        walk_pool::for_each_file(root, rules, cancel, workers, init, |state, relative| {
            search_file(state, relative, &root.join(relative), false)
        })?
        .1
    } else {
        // A file given directly is named by its file name.
        let name = root.file_name().map_or(root, Path::new);
        search_file(&mut init(), name, root, true);
        0
    };
    let top = top.into_inner().unwrap_or_else(PoisonError::into_inner);
    let mut out = top.finish(query.context);
    out.unreadable = unreadable + cut_short.into_inner();
    out.note = more_note(
        out.more,
        "matching lines",
        "narrow the pattern, the path or `include`",
    );
    Ok(out)
}
