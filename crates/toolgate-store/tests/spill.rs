//! The spill store and its retention sweep, on real files.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs::File;
use std::os::unix::fs::PermissionsExt;
use std::time::{Duration, SystemTime};

use toolgate_core::{Content, OutputBounds, OutputStore, ToolOutput, bound};
use toolgate_store::{DEFAULT_RETENTION, SpillStore};

const DAY: Duration = Duration::from_secs(24 * 60 * 60);

#[test]
fn spill_writes_the_full_text_privately_under_tool_output() {
    let dir = tempfile::tempdir().unwrap();
    let store = SpillStore::new(dir.path().join("data"));
    let text = "line\n".repeat(10_000) + "é end";
    let a = store.spill("toolu_01/../../x", &text).unwrap();
    let b = store.spill("toolu_01/../../x", "second").unwrap();
    assert_ne!(a, b, "names are unique per spill");
    assert_eq!(a.parent().unwrap(), dir.path().join("data/tool-output"));
    let name = a.file_name().unwrap().to_str().unwrap();
    assert!(name.contains("toolu_01_______x"), "{name}");
    assert!(!name.contains('/'));
    assert!(
        std::fs::read_to_string(&a).unwrap() == text,
        "the spill holds the full text"
    );
    assert_eq!(std::fs::read_to_string(&b).unwrap(), "second");
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&a), 0o600);
    assert_eq!(mode(store.dir()), 0o700);
}

#[test]
fn bounding_through_the_store_names_the_spill_file() {
    let dir = tempfile::tempdir().unwrap();
    let store = SpillStore::new(dir.path());
    let full: String = (0..5000).map(|i| format!("row {i}\n")).collect();
    let out = ToolOutput {
        structured: serde_json::json!({}),
        content: vec![Content::text(full.clone())],
        exit_status: None,
    };
    let bounded = bound(out, OutputBounds::default(), &store, "call-7").unwrap();
    let path = bounded.spill_path.unwrap();
    // Compared without printing: the texts are large.
    assert!(
        std::fs::read_to_string(&path).unwrap() == full,
        "the spill holds the full text"
    );
    let text = bounded.content[0].as_text().unwrap();
    assert!(text.contains(&format!("full content saved to {}", path.display())));
}

#[test]
fn a_regular_file_where_the_directory_belongs_fails_the_spill() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("tool-output"), "not a directory").unwrap();
    let store = SpillStore::new(dir.path());
    let err = store.spill("c1", "text").unwrap_err();
    assert_eq!(err.path, dir.path().join("tool-output"));
    assert!(
        err.to_string().contains("could not save full tool output"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("tool-output")).unwrap(),
        "not a directory"
    );
}

#[test]
fn an_unwritable_data_directory_fails_the_spill() {
    // Root ignores permission bits; /proc refuses new directories even for root.
    let store = SpillStore::new("/proc/self/toolgate-data");
    let err = store.spill("c1", "text").unwrap_err();
    assert!(err.path.starts_with("/proc/self/toolgate-data"), "{err}");
}

#[test]
fn a_symlink_planted_at_a_spill_name_is_never_followed() {
    // Names are fresh per spill, and create_new refuses any existing entry; here
    // the whole directory is replaced by a symlink to a file, which must fail.
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("victim.txt");
    std::fs::write(&target, "precious").unwrap();
    std::os::unix::fs::symlink(&target, dir.path().join("tool-output")).unwrap();
    let store = SpillStore::new(dir.path());
    assert!(store.spill("c1", "overwrite?").is_err());
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "precious");
}

fn age(path: &std::path::Path, by: Duration) {
    File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(SystemTime::now() - by)
        .unwrap();
}

#[test]
fn retention_removes_only_files_older_than_seven_days() {
    assert_eq!(DEFAULT_RETENTION, 7 * DAY);
    let dir = tempfile::tempdir().unwrap();
    let store = SpillStore::new(dir.path());
    let old = store.spill("old", "a").unwrap();
    let older = store.spill("older", "b").unwrap();
    let recent = store.spill("recent", "c").unwrap();
    let fresh = store.spill("fresh", "d").unwrap();
    age(&old, 7 * DAY + Duration::from_secs(60));
    age(&older, 30 * DAY);
    age(&recent, 6 * DAY);
    // An old directory and an old symlink in there are not the sweep's business.
    let sub = store.dir().join("subdir");
    std::fs::create_dir(&sub).unwrap();
    let link = store.dir().join("link");
    std::os::unix::fs::symlink(&older, &link).unwrap();

    assert_eq!(store.sweep(DEFAULT_RETENTION).unwrap(), 2);
    assert!(!old.exists());
    assert!(!older.exists());
    assert!(recent.exists());
    assert!(fresh.exists());
    assert!(sub.is_dir());
    assert!(link.symlink_metadata().is_ok());
    // Nothing left to remove.
    assert_eq!(store.sweep(DEFAULT_RETENTION).unwrap(), 0);
}

#[test]
fn sweeping_before_anything_was_spilled_is_a_no_op() {
    let dir = tempfile::tempdir().unwrap();
    let store = SpillStore::new(dir.path().join("never-created"));
    assert_eq!(store.sweep(DEFAULT_RETENTION).unwrap(), 0);
    assert!(!store.dir().exists());
}

#[test]
fn sweeping_a_file_where_the_directory_belongs_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("tool-output"), "x").unwrap();
    let err = SpillStore::new(dir.path())
        .sweep(DEFAULT_RETENTION)
        .unwrap_err();
    assert!(err.to_string().contains("tool-output"), "{err}");
}

#[test]
fn the_background_sweeper_sweeps_on_start_and_stops_on_drop() {
    let dir = tempfile::tempdir().unwrap();
    let store = SpillStore::new(dir.path());
    let old = store.spill("old", "a").unwrap();
    age(&old, 8 * DAY);
    let handle = store
        .spawn_sweeper(Duration::from_secs(3600), DEFAULT_RETENTION)
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while old.exists() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(!old.exists(), "the first sweep runs at start");
    // Dropping returns promptly although the next sweep is an hour away.
    drop(handle);
    let later = store.spill("later", "b").unwrap();
    age(&later, 8 * DAY);
    std::thread::sleep(Duration::from_millis(50));
    assert!(later.exists(), "no sweeps after the handle is dropped");
}
