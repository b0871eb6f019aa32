//! The credential files' inodes ([`CredentialInodes`]) kept between
//! processes: a short process (a hook's `sandbox exec`) would otherwise list
//! the home directory's secret places and the location, six levels deep, on
//! every run. A kept snapshot is used only while every directory it looked
//! into has the stamp it had before it was read ([`DirStamp`]: device,
//! inode, modification and change time), so it never knows fewer credential
//! files than a fresh one would; otherwise the snapshot is taken again.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use toolgate_paths::credential::{CredentialInodes, DirStamp};

use crate::scan::{RACY_WINDOW, Stamp};

/// A stamp as kept: device, inode, modification and change time.
type KeptStamp = (u64, u64, (i64, i64), (i64, i64));

#[derive(serde::Serialize, serde::Deserialize)]
struct Kept {
    home: PathBuf,
    roots: Vec<PathBuf>,
    files: Vec<(u64, u64, PathBuf)>,
    dirs: Vec<(PathBuf, Option<KeptStamp>)>,
}

/// The snapshot for `home` and `roots`: the one kept in `stored` when it is
/// current, else a fresh one ([`CredentialInodes::snapshot`]), kept there
/// for the next process when it is whole and no directory it read changed
/// in the last two seconds.
pub(crate) fn snapshot(
    home: &Path,
    roots: &[&Path],
    stored: Option<&Path>,
) -> Arc<CredentialInodes> {
    let Some(dir) = stored else {
        return CredentialInodes::snapshot(home, roots);
    };
    let path = kept_path(dir, home, roots);
    if let Some(kept) = load(&path, home, roots) {
        if kept.is_current() {
            return Arc::new(kept);
        }
    }
    let fresh = CredentialInodes::snapshot(home, roots);
    if !fresh.truncated && !racy(&fresh, crate::now_nanos()) {
        keep(&path, home, roots, &fresh);
    }
    fresh
}

/// Where the snapshot of `home` and `roots` is kept in `dir`.
fn kept_path(dir: &Path, home: &Path, roots: &[&Path]) -> PathBuf {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    home.hash(&mut h);
    roots.hash(&mut h);
    dir.join(format!("credentials-{:016x}.snap", h.finish()))
}

fn load(path: &Path, home: &Path, roots: &[&Path]) -> Option<CredentialInodes> {
    let kept: Kept = crate::kept::load(path)?;
    let same = kept.home == home
        && kept
            .roots
            .iter()
            .map(PathBuf::as_path)
            .eq(roots.iter().copied());
    same.then(|| {
        let dirs = kept
            .dirs
            .into_iter()
            .map(|(p, s)| {
                let s = s.map(|(dev, ino, mtime, ctime)| DirStamp {
                    dev,
                    ino,
                    mtime,
                    ctime,
                });
                (p, s)
            })
            .collect();
        CredentialInodes::from_kept(kept.files, dirs)
    })
}

/// Whether a directory the snapshot read changed within [`RACY_WINDOW`] of
/// `now` (nanoseconds since the epoch).
fn racy(snapshot: &CredentialInodes, now: i128) -> bool {
    snapshot
        .looked_into()
        .iter()
        .any(|(_, s)| s.is_some_and(|s| Stamp::from(s).racy(now, Some(RACY_WINDOW))))
}

/// Keeps `snapshot` at `path`, whole or not at all; a failure only means the
/// next process takes it again.
fn keep(path: &Path, home: &Path, roots: &[&Path], snapshot: &CredentialInodes) {
    let kept = Kept {
        home: home.to_path_buf(),
        roots: roots.iter().map(|r| r.to_path_buf()).collect(),
        files: snapshot
            .iter()
            .map(|(dev, ino, p)| (dev, ino, p.to_path_buf()))
            .collect(),
        dirs: snapshot
            .looked_into()
            .iter()
            .map(|(p, s)| (p.clone(), s.map(|s| (s.dev, s.ino, s.mtime, s.ctime))))
            .collect(),
    };
    crate::kept::keep(path, &kept);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn files(s: &CredentialInodes) -> HashSet<PathBuf> {
        s.iter().map(|(_, _, p)| p.to_path_buf()).collect()
    }

    /// Makes every directory below `root` look old (its stamps out of the
    /// racy window), as a tree at rest is.
    fn age(root: &Path) {
        let old = libc::timespec {
            tv_sec: 1_000_000_000,
            tv_nsec: 0,
        };
        let mut stack = vec![root.to_path_buf()];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap().flatten() {
                if e.file_type().unwrap().is_dir() {
                    stack.push(e.path());
                }
            }
            let c = std::ffi::CString::new(d.as_os_str().as_encoded_bytes()).unwrap();
            // SAFETY: a valid C string and two valid timespecs.
            let r = unsafe { libc::utimensat(libc::AT_FDCWD, c.as_ptr(), [old, old].as_ptr(), 0) };
            assert_eq!(r, 0);
        }
    }

    #[test]
    fn a_kept_snapshot_is_used_only_while_nothing_it_read_changed() {
        let base = tempfile::tempdir().unwrap();
        let base = base.path().canonicalize().unwrap();
        let (home, ws, kept) = (base.join("home"), base.join("ws"), base.join("kept"));
        std::fs::create_dir_all(home.join(".ssh")).unwrap();
        std::fs::create_dir_all(ws.join("a/b")).unwrap();
        std::fs::write(home.join(".ssh/id_rsa"), "k").unwrap();
        std::fs::write(ws.join("a/.env"), "A=1").unwrap();
        // The change times are now, so the first snapshot is not kept.
        let first = snapshot(&home, &[&ws], Some(&kept));
        assert!(files(&first).contains(&home.join(".ssh/id_rsa")));
        assert!(files(&first).contains(&ws.join("a/.env")));
        assert!(
            std::fs::read_dir(&kept).map_or(true, |mut d| d.next().is_none()),
            "a snapshot of directories changed just now is not kept"
        );
        // Nothing kept: a later process takes it again, and keeps it once
        // the change times are old enough (here: after the racy window).
        std::thread::sleep(std::time::Duration::from_millis(2100));
        let second = snapshot(&home, &[&ws], Some(&kept));
        assert_eq!(files(&second), files(&first));
        let path = kept_path(&kept, &home, &[&ws]);
        let loaded = load(&path, &home, &[&ws]).expect("kept");
        assert!(loaded.is_current());
        assert_eq!(files(&loaded), files(&first));
        // A credential file added anywhere it looked: the kept one is stale
        // and a fresh one knows the file.
        std::fs::write(ws.join("a/b/id_ed25519"), "k").unwrap();
        assert!(!load(&path, &home, &[&ws]).unwrap().is_current());
        let third = snapshot(&home, &[&ws], Some(&kept));
        assert!(files(&third).contains(&ws.join("a/b/id_ed25519")));
        // Kept for other roots or another home: not used.
        assert!(load(&path, &home, &[&home]).is_none());
        assert!(load(&path, &ws, &[&ws]).is_none());
        // Set back, a directory's modification time cannot hide a change:
        // its change time moved.
        age(&ws);
        std::thread::sleep(std::time::Duration::from_millis(2100));
        let _ = snapshot(&home, &[&ws], Some(&kept));
        assert!(load(&path, &home, &[&ws]).unwrap().is_current());
        std::fs::write(ws.join("a/b/.netrc"), "machine x").unwrap();
        age(&ws);
        let after = load(&path, &home, &[&ws]).unwrap();
        assert!(!after.is_current());
        assert!(files(&snapshot(&home, &[&ws], Some(&kept))).contains(&ws.join("a/b/.netrc")));
    }
}
