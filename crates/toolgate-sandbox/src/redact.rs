//! Configuration files of the readable places that hold secrets as some of
//! their values (`~/.gitconfig`'s `extraheader` or a token in an `insteadOf`
//! URL, `~/.cargo/config.toml`'s registry `token` and `[env]`,
//! `~/.cabal/config`'s `password`, [`toolgate_paths::secret_values`]): shown
//! inside the sandbox as a copy without those values, so that git, cargo
//! and cabal still read the rest. A file that cannot be redacted by lines, is too large, or has no
//! private directory to keep its copy in is hidden whole instead.

use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use toolgate_paths::secret_values::{Shown, shown_copy, shown_kind};

/// A configuration file larger than this is hidden whole rather than read.
const LARGEST: u64 = 1024 * 1024;

/// What the sandbox does with the readable places' files of secret values.
#[derive(Debug, Default)]
pub(crate) struct Redactions {
    /// `(file, copy)`: the file shown as the copy (its secret values left out).
    pub shown: Vec<(PathBuf, PathBuf)>,
    /// Files hidden whole.
    pub hidden: Vec<PathBuf>,
}

/// For each of `places` (canonical directories shown read-only), its files
/// of secret values that hold any: a copy without them is written in
/// `private` (a directory the command cannot see), or, without one, the file
/// is hidden. Files already in `masked` are left to their mask.
pub(crate) fn redactions(
    places: &[PathBuf],
    masked: &[PathBuf],
    private: Option<&Path>,
) -> Redactions {
    let mut out = Redactions::default();
    for place in places {
        // A place that is a file of the home directory itself (`~/.gitconfig`).
        if std::fs::symlink_metadata(place).is_ok_and(|m| m.is_file()) {
            if let Some(kind) = place
                .file_name()
                .and_then(|name| shown_kind(b"", name.as_bytes()))
            {
                judge(place, kind, masked, private, &mut out);
            }
            continue;
        }
        let Some(dir_name) = place.file_name() else {
            continue;
        };
        let Ok(entries) = std::fs::read_dir(place) else {
            continue;
        };
        for e in entries.flatten() {
            let name = e.file_name();
            let Some(kind) = shown_kind(dir_name.as_bytes(), name.as_bytes()) else {
                continue;
            };
            // A symbolic link points outside the shown places (hidden), or
            // at a file judged on its own.
            if !e.file_type().is_ok_and(|t| t.is_file()) {
                continue;
            }
            judge(&e.path(), kind, masked, private, &mut out);
        }
    }
    out
}

/// Shows the file `path` of kind `kind` as a copy without its secrets, or
/// hides it (unless it is already masked).
fn judge(
    path: &Path,
    kind: Shown,
    masked: &[PathBuf],
    private: Option<&Path>,
    out: &mut Redactions,
) {
    if masked.iter().any(|m| path.starts_with(m)) {
        return;
    }
    // Read on the handle it is checked on: never waits on a FIFO swapped in.
    let text = toolgate_paths::small_file::read_text(path, LARGEST).ok();
    let copy = match text.as_deref().map(|t| (t, shown_copy(kind, t))) {
        // Nothing secret in it: shown as it is.
        Some((t, Some(r))) if r == t => return,
        Some((_, Some(r))) => private.and_then(|dir| keep_copy(dir, path, &r)),
        _ => None,
    };
    match copy {
        Some(c) => out.shown.push((path.to_path_buf(), c)),
        None => out.hidden.push(path.to_path_buf()),
    }
}

/// Writes `text` as the copy of `path` in `dir` (owner-only), replacing any
/// earlier copy at once unless it already holds `text`; `None` when it
/// cannot.
fn keep_copy(dir: &Path, path: &Path, text: &str) -> Option<PathBuf> {
    use std::hash::{Hash, Hasher};
    use std::io::Write;
    let mut h = std::collections::hash_map::DefaultHasher::new();
    path.hash(&mut h);
    let copy = dir.join(format!("redacted-{:016x}", h.finish()));
    // The same copy as last time: kept (no new file per run).
    if std::fs::read(&copy).is_ok_and(|old| old == text.as_bytes()) {
        return Some(copy);
    }
    let tmp = copy.with_extension(format!("tmp{}", std::process::id()));
    let written = std::fs::create_dir_all(dir).and_then(|()| {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&tmp)?;
        f.write_all(text.as_bytes())?;
        std::fs::rename(&tmp, &copy)
    });
    match written {
        Ok(()) => Some(copy),
        Err(e) => {
            tracing::debug!(path = %path.display(), "no redacted copy: {e}");
            let _ = std::fs::remove_file(&tmp);
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_left_out_of_the_copy_and_a_plain_config_is_left_alone() {
        let base = tempfile::tempdir().unwrap();
        let base = base.path().canonicalize().unwrap();
        let (cargo, cabal, private) = (base.join(".cargo"), base.join(".cabal"), base.join("p"));
        std::fs::create_dir_all(&cargo).unwrap();
        std::fs::create_dir_all(&cabal).unwrap();
        std::fs::write(
            cargo.join("config.toml"),
            "[registry]\ntoken = \"CANARY\"\n[alias]\nb = \"build\"\n",
        )
        .unwrap();
        std::fs::write(cabal.join("config"), "jobs: 4\n").unwrap();
        let r = redactions(&[cargo.clone(), cabal.clone()], &[], Some(&private));
        assert_eq!(r.hidden, Vec::<PathBuf>::new());
        assert_eq!(r.shown.len(), 1);
        let (file, copy) = &r.shown[0];
        assert_eq!(file, &cargo.join("config.toml"));
        assert_eq!(
            std::fs::read_to_string(copy).unwrap(),
            "[registry]\n[alias]\nb = \"build\"\n"
        );
        // No private directory: hidden whole.
        let r = redactions(std::slice::from_ref(&cargo), &[], None);
        assert_eq!(r.hidden, [cargo.join("config.toml")]);
        // A multi-line string: hidden whole.
        std::fs::write(cargo.join("config"), "token = \"\"\"\nCANARY\n\"\"\"\n").unwrap();
        std::fs::remove_file(cargo.join("config.toml")).unwrap();
        let r = redactions(std::slice::from_ref(&cargo), &[], Some(&private));
        assert_eq!(r.hidden, [cargo.join("config")]);
    }
}
