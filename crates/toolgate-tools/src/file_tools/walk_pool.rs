//! A walk whose files are worked on by several threads, for `grep`: the tree
//! is walked by [`tree_walk`] on the calling thread, and
//! its files go in batches to worker threads that search them.
//!
//! Why not the `ignore` crate's parallel walk, which walked and searched on
//! every thread: it reads each directory's `.gitignore`, `.ignore` and
//! `.git/info/exclude` with a blocking open and read, so one of them that is a
//! FIFO (or a link to one, or to `/dev/zero`) stalled the search for ever, and
//! it follows a parent directory swapped for a link after it was listed. The
//! small walk reads only regular ignore files of bounded size, and opens every
//! directory beneath the root with no link at any component. Walking is cheap
//! beside searching, so one walking thread keeps the workers fed.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::mpsc::{Receiver, sync_channel};
use std::sync::{Mutex, PoisonError};

use tokio_util::sync::CancellationToken;
use toolgate_core::ToolError;

use super::tree_walk::{self, Kind, Rules};

/// Files handed to a worker at a time: a hand-off costs a lock and a wake-up,
/// a file's search some microseconds at least.
const BATCH_FILES: usize = 32;

/// Batches waiting per worker before the walk waits for them.
const QUEUED_BATCHES_PER_WORKER: usize = 4;

/// Walks `root` (a canonical directory) with `rules` on the calling thread and
/// calls `work` for each regular file on one of `workers` threads (at least
/// one; the calling thread joins them once its walk is over), each with its
/// own state from `init`; `work` gets the file's path relative to `root`.
/// Returns every thread's state and the count of entries that could not be
/// read (as [`tree_walk::walk`] counts them). Stops when `cancel` fires: the
/// workers leave the batches of files they have not started. A panic in
/// `work` stops the walk and is passed on.
pub fn for_each_file<S, I, F>(
    root: &Path,
    rules: Rules<'_>,
    cancel: &CancellationToken,
    workers: usize,
    init: I,
    work: F,
) -> Result<(Vec<S>, usize), ToolError>
where
    S: Send,
    I: Fn() -> S + Sync,
    F: Fn(&mut S, &Path) + Sync,
{
    let workers = workers.max(1);
    let (batches, queued) = sync_channel::<Vec<Vec<u8>>>(workers * QUEUED_BATCHES_PER_WORKER);
    let queued = Mutex::new(queued);
    // Stops the walk and the work, for the caller's cancel and for a worker
    // that panicked, whose panic is passed on once every thread is done.
    let stop = cancel.child_token();
    let panicked = Mutex::new(None);
    let pool = Pool {
        queued: &queued,
        stop: &stop,
        panicked: &panicked,
    };
    let (states, walked) = std::thread::scope(|scope| {
        let threads: Vec<_> = (0..workers)
            .map(|_| scope.spawn(|| pool.drain(&init, &work)))
            .collect();
        let mut batch = Vec::with_capacity(BATCH_FILES);
        let walked = tree_walk::walk(root, rules, &stop, usize::MAX, |e| {
            if e.kind == Kind::File {
                batch.push(e.relative.to_vec());
                if batch.len() == BATCH_FILES {
                    let full = std::mem::replace(&mut batch, Vec::with_capacity(BATCH_FILES));
                    // The workers take batches until this sender is gone,
                    // even once stopped, so this never waits for ever.
                    drop(batches.send(full));
                }
            }
        });
        if !batch.is_empty() {
            drop(batches.send(batch));
        }
        // The workers stop once the queue is empty and this, the only
        // sender, is gone; the walking thread helps them empty it.
        drop(batches);
        let mut states = vec![pool.drain(&init, &work)];
        for thread in threads {
            match thread.join() {
                Ok(state) => states.push(state),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        (states, walked)
    });
    if let Some(panic) = panicked
        .into_inner()
        .unwrap_or_else(PoisonError::into_inner)
    {
        std::panic::resume_unwind(panic);
    }
    if cancel.is_cancelled() {
        return Err(ToolError::Cancelled);
    }
    // The budget is unbounded, so the walk always finishes.
    Ok((states, walked?.unwrap_or(0)))
}

/// What the walking thread and the workers share.
struct Pool<'a> {
    queued: &'a Mutex<Receiver<Vec<Vec<u8>>>>,
    stop: &'a CancellationToken,
    panicked: &'a Mutex<Option<Box<dyn std::any::Any + Send>>>,
}

impl Pool<'_> {
    /// One worker: takes batches until the walk is over, and returns its
    /// state. Once stopped it still takes them, unworked, so that the walk
    /// never waits on a full queue.
    fn drain<S, I, F>(&self, init: &I, work: &F) -> S
    where
        I: Fn() -> S,
        F: Fn(&mut S, &Path),
    {
        let mut state = init();
        loop {
            let next = self
                .queued
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .recv();
            let Ok(batch) = next else {
                return state;
            };
            // Once a batch: a look at the token takes its lock, which every
            // thread of the walk shares.
            if self.stop.is_cancelled() {
                continue;
            }
            for relative in batch {
                let relative = Path::new(OsStr::from_bytes(&relative));
                let done = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    work(&mut state, relative)
                }));
                if let Err(panic) = done {
                    self.stop.cancel();
                    self.panicked
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .get_or_insert(panic);
                    break;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::os::unix::ffi::OsStringExt;
    use std::os::unix::fs::symlink;

    use super::*;

    fn rules() -> Rules<'static> {
        Rules {
            allow_credentials: false,
            skip: None,
        }
    }

    fn walk_all(root: &Path, workers: usize) -> (BTreeSet<String>, usize) {
        let (states, unreadable) = for_each_file(
            root,
            rules(),
            &CancellationToken::new(),
            workers,
            Vec::new,
            |found, relative| {
                assert!(root.join(relative).is_file(), "{}", relative.display());
                found.push(relative.to_string_lossy().into_owned());
            },
        )
        .unwrap();
        assert_eq!(
            states.len(),
            workers.max(1) + 1,
            "each worker's and the walker's"
        );
        let all: Vec<String> = states.into_iter().flatten().collect();
        let found: BTreeSet<String> = all.iter().cloned().collect();
        assert_eq!(found.len(), all.len(), "a file given twice");
        (found, unreadable)
    }

    #[test]
    fn every_file_of_a_large_tree_reaches_one_worker_once() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let mut expected = BTreeSet::new();
        for d in 0..7 {
            std::fs::create_dir_all(root.join(format!("d{d}/inner"))).unwrap();
            for f in 0..150 {
                let rel = format!("d{d}/inner/f{f}.txt");
                std::fs::write(root.join(&rel), "x").unwrap();
                expected.insert(rel);
            }
        }
        std::fs::write(root.join(".gitignore"), "*.log\n").unwrap();
        std::fs::write(root.join("d0/skipped.log"), "x").unwrap();
        std::fs::write(root.join(".env"), "SECRET=1").unwrap();
        symlink("/etc/hostname", root.join("link.txt")).unwrap();
        expected.insert(".gitignore".into());
        for workers in [0, 1, 3] {
            let (found, unreadable) = walk_all(&root, workers);
            assert_eq!(found, expected, "{workers} workers");
            assert_eq!(unreadable, 0);
        }
    }

    #[test]
    fn a_fifo_named_gitignore_in_a_large_tree_does_not_stall_the_walk() {
        // The `ignore` crate's parallel walk, used for trees past 4,096
        // entries before, blocked for ever opening it.
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("many")).unwrap();
        for f in 0..5000 {
            std::fs::write(root.join(format!("many/f{f}")), "").unwrap();
        }
        std::fs::create_dir(root.join("b")).unwrap();
        std::fs::write(root.join("b/c.txt"), "hello").unwrap();
        let fifo =
            std::ffi::CString::new(root.join("b/.gitignore").into_os_string().into_vec()).unwrap();
        assert_eq!(unsafe { nix::libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
        let (done, finished) = std::sync::mpsc::channel();
        let walked = root.clone();
        std::thread::spawn(move || drop(done.send(walk_all(&walked, 2))));
        let (found, unreadable) = finished
            .recv_timeout(std::time::Duration::from_secs(20))
            .expect("the walk stalled on a FIFO named .gitignore");
        assert!(found.contains("b/c.txt"));
        assert_eq!(found.len(), 5001);
        assert_eq!(
            unreadable, 0,
            "an ignore file that is no regular file is passed over"
        );
    }

    /// A call cancelled (a timeout, the client) while the workers are
    /// behind the walk: the queue is full and the walking thread waits to
    /// give it another batch. The workers stopped taking batches once
    /// cancelled, so that send waited for ever and the call's thread with it.
    #[test]
    fn a_walk_cancelled_from_outside_while_its_workers_lag_ends() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        for f in 0..3000 {
            std::fs::write(root.join(format!("f{f}")), "").unwrap();
        }
        let cancel = CancellationToken::new();
        let (done, finished) = std::sync::mpsc::channel();
        let (walked, token) = (root.clone(), cancel.clone());
        std::thread::spawn(move || {
            let got = for_each_file(
                &walked,
                rules(),
                &token,
                2,
                || (),
                |_, _| {
                    // A slow search: the walk fills the queue long before.
                    std::thread::sleep(std::time::Duration::from_millis(20));
                },
            );
            drop(done.send(got.map(|_| ())));
        });
        std::thread::sleep(std::time::Duration::from_millis(300));
        cancel.cancel();
        let got = finished
            .recv_timeout(std::time::Duration::from_secs(20))
            .expect("the cancelled walk never ended: its thread waits on a full queue");
        assert!(matches!(got, Err(ToolError::Cancelled)), "{got:?}");
    }

    #[test]
    fn a_cancelled_walk_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        for f in 0..300 {
            std::fs::write(root.join(format!("f{f}")), "").unwrap();
        }
        let cancel = CancellationToken::new();
        cancel.cancel();
        let got = for_each_file(&root, rules(), &cancel, 2, || (), |_, _| {});
        assert!(matches!(got, Err(ToolError::Cancelled)), "{got:?}");
    }

    /// A tree of `n` files in a fresh directory.
    fn files(n: usize) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        for f in 0..n {
            std::fs::write(root.join(format!("f{f:05}")), "").unwrap();
        }
        (dir, root)
    }

    /// Runs `f` on its own thread; its result, or a failure naming `what`
    /// when it has not finished within 20 s.
    fn within<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
        let (done, finished) = std::sync::mpsc::channel();
        std::thread::spawn(move || drop(done.send(f())));
        finished
            .recv_timeout(std::time::Duration::from_secs(20))
            .unwrap_or_else(|_| panic!("{what} stalled"))
    }

    /// Cancelled while the queue is full: the workers stopped taking batches
    /// and the walk waited for ever to hand over its next one.
    #[test]
    fn a_walk_cancelled_while_its_queue_is_full_ends() {
        let (_dir, root) = files(3000);
        let got = within("a cancelled walk", move || {
            let cancel = CancellationToken::new();
            for_each_file(&root, rules(), &cancel, 1, || (), |_, _| cancel.cancel())
                .map(|(_, unreadable)| unreadable)
        });
        assert!(matches!(got, Err(ToolError::Cancelled)), "{got:?}");
    }

    /// A worker that panics (a bug in a search) fails the walk instead of
    /// leaving it waiting on a queue nobody empties.
    #[test]
    fn a_worker_that_panics_fails_the_walk_instead_of_stalling_it() {
        let (_dir, root) = files(3000);
        let got = within("a walk whose worker panicked", move || {
            std::panic::catch_unwind(|| {
                for_each_file(
                    &root,
                    rules(),
                    &CancellationToken::new(),
                    1,
                    || (),
                    |_, _| panic!("a bug"),
                )
                .map(|(_, unreadable)| unreadable)
            })
        });
        let panic = got.expect_err("the panic is passed on");
        assert_eq!(panic.downcast_ref::<&str>(), Some(&"a bug"));
    }
}
