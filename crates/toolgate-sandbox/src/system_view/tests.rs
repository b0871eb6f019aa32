// A failed setup step should stop a test loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use std::os::unix::fs::PermissionsExt;

/// The readings are one per process: tests that count directories read
/// take turns.
static TURN: Mutex<()> = Mutex::new(());

fn trusting() -> Limits {
    Limits {
        racy_window: None,
        reread_after: i128::MAX,
        entries: usize::MAX,
    }
}

fn chmod(p: &Path, mode: u32) {
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn file(p: &Path, mode: u32) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, "x").unwrap();
    chmod(p, mode);
}

/// A system-like tree under a temporary directory.
fn system() -> (tempfile::TempDir, PathBuf) {
    let t = tempfile::tempdir().unwrap();
    let etc = t.path().canonicalize().unwrap().join("etc");
    file(&etc.join("hostname"), 0o644);
    file(&etc.join("shadow.bak"), 0o600);
    file(&etc.join("app/deep/er/still/token.conf"), 0o640);
    file(&etc.join("app/deep/er/still/public.conf"), 0o644);
    file(&etc.join("letsencrypt/live/example.com/privkey.pem"), 0o644);
    chmod(&etc.join("letsencrypt/live"), 0o700);
    file(&etc.join("listable-only/secret"), 0o644);
    chmod(&etc.join("listable-only"), 0o744);
    file(&etc.join("traversable-only/secret"), 0o644);
    chmod(&etc.join("traversable-only"), 0o711);
    std::os::unix::fs::symlink("shadow.bak", etc.join("link-to-private")).unwrap();
    (t, etc)
}

fn masked(h: &Hidden, base: &Path) -> Vec<String> {
    h.masked
        .iter()
        .map(|p| p.strip_prefix(base).unwrap().display().to_string())
        .collect()
}

#[test]
fn what_others_may_not_read_is_hidden_at_any_depth_and_nothing_else() {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let (_t, etc) = system();
    let h = walk(std::slice::from_ref(&etc), &[], &[], None, &trusting());
    assert_eq!(
        masked(&h, &etc),
        [
            "app/deep/er/still/token.conf",
            "letsencrypt/live",
            "listable-only",
            "shadow.bak",
            "traversable-only",
        ]
    );
}

#[test]
fn a_cached_walk_reads_only_changed_directories_and_misses_nothing_added() {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let (_t, etc) = system();
    let first = walk(std::slice::from_ref(&etc), &[], &[], None, &trusting());
    let again = walk(std::slice::from_ref(&etc), &[], &[], None, &trusting());
    assert_eq!(again.masked, first.masked);
    assert_eq!(again.dirs_read, 0, "nothing changed");
    file(&etc.join("app/deep/new-key"), 0o600);
    let after = walk(std::slice::from_ref(&etc), &[], &[], None, &trusting());
    assert_eq!(after.dirs_read, 1, "only the changed directory");
    assert!(after.masked.contains(&etc.join("app/deep/new-key")));
}

#[test]
fn a_file_made_private_in_place_is_hidden_once_its_reading_is_old() {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let (_t, etc) = system();
    let conf = etc.join("app/deep/er/still/public.conf");
    walk(std::slice::from_ref(&etc), &[], &[], None, &trusting());
    // chmod does not change the directory's stamp.
    chmod(&conf, 0o600);
    let trusted = walk(std::slice::from_ref(&etc), &[], &[], None, &trusting());
    assert!(!trusted.masked.contains(&conf), "within the re-read time");
    let aged = Limits {
        reread_after: 0,
        ..trusting()
    };
    let reread = walk(std::slice::from_ref(&etc), &[], &[], None, &aged);
    assert!(reread.masked.contains(&conf));
}

#[test]
fn a_private_directory_holding_a_shown_place_hides_everything_else_in_it() {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let (_t, etc) = system();
    let project = etc.join("letsencrypt/live/project");
    file(&project.join("src/main.rs"), 0o600);
    file(&etc.join("letsencrypt/live/other/key"), 0o600);
    let helper = etc.join("shadow.bak");
    let h = walk(
        std::slice::from_ref(&etc),
        &[&project, &helper],
        &[],
        None,
        &trusting(),
    );
    let m = masked(&h, &etc);
    assert!(
        !m.contains(&"shadow.bak".to_string()),
        "a needed file: {m:?}"
    );
    assert!(
        m.contains(&"letsencrypt/live/example.com".to_string()),
        "{m:?}"
    );
    assert!(m.contains(&"letsencrypt/live/other".to_string()), "{m:?}");
    assert!(
        !m.iter()
            .any(|p| p == "letsencrypt/live" || p.contains("project")),
        "{m:?}"
    );
}

#[test]
fn shown_and_emptied_places_are_neither_walked_nor_masked() {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let (_t, etc) = system();
    let shown = etc.join("app");
    let emptied = etc.join("emptied");
    file(&emptied.join("private"), 0o600);
    let h = walk(
        std::slice::from_ref(&etc),
        &[&shown],
        &[&emptied],
        None,
        &trusting(),
    );
    let m = masked(&h, &etc);
    assert!(
        !m.iter()
            .any(|p| p.starts_with("app") || p.starts_with("emptied")),
        "{m:?}"
    );
    assert!(m.contains(&"shadow.bak".to_string()), "{m:?}");
}

#[test]
fn a_walk_past_its_limit_hides_what_it_did_not_reach() {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let (_t, etc) = system();
    let short = Limits {
        entries: 3,
        ..trusting()
    };
    let h = walk(std::slice::from_ref(&etc), &[], &[], None, &short);
    assert_eq!(h.notes.len(), 1, "{:?}", h.notes);
    // The top was read (its private entries hidden); every subdirectory
    // others may read is hidden whole, not walked.
    let m = masked(&h, &etc);
    assert!(m.contains(&"app".to_string()), "{m:?}");
    assert!(m.contains(&"shadow.bak".to_string()), "{m:?}");
    let whole = walk(std::slice::from_ref(&etc), &[], &[], None, &trusting());
    assert!(!masked(&whole, &etc).contains(&"app".to_string()));
}

#[test]
fn readings_kept_on_disk_serve_the_next_process_and_miss_nothing_added() {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let (_t, etc) = system();
    let kept = tempfile::tempdir().unwrap();
    let first = walk(
        std::slice::from_ref(&etc),
        &[],
        &[],
        Some(kept.path()),
        &trusting(),
    );
    // A new process: nothing in memory.
    *READINGS.lock().unwrap() = None;
    let second = walk(
        std::slice::from_ref(&etc),
        &[],
        &[],
        Some(kept.path()),
        &trusting(),
    );
    assert_eq!(second.dirs_read, 0);
    assert_eq!(second.masked, first.masked);
    file(&etc.join("late.key"), 0o600);
    *READINGS.lock().unwrap() = None;
    let third = walk(
        std::slice::from_ref(&etc),
        &[],
        &[],
        Some(kept.path()),
        &trusting(),
    );
    assert!(third.masked.contains(&etc.join("late.key")));
    // A damaged file is walked again, not trusted.
    std::fs::write(stored_path(kept.path()), b"not readings").unwrap();
    *READINGS.lock().unwrap() = None;
    let fourth = walk(
        std::slice::from_ref(&etc),
        &[],
        &[],
        Some(kept.path()),
        &trusting(),
    );
    assert!(fourth.dirs_read > 0);
    assert_eq!(fourth.masked, third.masked);
}

#[test]
fn the_walked_directories_are_absolute_and_distinct() {
    for (i, (p, why)) in WALKED.iter().enumerate() {
        assert!(p.starts_with('/') && !why.is_empty());
        assert!(WALKED[..i].iter().all(|(q, _)| q != p));
    }
}

#[test]
fn mount_points_are_read_from_the_table_with_its_escapes_undone() {
    let table = "\
22 1 0:21 / /sys rw,nosuid - sysfs sysfs rw
40 22 0:12 / /sys/kernel/tracing rw - tracefs none rw
41 22 0:30 / /mnt/with\\040space\\134and\\011tab rw - tmpfs x rw
42 22 0:31 / /mnt/not\\777octal\\ rw - tmpfs x rw
bad line
";
    let points: Vec<PathBuf> = mount_points(table).collect();
    assert_eq!(
        points,
        [
            PathBuf::from("/sys"),
            PathBuf::from("/sys/kernel/tracing"),
            PathBuf::from("/mnt/with space\\and\ttab"),
            PathBuf::from("/mnt/not\\777octal\\"),
        ]
    );
}

#[test]
fn the_kernels_private_mounts_are_found_below_sys_only() {
    // On this machine, whatever it mounts: every point found is below /sys,
    // a directory, and closed to others; /sys itself is never one.
    for p in private_mounts_within(Path::new("/sys")) {
        assert!(p.starts_with("/sys") && p != Path::new("/sys"), "{p:?}");
        let m = std::fs::metadata(&p).unwrap();
        assert!(
            m.is_dir() && !others_may_read(m.permissions().mode(), true),
            "{p:?}"
        );
    }
    assert!(private_mounts_within(Path::new("/nonexistent-top")).is_empty());
}
