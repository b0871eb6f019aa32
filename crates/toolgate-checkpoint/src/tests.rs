#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::path::Path;

use super::*;

fn replace(path: &Path, text: &str) {
    let tmp = path.with_extension("tg-new");
    fs::write(&tmp, text).unwrap();
    fs::rename(&tmp, path).unwrap();
}

#[test]
fn undo_restores_modified_created_and_deleted_paths() {
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let (a, b, c) = (
        work.path().join("a"),
        work.path().join("b"),
        work.path().join("dir"),
    );
    fs::write(&a, "a0").unwrap();
    fs::create_dir(&c).unwrap();
    fs::write(c.join("inner"), "x").unwrap();
    let (store, _) = Checkpoints::open(data.path()).unwrap();
    let mut set = store.begin("call-1", "bash").unwrap();
    for p in [&a, &b, &c] {
        set.save(p).unwrap();
    }
    set.applying().unwrap();
    replace(&a, "a1");
    fs::write(&b, "new").unwrap();
    fs::remove_dir_all(&c).unwrap();
    let id = set.landed().unwrap();

    let listed = store.list().unwrap();
    assert_eq!(listed.checkpoints.len(), 1);
    assert_eq!(listed.checkpoints[0].entries.len(), 3);
    store.undo(&id).unwrap();
    assert_eq!(fs::read_to_string(&a).unwrap(), "a0");
    assert!(!b.exists());
    assert_eq!(fs::read_to_string(c.join("inner")).unwrap(), "x");
    let again = store.undo(&id).unwrap_err();
    assert!(
        matches!(again, CheckpointError::NotLanded { .. }),
        "{again}"
    );
}

#[test]
fn undo_refuses_over_a_later_edit_and_names_the_file() {
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let a = work.path().join("a");
    fs::write(&a, "a0").unwrap();
    let (store, _) = Checkpoints::open(data.path()).unwrap();
    let mut set = store.begin("call-1", "edit").unwrap();
    set.save(&a).unwrap();
    set.applying().unwrap();
    replace(&a, "a1");
    let id = set.landed().unwrap();
    replace(&a, "a2 by the person");
    let err = store.undo(&id).unwrap_err();
    assert!(err.to_string().contains(&a.display().to_string()), "{err}");
    assert_eq!(fs::read_to_string(&a).unwrap(), "a2 by the person");
}

#[test]
fn a_failed_change_set_rolls_back() {
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let a = work.path().join("a");
    fs::write(&a, "a0").unwrap();
    let (store, _) = Checkpoints::open(data.path()).unwrap();
    let mut set = store.begin("call-1", "bash").unwrap();
    set.save(&a).unwrap();
    set.applying().unwrap();
    replace(&a, "half");
    set.roll_back().unwrap();
    assert_eq!(fs::read_to_string(&a).unwrap(), "a0");
    assert_eq!(store.newest_landed().unwrap(), None);
}

#[test]
fn bad_ids_are_refused_by_name() {
    let data = tempfile::tempdir().unwrap();
    let (store, _) = Checkpoints::open(data.path()).unwrap();
    for id in ["", "../x", "nope", "a/b"] {
        let err = store.undo(id).unwrap_err();
        assert!(matches!(err, CheckpointError::Unknown(_)), "{id}: {err}");
    }
}

#[test]
fn an_unreadable_manifest_is_listed_and_others_still_undo() {
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let a = work.path().join("a");
    let (store, _) = Checkpoints::open(data.path()).unwrap();
    let mut set = store.begin("c", "write").unwrap();
    set.save(&a).unwrap();
    set.applying().unwrap();
    fs::write(&a, "new").unwrap();
    let id = set.landed().unwrap();
    fs::create_dir(data.path().join("garbage")).unwrap();
    fs::write(data.path().join("garbage/manifest.json"), "{not json").unwrap();
    let listed = store.list().unwrap();
    assert_eq!(listed.unreadable.len(), 1);
    store.undo(&id).unwrap();
    assert!(!a.exists());
}

#[test]
fn sweep_removes_finished_sets_over_the_cap_oldest_first() {
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let (store, _) = Checkpoints::open(data.path()).unwrap();
    for i in 0..3 {
        let p = work.path().join(format!("f{i}"));
        fs::write(&p, vec![b'x'; 1000]).unwrap();
        let mut set = store.begin("c", "write").unwrap();
        set.save(&p).unwrap();
        set.applying().unwrap();
        replace(&p, "y");
        set.landed().unwrap();
    }
    assert_eq!(store.sweep(KEEP_FOR, u64::MAX).unwrap(), 0);
    assert_eq!(store.sweep(KEEP_FOR, 1500).unwrap(), 2);
    assert_eq!(store.list().unwrap().checkpoints.len(), 1);
    assert_eq!(store.sweep(Duration::ZERO, u64::MAX).unwrap(), 1);
}

/// The child half of the crash test: lands half a change set, then dies.
fn crash_child(data: &Path, work: &Path, at: usize, fsync: bool) -> ! {
    let (store, _) = Checkpoints::open_with(data, fsync).unwrap();
    let mut set = store.begin("call-crash", "bash").unwrap();
    let paths: Vec<_> = (0..10).map(|i| work.join(format!("f{i}"))).collect();
    for p in &paths {
        set.save(p).unwrap();
    }
    set.applying().unwrap();
    for (i, p) in paths.iter().enumerate() {
        if i == at {
            // SAFETY: ends this process at once, as a crash would.
            unsafe { libc::raise(libc::SIGKILL) };
        }
        if i % 2 == 0 {
            replace(p, "changed");
        } else {
            fs::remove_file(p).unwrap();
        }
    }
    unsafe { libc::raise(libc::SIGKILL) };
    unreachable!()
}

/// Whether the store syncs (`--durability full`) or not (`normal`), a
/// killed process leaves the files as they were before the change set.
#[test]
fn a_change_set_cut_off_by_sigkill_is_rolled_back_at_the_next_open() {
    if let (Ok(data), Ok(work), Ok(at), Ok(fsync)) = (
        std::env::var("TG_CP_CRASH_DATA"),
        std::env::var("TG_CP_CRASH_WORK"),
        std::env::var("TG_CP_CRASH_AT"),
        std::env::var("TG_CP_CRASH_FSYNC"),
    ) {
        crash_child(
            Path::new(&data),
            Path::new(&work),
            at.parse().unwrap(),
            fsync == "1",
        );
    }
    for (at, fsync) in [0, 1, 5, 9, 10]
        .into_iter()
        .flat_map(|at| [(at, true), (at, false)])
    {
        let data = tempfile::tempdir().unwrap();
        let work = tempfile::tempdir().unwrap();
        for i in 0..10 {
            fs::write(work.path().join(format!("f{i}")), format!("orig{i}")).unwrap();
        }
        let status = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "tests::a_change_set_cut_off_by_sigkill_is_rolled_back_at_the_next_open",
                "--nocapture",
            ])
            .env("TG_CP_CRASH_DATA", data.path())
            .env("TG_CP_CRASH_WORK", work.path())
            .env("TG_CP_CRASH_AT", at.to_string())
            .env("TG_CP_CRASH_FSYNC", if fsync { "1" } else { "0" })
            .status()
            .unwrap();
        assert!(!status.success(), "the child died");
        let (store, recovered) = Checkpoints::open_with(data.path(), fsync).unwrap();
        assert_eq!(recovered.len(), 1, "at {at}, fsync {fsync}");
        assert!(recovered[0].error.is_none(), "{:?}", recovered[0].error);
        for i in 0..10 {
            let text = fs::read_to_string(work.path().join(format!("f{i}"))).unwrap();
            assert_eq!(
                text,
                format!("orig{i}"),
                "file {i} after a crash at step {at}, fsync {fsync}"
            );
        }
        assert_eq!(store.newest_landed().unwrap(), None);
    }
}

/// The ids of the unfinished checkpoints (under `.open`).
fn indexed(data: &Path) -> Vec<String> {
    let mut ids: Vec<String> = fs::read_dir(data.join(OPEN_DIR))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    ids.sort();
    ids
}

#[test]
fn only_unfinished_change_sets_stay_where_open_reads() {
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let a = work.path().join("a");
    fs::write(&a, "a0").unwrap();
    let (store, _) = Checkpoints::open(data.path()).unwrap();
    // Landed, rolled back, undone and discarded sets leave `.open`.
    let mut set = store.begin("c1", "write").unwrap();
    set.save(&a).unwrap();
    set.applying().unwrap();
    replace(&a, "a1");
    let landed = set.landed().unwrap();
    let mut set = store.begin("c2", "write").unwrap();
    set.save(&a).unwrap();
    set.applying().unwrap();
    set.roll_back().unwrap();
    drop(store.begin("c3", "write").unwrap());
    assert!(indexed(data.path()).is_empty());
    store.undo(&landed).unwrap();
    assert!(indexed(data.path()).is_empty());
    assert_eq!(fs::read_to_string(&a).unwrap(), "a0");
    // One cut off while applying stays, and the next open rolls it back
    // and moves it out.
    let mut set = store.begin("c4", "write").unwrap();
    let cut = set.id().to_string();
    set.save(&a).unwrap();
    set.applying().unwrap();
    replace(&a, "half");
    drop(set);
    assert_eq!(indexed(data.path()), vec![cut.clone()]);
    let (_, recovered) = Checkpoints::open(data.path()).unwrap();
    assert_eq!(recovered.len(), 1);
    assert_eq!(recovered[0].id, cut);
    assert_eq!(fs::read_to_string(&a).unwrap(), "a0");
    assert!(indexed(data.path()).is_empty());
    // `.open` is the store's own: never listed as a checkpoint.
    let listed = store.list().unwrap();
    assert!(listed.unreadable.is_empty());
    assert_eq!(listed.checkpoints.len(), 3);
}

#[test]
fn a_store_made_before_open_is_read_whole_once() {
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let a = work.path().join("a");
    fs::write(&a, "a0").unwrap();
    let (store, _) = Checkpoints::open(data.path()).unwrap();
    let mut set = store.begin("c", "write").unwrap();
    let id = set.id().to_string();
    set.save(&a).unwrap();
    set.applying().unwrap();
    replace(&a, "half");
    drop(set);
    // As an older toolgate left it: the cut-off set at the top level.
    fs::rename(data.path().join(OPEN_DIR).join(&id), data.path().join(&id)).unwrap();
    fs::remove_dir_all(data.path().join(OPEN_DIR)).unwrap();
    let (_, recovered) = Checkpoints::open(data.path()).unwrap();
    assert_eq!(recovered.len(), 1);
    assert_eq!(fs::read_to_string(&a).unwrap(), "a0");
    assert!(indexed(data.path()).is_empty());
}

#[test]
fn a_set_cut_off_before_applying_is_removed_and_costs_few_files() {
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let (store, _) = Checkpoints::open(data.path()).unwrap();
    // Begun, nothing saved: one directory, nothing in it.
    let set = store.begin("c", "write").unwrap();
    let dir = data.path().join(OPEN_DIR).join(set.id());
    assert_eq!(fs::read_dir(&dir).unwrap().count(), 0);
    drop(set);
    assert!(!dir.exists());
    // As a process killed there leaves it: found and removed at open.
    fs::create_dir(&dir).unwrap();
    let (_, recovered) = Checkpoints::open(data.path()).unwrap();
    assert!(recovered.is_empty());
    assert!(!dir.exists());
    // A set that only creates a path keeps no blob and lands with one file,
    // its manifest.
    let mut set = store.begin("c", "write").unwrap();
    let new = work.path().join("new");
    set.save(&new).unwrap();
    set.applying().unwrap();
    fs::write(&new, "x").unwrap();
    let id = set.landed().unwrap();
    let files: Vec<String> = fs::read_dir(data.path().join(&id))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(files, ["manifest.json"]);
    store.undo(&id).unwrap();
    assert!(!new.exists());
}

#[test]
fn a_stray_file_among_the_unfinished_sets_does_not_close_the_store() {
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let (store, _) = Checkpoints::open(data.path()).unwrap();
    fs::write(data.path().join(OPEN_DIR).join("1700000000-00ab001"), b"x").unwrap();
    let (store2, recovered) = Checkpoints::open(data.path()).unwrap();
    assert!(recovered.is_empty());
    // Both still record and undo.
    for s in [&store, &store2] {
        let a = work.path().join("a");
        let mut set = s.begin("c", "write").unwrap();
        set.save(&a).unwrap();
        set.applying().unwrap();
        fs::write(&a, "x").unwrap();
        let id = set.landed().unwrap();
        s.undo(&id).unwrap();
        assert!(!a.exists());
    }
    assert_eq!(store.list().unwrap().unreadable.len(), 1);
}
