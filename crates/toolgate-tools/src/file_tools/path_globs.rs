//! Path globs for `list`'s `ignore`, `glob`'s pattern and `grep`'s `include`
//! (compiled once and cached), and the path helpers the file tools share.

use std::borrow::Cow;
use std::collections::HashMap;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use globset::{Glob, GlobBuilder, GlobSet, GlobSetBuilder};
use toolgate_core::ToolError;

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

/// The cores this process may use, asked once: `available_parallelism` reads
/// cgroup files on every call, a measurable cost per `list` of a small tree.
pub(super) fn cores() -> usize {
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

/// Entries `list` and `glob` walk on the event loop before the walk goes on
/// off it (see [`Walk`](super::tree_walk::Walk)).
pub const INLINE_WALK_ENTRIES: usize = 4096;

#[cfg(test)]
mod tests {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;

    use super::*;

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
}
