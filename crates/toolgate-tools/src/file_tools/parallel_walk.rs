//! The parallel directory walk behind `list`, `glob` and `grep`: ripgrep's
//! `ignore` crate, honouring `.gitignore`/`.ignore`, skipping `.git` and (unless
//! allowed) hidden credential files, on every core.

use std::borrow::Cow;
use std::collections::HashMap;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use globset::{Glob, GlobBuilder, GlobSet, GlobSetBuilder};
use ignore::{DirEntry, ParallelVisitor, ParallelVisitorBuilder, WalkBuilder, WalkState};
use tokio_util::sync::CancellationToken;
use toolgate_core::{ToolError, credential};

use super::FileToolsConfig;

/// Whether a walked entry is a credential (core's one table, see
/// [`toolgate_core::credential`]): a secret directory (`.ssh`), an entry of a
/// secret pair (`.docker/config.json`), or a file secret by name (`.env`,
/// `.npmrc`, `.netrc`, `.git-credentials`, `id_rsa`…, in any case).
fn is_credential_entry(path: &Path, name: &[u8], is_dir: bool) -> bool {
    credential::is_credential_entry(parent_name(path), name, is_dir)
}

/// The name of the directory holding `path`, by slicing bytes.
fn parent_name(path: &Path) -> Option<&[u8]> {
    let bytes = path.as_os_str().as_bytes();
    let end = bytes.iter().rposition(|&b| b == b'/')?;
    let dir = &bytes[..end];
    let start = dir.iter().rposition(|&b| b == b'/').map_or(0, |i| i + 1);
    Some(&dir[start..])
}

/// The last component of an entry's path as bytes. Slices after the last `/`
/// instead of parsing components (`Path::file_name`), which is a measurable
/// cost per entry; paths that do not end in a plain name fall back to it.
fn entry_name(path: &Path) -> &[u8] {
    let bytes = path.as_os_str().as_bytes();
    let name = match bytes.iter().rposition(|&b| b == b'/') {
        Some(i) => &bytes[i + 1..],
        None => bytes,
    };
    match name {
        b"" | b"." | b".." => path.file_name().map_or(bytes, OsStr::as_bytes),
        name => name,
    }
}

/// `path` as text, replacing bytes that are not UTF-8 like
/// `Path::to_string_lossy`, but checking with the faster `str::from_utf8`
/// first (names are nearly always valid).
pub fn path_text(path: &Path) -> Cow<'_, str> {
    let bytes = path.as_os_str().as_bytes();
    match std::str::from_utf8(bytes) {
        Ok(text) => Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

/// A walker over `root` with the file tools' rules; entries whose path relative
/// to `root` matches `skip` are left out (a directory with everything below it).
pub fn walker(root: &Path, config: &FileToolsConfig, skip: Option<PathGlobs>) -> WalkBuilder {
    let mut builder = WalkBuilder::new(root);
    let threads = if config.threads == 0 {
        cores()
    } else {
        config.threads
    };
    builder
        .hidden(false)
        .git_ignore(true)
        .git_exclude(true)
        .require_git(false)
        .parents(parents_have_ignore_files(root))
        .follow_links(false)
        .threads(threads);
    let allow_credentials = config.allow_credential_files;
    let root = root.to_path_buf();
    let skip = skip.filter(|globs| !globs.is_empty());
    // One filter only: `WalkBuilder::filter_entry` replaces any earlier one.
    builder.filter_entry(move |e| {
        let name = entry_name(e.path());
        if name == b".git" {
            return false;
        }
        if !allow_credentials
            && e.depth() > 0
            && is_credential_entry(e.path(), name, e.file_type().is_some_and(|t| t.is_dir()))
        {
            return false;
        }
        match &skip {
            Some(globs) => {
                let rel = under(&root, e.path());
                rel.as_os_str().is_empty() || !globs.is_match(rel)
            }
            None => true,
        }
    });
    builder
}

/// What makes a directory a source of ignore rules for the walk: the files the
/// `ignore` crate reads (`.git` for `.git/info/exclude`, also when `.git` is a
/// worktree's link file). No custom ignore file names are configured.
const IGNORE_SOURCES: &[&str] = &[".gitignore", ".ignore", ".git"];

/// Whether any directory above `root` (a canonical path, as the crate sees its
/// parents) holds an ignore source. When none does, the parents' rules are
/// empty and matching every entry against them (`WalkBuilder::parents`, which
/// joins a new absolute path per entry) changes nothing, so it is skipped: a
/// few `lstat`s per walk instead of work per entry.
pub(super) fn parents_have_ignore_files(root: &Path) -> bool {
    root.ancestors().skip(1).any(has_ignore_files)
}

/// Whether `dir` holds an ignore source (any kind of file by that name counts,
/// even a dangling link: it errs towards matching).
fn has_ignore_files(dir: &Path) -> bool {
    IGNORE_SOURCES
        .iter()
        .any(|name| dir.join(name).symlink_metadata().is_ok())
}

/// The cores this process may use, asked once: `available_parallelism` reads
/// cgroup files on every call, a measurable cost per `list` of a small tree.
fn cores() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(2, usize::from))
}

/// Builds a glob matcher; patterns without `/` match a file name anywhere, like
/// ripgrep's `--glob`. Clones share one compiled set.
#[derive(Clone, Debug)]
pub struct PathGlobs {
    sets: Arc<GlobSets>,
}

/// The compiled sets behind [`PathGlobs`].
#[derive(Debug)]
struct GlobSets {
    by_name: GlobSet,
    by_path: GlobSet,
}

/// Compiled pattern lists seen lately, by their patterns as given. Building a
/// set compiles its regexes to a DFA, about a quarter of a `glob` call's CPU,
/// and every call builds the same patterns twice: for the permission request
/// and for the run. Bounded: when full it starts over.
#[derive(Debug, Default)]
struct GlobCache {
    sets: Mutex<HashMap<Vec<String>, PathGlobs>>,
}

/// Pattern lists the process-wide [`GlobCache`] holds at most.
const GLOB_CACHE_ENTRIES: usize = 32;

impl GlobCache {
    /// The process-wide cache.
    fn shared() -> &'static GlobCache {
        static CACHE: OnceLock<GlobCache> = OnceLock::new();
        CACHE.get_or_init(GlobCache::default)
    }

    /// The compiled `patterns`, built (and kept) unless already there. Invalid
    /// patterns are an error each time and are not kept.
    fn get<S: AsRef<str>>(&self, patterns: &[S], limit: usize) -> Result<PathGlobs, ToolError> {
        let key: Vec<String> = patterns.iter().map(|p| p.as_ref().to_owned()).collect();
        let lock = || self.sets.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(found) = lock().get(&key) {
            return Ok(found.clone());
        }
        let built = PathGlobs::build(patterns)?;
        let mut sets = lock();
        if sets.len() >= limit {
            sets.clear();
        }
        sets.insert(key, built.clone());
        Ok(built)
    }
}

impl PathGlobs {
    /// Compiles `patterns` (or finds them compiled); an invalid one is an error
    /// naming it.
    pub fn new<S: AsRef<str>>(patterns: &[S]) -> Result<PathGlobs, ToolError> {
        GlobCache::shared().get(patterns, GLOB_CACHE_ENTRIES)
    }

    /// Compiles `patterns`.
    fn build<S: AsRef<str>>(patterns: &[S]) -> Result<PathGlobs, ToolError> {
        let mut by_name = GlobSetBuilder::new();
        let mut by_path = GlobSetBuilder::new();
        for raw in patterns {
            let raw = raw.as_ref();
            let pattern = raw.trim().trim_start_matches("./").trim_end_matches('/');
            if pattern.is_empty() {
                return Err(ToolError::InvalidInput(format!(
                    "empty glob pattern {raw:?}"
                )));
            }
            let glob = compile(pattern)?;
            if pattern.contains('/') {
                by_path.add(glob);
            } else {
                by_name.add(glob);
            }
        }
        let build = |b: GlobSetBuilder| {
            b.build()
                .map_err(|e| ToolError::InvalidInput(format!("invalid glob: {e}")))
        };
        Ok(PathGlobs {
            sets: Arc::new(GlobSets {
                by_name: build(by_name)?,
                by_path: build(by_path)?,
            }),
        })
    }

    /// Whether there are no patterns at all (nothing can match).
    pub fn is_empty(&self) -> bool {
        self.sets.by_name.is_empty() && self.sets.by_path.is_empty()
    }

    /// Whether `relative` (from the search root) matches any pattern.
    pub fn is_match(&self, relative: &Path) -> bool {
        let sets = &*self.sets;
        (!sets.by_name.is_empty()
            && relative
                .file_name()
                .is_some_and(|n| sets.by_name.is_match(n)))
            || (!sets.by_path.is_empty() && sets.by_path.is_match(relative))
    }
}

/// Compiles one glob with `*` not crossing `/`.
pub fn compile(pattern: &str) -> Result<Glob, ToolError> {
    GlobBuilder::new(pattern)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .map_err(|e| ToolError::InvalidInput(format!("invalid glob {pattern:?}: {e}")))
}

/// Entries `list` and `glob` walk on the event loop before a walk moves to
/// walker threads (see [`small_walk`](super::small_walk)).
pub const INLINE_WALK_ENTRIES: usize = 4096;

/// Entries walked between two looks at the cancellation token (one when the
/// walk starts): a look takes the token's lock, a measurable cost per entry,
/// while 64 entries take some tens of microseconds.
const CANCEL_CHECK_EVERY: usize = 64;

/// Walks `builder` on all its threads. Each thread gets its own state from
/// `init`; `visit` turns an entry into zero or one result. Stops when `cancel`
/// fires. Unreadable entries are skipped and counted.
pub fn collect_parallel<S, T, I, F>(
    builder: &WalkBuilder,
    cancel: &CancellationToken,
    init: I,
    visit: F,
) -> Result<(Vec<T>, usize), ToolError>
where
    S: Send,
    T: Send,
    I: Fn() -> S + Sync,
    F: Fn(&mut S, &DirEntry) -> Option<T> + Sync,
{
    let shared = Mutex::new((Vec::new(), 0usize));
    let mut visitors = Builder {
        shared: &shared,
        init: &init,
        visit: &visit,
        cancel,
    };
    builder.build_parallel().visit(&mut visitors);
    if cancel.is_cancelled() {
        return Err(ToolError::Cancelled);
    }
    Ok(shared.into_inner().unwrap_or_else(PoisonError::into_inner))
}

/// Walks `builder` on the calling thread, one entry at a time, as long as the
/// tree is small: returns `None` as soon as more than `budget` entries were
/// seen. The crate's own sequential walk, kept as the reference that
/// [`small_walk`](super::small_walk) (what the tools use) is compared with.
#[cfg(test)]
pub fn collect_small<T, F>(
    builder: &WalkBuilder,
    cancel: &CancellationToken,
    budget: usize,
    mut visit: F,
) -> Result<Option<(Vec<T>, usize)>, ToolError>
where
    F: FnMut(&DirEntry) -> Option<T>,
{
    let mut found = Vec::new();
    let mut errors = 0;
    for (seen, entry) in builder.build().enumerate() {
        if seen >= budget {
            return Ok(None);
        }
        if seen % CANCEL_CHECK_EVERY == 0 && cancel.is_cancelled() {
            return Err(ToolError::Cancelled);
        }
        match entry {
            Ok(e) => found.extend(visit(&e)),
            Err(e) => {
                tracing::debug!(error = %e, "skipping unreadable entry");
                errors += 1;
            }
        }
    }
    Ok(Some((found, errors)))
}

type Shared<T> = Mutex<(Vec<T>, usize)>;

struct Builder<'s, T, I, F> {
    shared: &'s Shared<T>,
    init: &'s I,
    visit: &'s F,
    cancel: &'s CancellationToken,
}

impl<'s, S, T, I, F> ParallelVisitorBuilder<'s> for Builder<'s, T, I, F>
where
    S: Send + 's,
    T: Send + 's,
    I: Fn() -> S + Sync,
    F: Fn(&mut S, &DirEntry) -> Option<T> + Sync,
{
    fn build(&mut self) -> Box<dyn ParallelVisitor + 's> {
        Box::new(Visitor {
            shared: self.shared,
            visit: self.visit,
            cancel: self.cancel,
            state: (self.init)(),
            found: Vec::new(),
            errors: 0,
            seen: 0,
        })
    }
}

struct Visitor<'s, S, T, F> {
    shared: &'s Shared<T>,
    visit: &'s F,
    cancel: &'s CancellationToken,
    state: S,
    found: Vec<T>,
    errors: usize,
    seen: usize,
}

impl<S, T, F> ParallelVisitor for Visitor<'_, S, T, F>
where
    S: Send,
    T: Send,
    F: Fn(&mut S, &DirEntry) -> Option<T> + Sync,
{
    fn visit(&mut self, entry: Result<DirEntry, ignore::Error>) -> WalkState {
        let seen = self.seen;
        self.seen += 1;
        if seen.is_multiple_of(CANCEL_CHECK_EVERY) && self.cancel.is_cancelled() {
            return WalkState::Quit;
        }
        match entry {
            Ok(e) => {
                if let Some(t) = (self.visit)(&mut self.state, &e) {
                    self.found.push(t);
                }
            }
            Err(e) => {
                tracing::debug!(error = %e, "skipping unreadable entry");
                self.errors += 1;
            }
        }
        WalkState::Continue
    }
}

impl<S, T, F> Drop for Visitor<'_, S, T, F> {
    fn drop(&mut self) {
        let mut shared = self.shared.lock().unwrap_or_else(PoisonError::into_inner);
        shared.0.append(&mut self.found);
        shared.1 += self.errors;
    }
}

/// `path` relative to `root`, for a path the walk of `root` produced. Slices
/// bytes instead of comparing components (`Path::strip_prefix`), which is a
/// measurable cost per file on large trees.
pub fn under<'p>(root: &Path, path: &'p Path) -> &'p Path {
    let bytes = path.as_os_str().as_bytes();
    let prefix = root.as_os_str().as_bytes();
    let rest = match bytes.strip_prefix(prefix) {
        Some(rest) if prefix.ends_with(b"/") => rest,
        Some([]) => &[][..],
        Some([b'/', rest @ ..]) => rest,
        _ => return path,
    };
    Path::new(OsStr::from_bytes(rest))
}

/// Whether an entry is a regular file (symlinks are not followed).
pub fn is_file(e: &DirEntry) -> bool {
    e.file_type().is_some_and(|t| t.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn credential(p: &str, is_dir: bool) -> bool {
        let path = Path::new(OsStr::from_bytes(p.as_bytes()));
        is_credential_entry(path, entry_name(path), is_dir)
    }

    #[test]
    fn credential_names() {
        for secret in [
            "/ws/.env",
            "/ws/.env.local",
            "/ws/.ENV",
            "/ws/.npmrc",
            "/ws/.netrc",
            "/ws/.git-credentials",
            "/ws/keys/ID_RSA",
            "/ws/.docker/config.json",
        ] {
            assert!(credential(secret, false), "{secret}");
        }
        assert!(credential("/ws/.ssh", true));
        assert!(!credential("/ws/.env", true), "a virtualenv called .env");
        for plain in [
            "/ws/.env.example",
            "/ws/.env.sample",
            "/ws/env",
            "/ws/config.json",
        ] {
            assert!(!credential(plain, false), "{plain}");
        }
    }

    #[test]
    fn credential_names_that_are_not_utf8() {
        let entry = |b: &[u8]| {
            let mut p = b"/ws/".to_vec();
            p.extend_from_slice(b);
            let path = Path::new(OsStr::from_bytes(&p)).to_path_buf();
            is_credential_entry(&path, b, false)
        };
        assert!(entry(b".env\xff"));
        assert!(entry(b".env.\xffexample"));
        assert!(!entry(b"\xff.env"));
    }

    #[test]
    fn parent_names_by_slicing() {
        assert_eq!(parent_name(Path::new("/ws/a/b")), Some(&b"a"[..]));
        assert_eq!(parent_name(Path::new("a/b")), Some(&b"a"[..]));
        assert_eq!(parent_name(Path::new("b")), None);
    }

    #[test]
    fn entry_names_are_the_last_component() {
        fn name(p: &str) -> &[u8] {
            entry_name(Path::new(p))
        }
        assert_eq!(name("/ws/a/.git"), b".git");
        assert_eq!(name("/ws/a/b.rs"), b"b.rs");
        assert_eq!(name("b.rs"), b"b.rs");
        assert_eq!(name("/ws/a/"), b"a");
        assert_eq!(name("/ws/a/."), b"a");
        assert_eq!(name("/"), b"/");
        assert_eq!(
            entry_name(Path::new(OsStr::from_bytes(b"/ws/\xff.env"))),
            b"\xff.env"
        );
    }

    #[test]
    fn path_text_replaces_bytes_that_are_not_utf8() {
        assert!(matches!(
            path_text(Path::new("a/b.rs")),
            Cow::Borrowed("a/b.rs")
        ));
        let odd = Path::new(OsStr::from_bytes(b"a/\xffb"));
        assert_eq!(path_text(odd), odd.to_string_lossy());
        assert_eq!(path_text(odd), "a/\u{FFFD}b");
    }

    #[test]
    fn empty_globs_match_nothing() {
        let none: [&str; 0] = [];
        let g = PathGlobs::new(&none).unwrap();
        assert!(g.is_empty());
        assert!(!g.is_match(Path::new("a")));
        assert!(!PathGlobs::new(&["*.rs"]).unwrap().is_empty());
    }

    #[test]
    fn ignore_sources_of_a_directory() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        assert!(!has_ignore_files(d));
        std::fs::write(d.join("README.md"), "").unwrap();
        assert!(!has_ignore_files(d));
        for name in IGNORE_SOURCES {
            let p = d.join(name);
            std::fs::write(&p, "").unwrap();
            assert!(has_ignore_files(d), "{name}");
            std::fs::remove_file(&p).unwrap();
        }
        std::fs::create_dir(d.join(".git")).unwrap();
        assert!(has_ignore_files(d), ".git directory");
        std::fs::remove_dir(d.join(".git")).unwrap();
        std::os::unix::fs::symlink(d.join("missing"), d.join(".gitignore")).unwrap();
        assert!(has_ignore_files(d), "dangling link");
    }

    #[test]
    fn parents_are_looked_at_above_the_root_only() {
        let dir = tempfile::tempdir().unwrap();
        let d = std::fs::canonicalize(dir.path()).unwrap();
        let sub = d.join("a/b");
        std::fs::create_dir_all(&sub).unwrap();
        // The root's own rules are read by the walk whatever `parents` says.
        std::fs::write(sub.join(".gitignore"), "x\n").unwrap();
        let above = parents_have_ignore_files(&d);
        assert_eq!(parents_have_ignore_files(&sub), above);
        std::fs::write(d.join("a/.ignore"), "x\n").unwrap();
        assert!(parents_have_ignore_files(&sub));
        assert_eq!(parents_have_ignore_files(&d.join("a")), above);
    }

    /// A tree of `n` files in a fresh directory.
    fn tree(n: usize) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..n {
            std::fs::write(dir.path().join(format!("f{i:04}")), "").unwrap();
        }
        dir
    }

    #[test]
    fn a_cancelled_walk_stops_soon_after() {
        let dir = tree(1000);
        let config = FileToolsConfig::default();
        let builder = walker(dir.path(), &config, None);
        // Cancelled before it starts: nothing is visited.
        let cancel = CancellationToken::new();
        cancel.cancel();
        let mut visited = 0;
        let out = collect_small(&builder, &cancel, 4096, |_| {
            visited += 1;
            Some(())
        });
        assert!(matches!(out, Err(ToolError::Cancelled)));
        assert_eq!(visited, 0);
        let out = collect_parallel(&builder, &cancel, || (), |_, _| Some(()));
        assert!(matches!(out, Err(ToolError::Cancelled)));
        // Cancelled while walking: at most one check interval more.
        let cancel = CancellationToken::new();
        let mut visited = 0;
        let out = collect_small(&builder, &cancel, 4096, |_| {
            visited += 1;
            if visited == 10 {
                cancel.cancel();
            }
            Some(())
        });
        assert!(matches!(out, Err(ToolError::Cancelled)));
        assert!(visited <= 10 + CANCEL_CHECK_EVERY, "{visited}");
        let cancel = CancellationToken::new();
        let visited = std::sync::atomic::AtomicUsize::new(0);
        let out = collect_parallel(
            &builder,
            &cancel,
            || (),
            |_, _| {
                if visited.fetch_add(1, std::sync::atomic::Ordering::Relaxed) == 9 {
                    cancel.cancel();
                }
                Some(())
            },
        );
        assert!(matches!(out, Err(ToolError::Cancelled)));
        let visited = visited.into_inner();
        let threads = cores();
        assert!(visited <= 10 + threads * CANCEL_CHECK_EVERY, "{visited}");
    }

    #[test]
    fn an_uncancelled_walk_sees_every_entry() {
        let dir = tree(300);
        let config = FileToolsConfig::default();
        let builder = walker(dir.path(), &config, None);
        let cancel = CancellationToken::new();
        let (files, errors) = collect_small(&builder, &cancel, 4096, |e| is_file(e).then_some(()))
            .unwrap()
            .unwrap();
        assert_eq!((files.len(), errors), (300, 0));
        assert!(
            collect_small(&builder, &cancel, 100, |_| Some(()))
                .unwrap()
                .is_none()
        );
        let (files, errors) =
            collect_parallel(&builder, &cancel, || (), |_, e| is_file(e).then_some(())).unwrap();
        assert_eq!((files.len(), errors), (300, 0));
    }

    #[test]
    fn the_glob_cache_shares_compiled_sets_and_stays_bounded() {
        let cache = GlobCache::default();
        let a = cache.get(&["*.rs", "src/*.toml"], 4).unwrap();
        let b = cache.get(&["*.rs", "src/*.toml"], 4).unwrap();
        assert!(Arc::ptr_eq(&a.sets, &b.sets));
        assert!(b.is_match(Path::new("x/y.rs")) && b.is_match(Path::new("src/c.toml")));
        // Order and spelling are part of the key: a different list compiles anew.
        let c = cache.get(&["src/*.toml", "*.rs"], 4).unwrap();
        assert!(!Arc::ptr_eq(&a.sets, &c.sets));
        // Errors are reported every time and not kept.
        for _ in 0..2 {
            let e = cache.get(&["a[b"], 4).unwrap_err();
            assert!(e.to_string().contains("a[b"), "{e}");
        }
        for i in 0..10 {
            cache.get(&[format!("*.{i}")], 4).unwrap();
            assert!(cache.sets.lock().unwrap().len() <= 4);
        }
        // The shared cache gives the same answers as a fresh build.
        let shared = PathGlobs::new(&["*.rs"]).unwrap();
        let fresh = PathGlobs::build(&["*.rs"]).unwrap();
        for p in ["a.rs", "a/b.rs", "a.rsx", "rs"] {
            assert_eq!(shared.is_match(Path::new(p)), fresh.is_match(Path::new(p)));
        }
    }

    #[test]
    fn globs_by_name_and_by_path() {
        let g = PathGlobs::new(&["*.rs", "src/*.toml"]).unwrap();
        assert!(g.is_match(Path::new("a/b/c.rs")));
        assert!(g.is_match(Path::new("src/x.toml")));
        assert!(!g.is_match(Path::new("src/a/x.toml")));
        assert!(PathGlobs::new(&["a[b"]).is_err());
    }

    #[test]
    fn under_slices_the_root_off() {
        assert_eq!(
            under(Path::new("/ws"), Path::new("/ws/a/b")),
            Path::new("a/b")
        );
        assert_eq!(under(Path::new("/ws"), Path::new("/ws")), Path::new(""));
        assert_eq!(
            under(Path::new("/ws"), Path::new("/other/x")),
            Path::new("/other/x")
        );
        assert_eq!(
            under(Path::new("/ws"), Path::new("/wsx/a")),
            Path::new("/wsx/a")
        );
        assert_eq!(under(Path::new("/"), Path::new("/a/b")), Path::new("a/b"));
    }
}
