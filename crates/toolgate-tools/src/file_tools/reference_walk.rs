//! The `ignore` crate's own walk with the file tools' rules, kept as the
//! reference that [`tree_walk`](super::tree_walk) (what the tools use) is
//! compared with: a test walks generated trees with both.
//!
//! The tools stopped using it because it reads ignore files with a blocking
//! open (a FIFO named `.gitignore` stalled the walk) and follows a parent
//! swapped for a link after it was listed (see [`walk_pool`](super::walk_pool)).

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use ignore::{DirEntry, WalkBuilder};
use tokio_util::sync::CancellationToken;
use toolgate_core::{ToolError, credential};

use super::FileToolsConfig;
use super::path_globs::{PathGlobs, cores};
use super::tree_walk::parents_have_ignore_files;

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

/// Entries walked between two looks at the cancellation token (one when the
/// walk starts): a look takes the token's lock, a measurable cost per entry,
/// while 64 entries take some tens of microseconds.
const CANCEL_CHECK_EVERY: usize = 64;

/// Walks `builder` on the calling thread, one entry at a time, as long as the
/// tree is small: returns `None` as soon as more than `budget` entries were
/// seen. The crate's own sequential walk, kept as the reference that
/// [`tree_walk`](super::tree_walk) (what the tools use) is compared with.
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

/// Whether an entry is a regular file (symlinks are not followed).
pub fn is_file(e: &DirEntry) -> bool {
    e.file_type().is_some_and(|t| t.is_file())
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
