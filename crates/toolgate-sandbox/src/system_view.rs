//! The system's local directories as any other user sees them.
//!
//! The sandbox shows the system's directories read-only ([`SYSTEM_TOP`]).
//! Those that hold what this machine's own people and services put there
//! ([`WALKED`]: `/etc`, `/opt`, `/var`, `/usr/local`) also hold their
//! secrets — a TLS key under `/etc/letsencrypt`, a WireGuard or
//! NetworkManager profile, a CI runner's token, a service's `.pgpass`, a
//! database's files, mail, shadow backups — under names no table can list.
//! Their owners keep them from other users with file modes, which do not
//! stop a command run as root (or as their owner). So every entry there
//! that *others* may not read (a file without `o+r`, a directory without
//! `o+rx`) is hidden whoever runs the command: what is shown is exactly
//! what any user of the machine could read anyway.
//!
//! The walk is cached per directory by [`Stamp`] (creating, removing or
//! renaming an entry changes it) and, because changing a file's mode does
//! not change its directory, each directory is read again at least every
//! [`REREAD_AFTER`]. A walk that passes [`SCAN_LIMIT`] entries hides what
//! it did not reach. The packaged directories (`/usr` but `/usr/local`,
//! `/bin`, `/lib`…, the Nix store, snaps) are not walked: tens of thousands
//! of directories. When toolgate runs as root (the one user that owns what
//! is private there), every system directory is instead shown through an
//! idmapped mount under which the command owns nothing ([`owners`]): the
//! kernel's permission check then hides what others may not read, in the
//! packaged trees too, and the walked ones need no walk.
//!
//! [`SYSTEM_TOP`]: crate::sandbox_spec::SYSTEM_TOP

use std::collections::HashMap;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::scan::{RACY_WINDOW, SCAN_LIMIT, Stamp};

pub(crate) mod owners;

/// The shown directories walked for what others may not read, and why.
pub const WALKED: &[(&str, &str)] = &[
    (
        "/etc",
        "the machine's configuration: keys, tokens, service secrets",
    ),
    ("/opt", "add-on software installed with its configuration"),
    (
        "/var",
        "services' state: databases, mail, spools, backups, logs",
    ),
    (
        "/usr/local",
        "software built and configured on this machine",
    ),
];

/// How long (nanoseconds) a directory's reading is trusted while its stamp
/// is unchanged: a file made private by `chmod` is hidden at most this
/// long after.
pub(crate) const REREAD_AFTER: i128 = 60 * 1_000_000_000;

/// What others may read of a mode: `o+r` for a file, `o+rx` for a
/// directory.
fn others_may_read(mode: u32, is_dir: bool) -> bool {
    let need = if is_dir { 0o005 } else { 0o004 };
    mode & need == need
}

/// One directory as last read.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct DirReading {
    stamp: Stamp,
    /// When it was read (nanoseconds since the epoch).
    read_at: i128,
    entries: usize,
    /// Names of entries others may not read, and whether each is a
    /// directory.
    private: Vec<(Vec<u8>, bool)>,
    /// Names of the subdirectories others may read (not symbolic links).
    subdirs: Vec<Vec<u8>>,
}

/// Readings by directory, as kept between runs.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
struct Readings {
    dirs: HashMap<PathBuf, DirReading>,
}

/// The readings as kept on disk, with the user they are for (what a user
/// cannot list is hidden whole, so another user's walk differs).
#[derive(serde::Serialize, serde::Deserialize)]
struct StoredReadings {
    euid: u32,
    readings: Readings,
}

/// The readings of this process.
static READINGS: Mutex<Option<Readings>> = Mutex::new(None);

fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

fn stored_path(dir: &Path) -> PathBuf {
    dir.join(format!("system-view-{}.readings", euid()))
}

fn load(dir: &Path) -> Option<Readings> {
    let stored: StoredReadings = crate::kept::load(&stored_path(dir))?;
    (stored.euid == euid()).then_some(stored.readings)
}

/// Keeps the readings on disk (whole or not at all); a failure only costs
/// the next process a walk.
fn keep(dir: &Path, readings: Readings) -> Readings {
    let stored = StoredReadings {
        euid: euid(),
        readings,
    };
    crate::kept::keep(&stored_path(dir), &stored);
    stored.readings
}

/// Reads one directory: each entry's mode, without following links.
/// `None` when it cannot be listed.
fn read_dir(dir: &Path, stamp: Stamp, now: i128) -> Option<DirReading> {
    let listing = std::fs::read_dir(dir).ok()?;
    let mut reading = DirReading {
        stamp,
        read_at: now,
        entries: 0,
        private: Vec::new(),
        subdirs: Vec::new(),
    };
    for entry in listing.flatten() {
        reading.entries += 1;
        let name = entry.file_name().as_bytes().to_vec();
        // Gone since the listing: nothing to hide.
        let Ok(meta) = entry.metadata() else { continue };
        let ft = meta.file_type();
        if ft.is_symlink() {
            // It leads into what is judged on its own (or emptied).
            continue;
        }
        let is_dir = ft.is_dir();
        if !others_may_read(meta.permissions().mode(), is_dir) {
            reading.private.push((name, is_dir));
        } else if is_dir {
            reading.subdirs.push(name);
        }
    }
    Some(reading)
}

/// What the walk hides.
#[derive(Debug, Default)]
pub(crate) struct Hidden {
    /// Entries to cover.
    pub masked: Vec<PathBuf>,
    /// Things worth reporting (a walk cut short).
    pub notes: Vec<String>,
    /// Directories read this time (the others came from the readings).
    pub dirs_read: usize,
}

/// The entries of the [`WALKED`] directories that others may not read.
///
/// `mapped` are the top-level directories the command sees through an
/// idmapped mount ([`owners`]): the kernel already shows their files as any
/// other user sees them, so they are not walked. `shown` are places the sandbox binds in by their own rules (the
/// location's roots, writable and readable paths): they are not walked, and
/// a private directory that holds one is not hidden whole — its other
/// entries are. `skipped` are places emptied anyway. With `stored`, a
/// directory of the caller's own, readings are kept there between
/// processes.
pub(crate) fn hidden_from_others(
    mapped: &[PathBuf],
    shown: &[&Path],
    skipped: &[&Path],
    stored: Option<&Path>,
) -> Hidden {
    let tops: Vec<PathBuf> = WALKED
        .iter()
        .map(|(p, _)| PathBuf::from(p))
        .filter(|p| !mapped.iter().any(|m| p.starts_with(m)))
        .collect();
    if tops.is_empty() {
        return Hidden::default();
    }
    let limits = Limits {
        racy_window: Some(RACY_WINDOW),
        reread_after: REREAD_AFTER,
        entries: SCAN_LIMIT,
    };
    walk(&tops, shown, skipped, stored, &limits)
}

/// How far a walk trusts its readings and how far it goes.
struct Limits {
    /// Directories changed this recently are read again next time (`None`:
    /// every stamp is trusted).
    racy_window: Option<i128>,
    /// Readings older than this are read again.
    reread_after: i128,
    /// At most this many entries are looked at.
    entries: usize,
}

fn walk(
    tops: &[PathBuf],
    shown: &[&Path],
    skipped: &[&Path],
    stored: Option<&Path>,
    limits: &Limits,
) -> Hidden {
    let mut old = {
        let mut guard = READINGS.lock().unwrap_or_else(|e| e.into_inner());
        guard.take()
    }
    .or_else(|| stored.and_then(load))
    .unwrap_or_default();
    let now = crate::now_nanos();
    let mut fresh = Readings::default();
    let mut hidden = Hidden::default();
    let mut seen = 0usize;
    let within = |p: &Path, places: &[&Path]| places.iter().any(|s| p.starts_with(s));
    let holds_shown = |p: &Path| shown.iter().any(|s| s.starts_with(p) && *s != p);
    let mut stack: Vec<PathBuf> = tops
        .iter()
        .filter(|t| std::fs::symlink_metadata(t).is_ok_and(|m| m.is_dir()))
        .cloned()
        .collect();
    while let Some(dir) = stack.pop() {
        if within(&dir, shown) || within(&dir, skipped) {
            continue;
        }
        let Ok(meta) = std::fs::symlink_metadata(&dir) else {
            continue;
        };
        if !meta.is_dir() {
            continue;
        }
        let stamp = Stamp::of(&meta);
        let reading = match old.dirs.remove(&dir) {
            Some(r) if r.stamp == stamp && now - r.read_at < limits.reread_after => r,
            _ => {
                hidden.dirs_read += 1;
                match read_dir(&dir, stamp, now) {
                    Some(r) => r,
                    None => {
                        // Shown, yet not listable (an ACL, a security
                        // module): what it holds is not known.
                        if !holds_shown(&dir) {
                            hidden.masked.push(dir);
                        }
                        continue;
                    }
                }
            }
        };
        seen += reading.entries;
        for (name, is_dir) in &reading.private {
            let path = dir.join(std::ffi::OsStr::from_bytes(name));
            if shown.contains(&path.as_path()) {
                // Needed by the run itself (a private helper, say).
                continue;
            }
            if *is_dir && holds_shown(&path) {
                hide_around(&path, shown, &mut hidden.masked);
            } else if !within(&path, skipped) {
                hidden.masked.push(path);
            }
        }
        let subdirs = reading
            .subdirs
            .iter()
            .map(|n| dir.join(std::ffi::OsStr::from_bytes(n)));
        if seen > limits.entries {
            // Not walked, so not shown.
            hidden.notes.push(format!(
                "hid the system directories not walked after {} entries (from {})",
                limits.entries,
                dir.display()
            ));
            let rest: Vec<PathBuf> = subdirs.chain(stack.drain(..)).collect();
            for p in rest {
                if holds_shown(&p) {
                    hide_around(&p, shown, &mut hidden.masked);
                } else if !within(&p, skipped) && !within(&p, shown) {
                    hidden.masked.push(p);
                }
            }
            break;
        }
        stack.extend(subdirs);
        if !stamp.racy(now, limits.racy_window) {
            fresh.dirs.insert(dir, reading);
        }
    }
    let fresh = match stored {
        Some(dir) if hidden.dirs_read > 0 || !old.dirs.is_empty() => keep(dir, fresh),
        _ => fresh,
    };
    *READINGS.lock().unwrap_or_else(|e| e.into_inner()) = Some(fresh);
    hidden.masked.sort();
    hidden
}

/// The file systems mounted below `top` whose root others may not open:
/// under `/sys`, the kernel's private ones (`tracefs` at
/// `/sys/kernel/tracing`, `debugfs`, `bpf`, `pstore`), mounted for root
/// alone. They are found in the mount table, not by walking: `/sys` holds
/// thousands of entries (15,134 on this project's machine, 7,352 of them
/// root-only attributes — more covers than a run can take — in directories
/// the kernel makes open to all), and a listing of two levels cost 0.4 ms a
/// run against a few `stat`s of its mount points.
pub(crate) fn private_mounts_within(top: &Path) -> Vec<PathBuf> {
    let Ok(table) = std::fs::read_to_string("/proc/self/mountinfo") else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = mount_points(&table)
        .filter(|p| p.starts_with(top) && p != top)
        .filter(|p| {
            std::fs::metadata(p)
                .is_ok_and(|m| m.is_dir() && !others_may_read(m.permissions().mode(), true))
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The mount points of a `/proc/self/mountinfo` text (its fifth field, with
/// the kernel's octal escapes of space, tab, newline and backslash undone).
fn mount_points(table: &str) -> impl Iterator<Item = PathBuf> + '_ {
    table.lines().filter_map(|line| {
        let field = line.split(' ').nth(4)?;
        let mut bytes = Vec::with_capacity(field.len());
        let raw = field.as_bytes();
        let mut i = 0;
        while i < raw.len() {
            // `\ooo`, at most `\377`: anything else is taken as it is.
            let octal = raw
                .get(i + 1..i + 4)
                .filter(|d| raw[i] == b'\\' && d.iter().all(|c| (b'0'..=b'7').contains(c)))
                .and_then(|d| {
                    let value = d.iter().fold(0u32, |v, c| v * 8 + u32::from(c - b'0'));
                    u8::try_from(value).ok()
                });
            match octal {
                Some(byte) => {
                    bytes.push(byte);
                    i += 4;
                }
                None => {
                    bytes.push(raw[i]);
                    i += 1;
                }
            }
        }
        Some(PathBuf::from(std::ffi::OsString::from_vec(bytes)))
    })
}

/// Hides every entry of the private directory `dir` but the way down to
/// the shown places it holds: others could not list it, so nothing in it
/// but what is shown by its own rule is theirs to see. Entries that cannot
/// be listed are left (this user cannot read them either).
fn hide_around(dir: &Path, shown: &[&Path], masked: &mut Vec<PathBuf>) {
    let Ok(listing) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in listing.flatten() {
        let path = entry.path();
        if shown.contains(&path.as_path()) {
            continue;
        }
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        if is_dir && shown.iter().any(|s| s.starts_with(&path)) {
            hide_around(&path, shown, masked);
        } else {
            masked.push(path);
        }
    }
}

#[cfg(test)]
mod tests;
