//! `Path` questions answered on the path's bytes.
//!
//! `std::path::Path` answers `starts_with`, `parent` and `file_name` by
//! walking components, which handles every way of writing a path (`//`, `/./`,
//! a trailing `/`). The gate asks these questions dozens of times per
//! decision, almost always of paths it built itself, which are written the
//! plain way. For those the answer can be read from the bytes; any other path
//! takes the component walk, so every function here answers exactly as `std`
//! does (property-tested below against `std` on arbitrary paths).
//!
//! ```
//! use std::path::Path;
//! use toolgate_paths::path_text::{normal_names, parent_and_name, starts_with};
//!
//! assert!(starts_with(Path::new("/ws/src/lib.rs"), Path::new("/ws")));
//! assert!(!starts_with(Path::new("/wsx/lib.rs"), Path::new("/ws")));
//! let (dir, name) = parent_and_name(Path::new("/ws/src/lib.rs")).unwrap();
//! assert_eq!((dir, name), (Path::new("/ws/src"), std::ffi::OsStr::new("lib.rs")));
//! let names: Vec<&[u8]> = normal_names(Path::new("/a/./b/../c/")).collect();
//! assert_eq!(names, [&b"a"[..], b"b", b"c"]);
//! ```

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

/// `path` with `.` and `..` folded by the names alone, without looking at
/// the file system (`/a/./b/../c` is `/a/c`; `..` above the root stays at
/// the root).
///
/// ```
/// use std::path::Path;
/// use toolgate_paths::path_text::lexical;
/// assert_eq!(lexical(Path::new("/a/./b/../c")), Path::new("/a/c"));
/// assert_eq!(lexical(Path::new("/../x")), Path::new("/x"));
/// ```
pub fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// Whether `bytes` is written the plain way: starts with `/`, has no `//`
/// and no `.` component, and ends without `/` (unless it is `/`). Such a
/// path's components are exactly its `/`-separated parts, and two such paths
/// are equal as `Path`s only when their bytes are equal.
pub fn is_plain_absolute(bytes: &[u8]) -> bool {
    if bytes == b"/" {
        return true;
    }
    if bytes.first() != Some(&b'/') || bytes.last() == Some(&b'/') {
        return false;
    }
    // One pass: a `/` followed by `/`, or by `.` that ends a component.
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'/' {
            match bytes.get(i + 1) {
                Some(b'/') => return false,
                Some(b'.') if matches!(bytes.get(i + 2), None | Some(b'/')) => return false,
                _ => {}
            }
        }
        i += 1;
    }
    true
}

/// `path.starts_with(base)`, as `std` answers it.
pub fn starts_with(path: &Path, base: &Path) -> bool {
    let p = path.as_os_str().as_bytes();
    let b = base.as_os_str().as_bytes();
    if is_plain_absolute(b) {
        if let Some(rest) = p.strip_prefix(b) {
            // `/ws` + `/src`, or `/` + `src`: the same components, then more.
            if rest.is_empty() || rest[0] == b'/' || b == b"/" {
                return true;
            }
        }
        if is_plain_absolute(p) {
            return false;
        }
    }
    path.starts_with(base)
}

/// `(path.parent(), path.file_name())` when both exist, as `std` answers.
pub fn parent_and_name(path: &Path) -> Option<(&Path, &OsStr)> {
    let p = path.as_os_str().as_bytes();
    if is_plain_absolute(p) {
        let (dir, name) = split_plain(p)?;
        // `/a/..` has a parent but no file name.
        return (name != b"..").then(|| (dir, OsStr::from_bytes(name)));
    }
    Some((path.parent()?, path.file_name()?))
}

/// `path.parent()`, as `std` answers it.
pub fn parent(path: &Path) -> Option<&Path> {
    let p = path.as_os_str().as_bytes();
    if is_plain_absolute(p) {
        return split_plain(p).map(|(dir, _)| dir);
    }
    path.parent()
}

/// A plain absolute path ([`is_plain_absolute`]) cut at its last `/`: the
/// directory and the last part; `None` for `/`.
fn split_plain(p: &[u8]) -> Option<(&Path, &[u8])> {
    if p.len() == 1 {
        return None;
    }
    let cut = p.iter().rposition(|&b| b == b'/')?;
    let dir = if cut == 0 { &p[..1] } else { &p[..cut] };
    Some((Path::new(OsStr::from_bytes(dir)), &p[cut + 1..]))
}

/// The `Normal` components of `path` (neither the root, `.` nor `..`), as
/// bytes, in order: what `path.components()` gives, filtered, without its
/// state machine.
pub fn normal_names(path: &Path) -> impl DoubleEndedIterator<Item = &[u8]> {
    path.as_os_str()
        .as_bytes()
        .split(|&b| b == b'/')
        .filter(|part| !part.is_empty() && *part != b"." && *part != b"..")
}

/// Whether `path` has a `Normal` component equal to `name`.
pub fn has_name(path: &Path, name: &[u8]) -> bool {
    normal_names(path).any(|n| n == name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::path::Component;

    /// The `Normal` components as `std` gives them.
    fn std_normal_names(path: &Path) -> Vec<&[u8]> {
        path.components()
            .filter_map(|c| match c {
                Component::Normal(s) => Some(s.as_bytes()),
                _ => None,
            })
            .collect()
    }

    /// Paths made of the pieces that change how a path reads.
    fn tricky_path() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            Just("/".to_string()),
            Just("//".to_string()),
            Just(".".to_string()),
            Just("..".to_string()),
            Just("a".to_string()),
            Just("ab".to_string()),
            Just("proc".to_string()),
            Just(".ssh".to_string()),
            "[a-c./]{1,3}",
        ];
        prop::collection::vec(piece, 0..8).prop_map(|parts| parts.concat())
    }

    proptest! {
        #[test]
        fn starts_with_answers_as_std(p in tricky_path(), b in tricky_path()) {
            let (p, b) = (Path::new(&p), Path::new(&b));
            prop_assert_eq!(starts_with(p, b), p.starts_with(b), "{:?} {:?}", p, b);
        }

        #[test]
        fn starts_with_a_prefix_of_itself_answers_as_std(p in tricky_path(), cut in 0usize..40) {
            // Prefixes of the same path are where the byte test says yes.
            let cut = cut.min(p.len());
            let (whole, base) = (Path::new(&p), Path::new(&p[..cut]));
            prop_assert_eq!(starts_with(whole, base), whole.starts_with(base));
        }

        #[test]
        fn parent_and_name_answer_as_std(p in tricky_path()) {
            let path = Path::new(&p);
            let std_answer = match (path.parent(), path.file_name()) {
                (Some(d), Some(n)) => Some((d, n)),
                _ => None,
            };
            prop_assert_eq!(parent_and_name(path), std_answer, "{:?}", path);
            prop_assert_eq!(parent(path), path.parent(), "{:?}", path);
        }

        #[test]
        fn normal_names_are_std_normal_components(p in tricky_path()) {
            let path = Path::new(&p);
            let ours: Vec<&[u8]> = normal_names(path).collect();
            prop_assert_eq!(ours, std_normal_names(path));
            prop_assert_eq!(
                has_name(path, b"proc"),
                std_normal_names(path).contains(&&b"proc"[..])
            );
        }
    }

    #[test]
    fn the_root_and_its_children() {
        assert!(starts_with(Path::new("/"), Path::new("/")));
        assert!(starts_with(Path::new("/x"), Path::new("/")));
        assert!(!starts_with(Path::new("/"), Path::new("/x")));
        assert_eq!(parent(Path::new("/")), None);
        assert_eq!(parent(Path::new("/x")), Some(Path::new("/")));
        assert_eq!(parent_and_name(Path::new("/a/..")), None);
        assert!(has_name(Path::new("/proc/1/environ"), b"proc"));
        assert!(!has_name(Path::new("/procs/1"), b"proc"));
    }
}
