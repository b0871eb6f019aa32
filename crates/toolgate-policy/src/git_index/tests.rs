// A failed setup step should stop a test loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use crate::test_util::git_command;
use std::path::Path;

fn git(dir: &Path, args: &[&str]) -> String {
    let out = git_command(dir, args).output().unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// A repository with nested, long and prefix-sharing paths, staged.
fn repo(init: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let mut args = vec!["init", "-q"];
    args.extend_from_slice(init);
    git(dir.path(), &args);
    let long = format!("deep/{}/{}", "n".repeat(200), "m".repeat(200));
    for path in [
        "a.txt",
        "src/main.rs",
        "src/mod/one.rs",
        "src/mod/two.rs",
        ".env",
        long.as_str(),
    ] {
        let p = dir.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, path).unwrap();
    }
    std::os::unix::fs::symlink("a.txt", dir.path().join("link")).unwrap();
    git(dir.path(), &["add", "."]);
    dir
}

/// What git itself lists: `(mode, path)` of every entry.
fn listed(dir: &Path) -> Vec<(u32, Vec<u8>)> {
    git(dir, &["ls-files", "-s", "-z"])
        .split('\0')
        .filter(|l| !l.is_empty())
        .map(|l| {
            let (meta, path) = l.split_once('\t').unwrap();
            let mode = u32::from_str_radix(meta.split(' ').next().unwrap(), 8).unwrap();
            (mode, path.as_bytes().to_vec())
        })
        .collect()
}

fn read(dir: &Path) -> Result<Index, IndexError> {
    parse(&std::fs::read(dir.join(".git/index")).unwrap())
}

fn assert_same_as_git(dir: &Path, version: u32) {
    let index = read(dir).unwrap();
    assert_eq!(index.version, version);
    let ours: Vec<(u32, Vec<u8>)> = index
        .entries
        .iter()
        .map(|e| (e.mode, e.path.clone()))
        .collect();
    assert_eq!(ours, listed(dir));
}

#[test]
fn reads_versions_2_3_and_4_as_git_lists_them() {
    let dir = repo(&[]);
    assert_same_as_git(dir.path(), 2);
    // An intent-to-add entry needs the extended flags of version 3.
    std::fs::write(dir.path().join("new.txt"), "n").unwrap();
    git(dir.path(), &["add", "-N", "new.txt"]);
    assert_same_as_git(dir.path(), 3);
    git(dir.path(), &["update-index", "--index-version", "4"]);
    assert_same_as_git(dir.path(), 4);
    // Extensions (the cache tree) after a commit are skipped.
    git(dir.path(), &["commit", "-q", "-m", "x"]);
    assert_same_as_git(dir.path(), 4);
}

#[test]
fn records_the_device_and_inode_of_each_file() {
    use std::os::unix::fs::MetadataExt;
    let dir = repo(&[]);
    let index = read(dir.path()).unwrap();
    let entry = index.entries.iter().find(|e| e.path == b"a.txt").unwrap();
    let meta = std::fs::symlink_metadata(dir.path().join("a.txt")).unwrap();
    assert_eq!(u64::from(entry.ino), meta.ino() & 0xffff_ffff);
    assert_eq!(u64::from(entry.dev), meta.dev() & 0xffff_ffff);
}

#[test]
fn reads_a_sha256_repository() {
    let dir = repo(&["--object-format=sha256"]);
    assert_same_as_git(dir.path(), 2);
    git(dir.path(), &["update-index", "--index-version", "4"]);
    assert_same_as_git(dir.path(), 4);
    // A flipped bit in its body fails the checksum (and the SHA-1 layout).
    let mut bytes = std::fs::read(dir.path().join(".git/index")).unwrap();
    bytes[30] ^= 1;
    assert!(parse(&bytes).is_err());
}

#[test]
fn reads_an_index_without_a_checksum() {
    let dir = repo(&["--object-format=sha256"]);
    // git rewrites an index only when something changed (or its entries are
    // racily clean), so a plain `add .` after `repo` may keep the old,
    // checksummed file: start from no index so the write is certain.
    std::fs::remove_file(dir.path().join(".git/index")).unwrap();
    git(dir.path(), &["-c", "index.skipHash=true", "add", "."]);
    let bytes = std::fs::read(dir.path().join(".git/index")).unwrap();
    assert!(bytes[bytes.len() - 32..].iter().all(|b| *b == 0));
    assert_same_as_git(dir.path(), 2);
}

#[test]
fn every_truncation_and_every_flipped_byte_is_an_error_or_a_parse_never_a_panic() {
    let dir = repo(&[]);
    git(dir.path(), &["update-index", "--index-version", "4"]);
    let bytes = std::fs::read(dir.path().join(".git/index")).unwrap();
    for len in 0..bytes.len() {
        let cut = parse(&bytes[..len]);
        // Cut inside the first entry: its bytes are not all there.
        if len < 12 + 62 + 20 {
            assert!(cut.is_err(), "cut at {len}");
        }
    }
    for at in 0..bytes.len() {
        let mut flipped = bytes.clone();
        flipped[at] ^= 0x80;
        let _ = parse(&flipped);
    }
}

#[test]
fn unknown_versions_extensions_and_layouts_are_errors() {
    let dir = repo(&[]);
    let bytes = std::fs::read(dir.path().join(".git/index")).unwrap();
    let mut v9 = bytes.clone();
    v9[7] = 9;
    assert_eq!(parse(&v9), Err(IndexError::UnknownVersion(9)));
    let mut bad = bytes.clone();
    bad[0] = b'X';
    assert!(parse(&bad).is_err());
    // A required extension (lowercase signature) it does not know.
    let body = bytes.len() - 20;
    let with_ext = |sig: &[u8; 4]| {
        let mut b = bytes[..body].to_vec();
        b.extend_from_slice(sig);
        b.extend_from_slice(&2u32.to_be_bytes());
        b.extend_from_slice(b"xy");
        b.extend_from_slice(&[0; 20]);
        b
    };
    assert_eq!(
        parse(&with_ext(b"abcd")),
        Err(IndexError::UnknownExtension("abcd".into()))
    );
    assert_eq!(parse(&with_ext(b"link")), Err(IndexError::Split));
    assert_eq!(parse(&with_ext(b"sdir")), Err(IndexError::Sparse));
    assert!(parse(&with_ext(b"ABCD")).is_ok());
    // A count larger than the file can hold allocates nothing.
    let mut many = bytes.clone();
    many[8..12].copy_from_slice(&u32::MAX.to_be_bytes());
    assert!(matches!(parse(&many), Err(IndexError::Malformed(_))));
    let huge = vec![0u8; usize::try_from(MAX_INDEX_BYTES).unwrap() + 1];
    assert_eq!(parse(&huge), Err(IndexError::TooLarge));
}

#[test]
fn a_split_index_is_not_read() {
    let dir = repo(&[]);
    git(dir.path(), &["update-index", "--split-index"]);
    assert_eq!(read(dir.path()), Err(IndexError::Split));
}

#[test]
fn paths_git_forbids_are_errors() {
    for bad in [
        &b""[..],
        b"/a",
        b"a/",
        b"a//b",
        b"./a",
        b"a/../b",
        b".git/config",
        b"x/.GIT/y",
    ] {
        assert!(!valid_path(bad), "{bad:?}");
    }
    for good in [&b"a"[..], b".env", b"a/.gitignore", b"..a", b"a.git"] {
        assert!(valid_path(good), "{good:?}");
    }
}
