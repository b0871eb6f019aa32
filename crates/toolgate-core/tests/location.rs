//! The path resolver against traversal, symlinks and malformed paths.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use toolgate_core::location::{EntryKind, FileSystem, PathLookup};
use toolgate_core::test_util::TempWorkspace;
use toolgate_core::{Location, PathError};

struct Fx {
    _tmp: TempWorkspace,
    ws: PathBuf,
    outside: PathBuf,
    loc: Location,
}

fn fx() -> Fx {
    let tmp = TempWorkspace::new();
    let (ws, outside) = (tmp.ws(), tmp.base().join("outside"));
    std::fs::create_dir_all(ws.join("src/deep")).unwrap();
    tmp.write(ws.join("src/a.rs"), "fn main() {}");
    tmp.write(outside.join("secret.txt"), "s");
    let loc = Location::new(&ws).unwrap();
    Fx {
        _tmp: tmp,
        ws,
        outside,
        loc,
    }
}

#[test]
fn relative_paths_resolve_against_the_root_and_fold_dots() {
    let f = fx();
    let r = f.loc.resolve("src/./deep/..//a.rs").unwrap();
    assert_eq!(r.path, f.ws.join("src/a.rs"));
    assert!(r.inside && r.exists && !r.is_dir);
    assert!(r.external_dir.is_none());
    let r = f.loc.resolve(".").unwrap();
    assert_eq!(r.path, f.ws);
    assert!(r.is_dir);
}

#[test]
fn traversal_cannot_escape_silently() {
    let f = fx();
    for p in [
        "..",
        "../outside/secret.txt",
        "src/../../outside",
        "src/deep/../../../outside/x",
        "/etc/passwd",
    ] {
        let r = f.loc.resolve(p).unwrap();
        assert!(!r.inside, "{p} resolved inside: {}", r.path.display());
        assert!(r.external_dir.is_some(), "{p}");
    }
    let r = f.loc.resolve("../outside/secret.txt").unwrap();
    assert_eq!(r.path, f.outside.join("secret.txt"));
    assert_eq!(r.external_dir.as_deref(), Some(f.outside.as_path()));
    // `..` above `/` stays at `/`.
    let r = f.loc.resolve("/../../../etc").unwrap();
    assert_eq!(r.path, Path::new("/etc"));
}

#[test]
fn a_symlinked_file_pointing_outside_is_external() {
    let f = fx();
    symlink(f.outside.join("secret.txt"), f.ws.join("innocent.txt")).unwrap();
    let r = f.loc.resolve("innocent.txt").unwrap();
    assert_eq!(r.path, f.outside.join("secret.txt"));
    assert!(!r.inside);
}

#[test]
fn a_symlinked_directory_pointing_outside_is_external() {
    let f = fx();
    symlink(&f.outside, f.ws.join("linkdir")).unwrap();
    let r = f.loc.resolve("linkdir/secret.txt").unwrap();
    assert_eq!(r.path, f.outside.join("secret.txt"));
    assert!(!r.inside);
    // `linkdir/..` is the parent of the target, not the workspace.
    let r = f.loc.resolve("linkdir/..").unwrap();
    assert_eq!(r.path, f.outside.parent().unwrap());
    assert!(!r.inside);
}

#[test]
fn symlink_chains_are_followed_to_the_end() {
    let f = fx();
    symlink(f.outside.join("secret.txt"), f.ws.join("c3")).unwrap();
    symlink("c3", f.ws.join("c2")).unwrap();
    symlink("./c2", f.ws.join("c1")).unwrap();
    let r = f.loc.resolve("c1").unwrap();
    assert_eq!(r.path, f.outside.join("secret.txt"));
    assert!(!r.inside);
    // A chain that stays inside is inside.
    symlink("src/a.rs", f.ws.join("ok1")).unwrap();
    symlink("ok1", f.ws.join("ok2")).unwrap();
    let r = f.loc.resolve("ok2").unwrap();
    assert_eq!(r.path, f.ws.join("src/a.rs"));
    assert!(r.inside);
}

#[test]
fn a_symlink_loop_is_a_clear_error() {
    let f = fx();
    symlink("loop2", f.ws.join("loop1")).unwrap();
    symlink("loop1", f.ws.join("loop2")).unwrap();
    let err = f.loc.resolve("loop1/x").unwrap_err();
    assert!(matches!(err, PathError::SymlinkLoop(_)), "{err}");
    assert!(
        err.to_string()
            .contains("too many levels of symbolic links")
    );
}

#[test]
fn a_new_file_under_a_symlinked_parent_resolves_through_the_parent() {
    let f = fx();
    symlink(&f.outside, f.ws.join("out")).unwrap();
    let r = f.loc.resolve("out/new/dir/file.txt").unwrap();
    assert_eq!(r.path, f.outside.join("new/dir/file.txt"));
    assert!(!r.inside && !r.exists);
    assert_eq!(
        r.external_dir.as_deref(),
        Some(f.outside.join("new/dir").as_path())
    );
    // A new file inside, below missing directories, with `..` folded lexically.
    let r = f.loc.resolve("src/missing/../new.rs").unwrap();
    assert_eq!(r.path, f.ws.join("src/new.rs"));
    assert!(r.inside && !r.exists);
}

#[test]
fn proc_self_root_style_paths_are_external() {
    let f = fx();
    let via_root = format!("/proc/self/root{}", f.ws.join("src/a.rs").display());
    // /proc/self/root is a symlink to `/`: the same file, so it is inside.
    let r = f.loc.resolve(&via_root).unwrap();
    assert_eq!(r.path, f.ws.join("src/a.rs"));
    assert!(r.inside);
    let r = f.loc.resolve("/proc/self/root/etc/shadow").unwrap();
    assert_eq!(r.path, Path::new("/etc/shadow"));
    assert!(!r.inside);
    // A link inside the workspace to /proc/self/root escapes to `/`.
    symlink("/proc/self/root", f.ws.join("rootlink")).unwrap();
    let r = f.loc.resolve("rootlink/etc/passwd").unwrap();
    assert_eq!(r.path, Path::new("/etc/passwd"));
    assert!(!r.inside);
    let r = f.loc.resolve("/proc/self/cwd/../../..").unwrap();
    assert!(!r.inside || r.path.starts_with(&f.ws));
}

#[test]
fn nul_bytes_empty_and_overlong_paths_are_clear_errors() {
    let f = fx();
    let err = f.loc.resolve("src/a.rs\0.png").unwrap_err();
    assert!(matches!(err, PathError::Nul(_)));
    assert!(err.to_string().contains("NUL"));
    assert!(matches!(f.loc.resolve("").unwrap_err(), PathError::Empty));
    let long = "a/".repeat(10_000);
    let err = f.loc.resolve(&long).unwrap_err();
    assert!(matches!(err, PathError::TooLong { .. }), "{err}");
    assert!(err.to_string().contains("limit"));
    // One component longer than NAME_MAX: the OS refuses, and we say which path.
    let err = f.loc.resolve(&"x".repeat(300)).unwrap_err();
    assert!(matches!(err, PathError::Unreadable { .. }), "{err}");
}

#[test]
fn a_5kb_path_that_escapes_only_at_its_end_is_external() {
    let f = fx();
    let mut p = String::new();
    while p.len() < 5000 {
        p.push_str("src/deep/../../");
    }
    let inside = f.loc.resolve(&format!("{p}src/a.rs")).unwrap();
    assert!(inside.inside);
    assert_eq!(inside.path, f.ws.join("src/a.rs"));
    let escaping = format!("{p}../outside/secret.txt");
    assert!(escaping.len() > 5000);
    let r = f.loc.resolve(&escaping).unwrap();
    assert_eq!(r.path, f.outside.join("secret.txt"));
    assert!(!r.inside);
}

#[test]
fn extra_roots_count_as_inside() {
    let f = fx();
    let loc = f.loc.clone().with_extra_root(&f.outside).unwrap();
    assert!(loc.resolve("../outside/secret.txt").unwrap().inside);
    assert_eq!(loc.roots().count(), 2);
    assert!(!loc.resolve("/etc/passwd").unwrap().inside);
}

#[test]
fn a_root_that_is_not_a_directory_is_rejected() {
    let f = fx();
    let err = Location::new(f.ws.join("src/a.rs")).unwrap_err();
    assert!(matches!(err, PathError::BadRoot { .. }));
    assert!(Location::new(f.ws.join("missing")).is_err());
}

#[test]
fn the_root_itself_may_be_a_symlink() {
    let f = fx();
    let link = f.outside.join("ws-link");
    symlink(&f.ws, &link).unwrap();
    let loc = Location::new(&link).unwrap();
    assert_eq!(loc.root(), f.ws.as_path());
    assert!(loc.resolve("src/a.rs").unwrap().inside);
}

#[test]
fn home_is_expanded() {
    let f = fx();
    let home = std::env::var("HOME").unwrap();
    let r = f.loc.resolve("~/.ssh/id_rsa").unwrap();
    assert!(
        r.path
            .starts_with(std::fs::canonicalize(&home).unwrap_or(home.into()))
    );
    assert!(!r.inside);
}

/// A lookup that tells the file system's answers, or lies about one path.
struct Recording {
    asked: std::cell::RefCell<Vec<PathBuf>>,
    lie: Option<(PathBuf, PathBuf)>,
}

impl PathLookup for Recording {
    fn kind(&self, path: &Path) -> std::io::Result<EntryKind> {
        self.asked.borrow_mut().push(path.to_path_buf());
        match &self.lie {
            Some((at, _)) if at == path => Ok(EntryKind::Symlink),
            _ => FileSystem.kind(path),
        }
    }

    fn read_link(&self, path: &Path) -> std::io::Result<PathBuf> {
        match &self.lie {
            Some((at, to)) if at == path => Ok(to.clone()),
            _ => FileSystem.read_link(path),
        }
    }
}

#[test]
fn resolve_with_agrees_with_resolve_and_asks_about_the_end_once() {
    let f = fx();
    symlink(&f.outside, f.ws.join("out")).unwrap();
    for p in [
        "src/a.rs",
        "src/deep/../a.rs",
        "out/secret.txt",
        "out/../ws/src",
        "new/dir/file.txt",
        "src/a.rs/below",
        ".",
        "/",
    ] {
        let lookup = Recording {
            asked: Default::default(),
            lie: None,
        };
        let via = f.loc.resolve_with(&lookup, p, f.loc.root()).unwrap();
        assert_eq!(via, f.loc.resolve(p).unwrap(), "{p}");
        // What the walk learnt about the last component is used, not asked again.
        let asked = lookup.asked.into_inner();
        let last = asked.iter().filter(|a| **a == via.path).count();
        assert!(last <= 1, "{p}: {} asked {last} times", via.path.display());
    }
}

#[test]
fn resolve_with_follows_what_its_lookup_says() {
    // The walk trusts its lookup: a cache that says `src` is a link to the
    // outside directory moves the path outside, as a real swap would.
    let f = fx();
    let lookup = Recording {
        asked: Default::default(),
        lie: Some((f.ws.join("src"), f.outside.clone())),
    };
    let r = f
        .loc
        .resolve_with(&lookup, "src/secret.txt", f.loc.root())
        .unwrap();
    assert_eq!(r.path, f.outside.join("secret.txt"));
    assert!(!r.inside && r.exists && !r.is_dir);
    assert_eq!(r.external_dir.as_deref(), Some(f.outside.as_path()));
}
