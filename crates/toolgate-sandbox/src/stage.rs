//! Staged writes: a confined command writes into an overlay of each root, and
//! nothing it changed reaches the real location until the caller has judged
//! every changed path and lands the ones it accepts.
//!
//! # How
//!
//! Between the fork and the `exec` of bubblewrap, the child enters a new
//! user and mount namespace of its own and mounts an overlay over each root
//! — the root itself as the lower layer, an `upper` and a `work` directory
//! of this run as the upper layer (`OverlayMounts`, a `pre_exec` hook that
//! only calls the kernel); bubblewrap then binds the root (now the overlay)
//! into the sandbox like any root. Debian's bubblewrap 0.8 has no
//! `--overlay`, hence the hook. The overlay lives in that namespace only:
//! when the command exits, the mount is gone and the upper directory holds
//! exactly what the command created, modified or deleted (a deletion is a
//! whiteout, a directory deleted and made again is "opaque"). The overlay is
//! mounted with `userxattr` (the markers are `user.overlay.*` attributes)
//! and `volatile` (see Durability below), without `redirect_dir`, so renaming a directory of the lower layer fails
//! with `EXDEV` and programs fall back to copying: a moved directory shows
//! as every path below it deleted and created again, and each is judged.
//!
//! [`Staging::changes`] reads the upper directories into [`Change`]s;
//! [`Staging::land`] applies the accepted ones to the real location through
//! a `toolgate_checkpoint` change set (atomic as a set, undoable).
//! Dropping a [`Staging`] discards whatever was not landed: its run
//! directory (under the caller's private staging base) is removed by the
//! next run, while that run's command runs (see `run_dir`).
//!
//! The upper directory is on the root's own file system, so landing a file
//! is a `rename`: a 100 MB file lands as fast as a 1-byte one.
//!
//! # Durability
//!
//! A `volatile` overlay skips the sync of the whole upper file system that
//! the kernel otherwise makes when the overlay is unmounted (when the
//! command exits): writing 100 MB then cost the time to write them to the
//! disk. Nothing relies on that sync: an upper directory is never mounted
//! again, and it lands only through [`Staging::land`] in the process that
//! staged it, after judging. After a crash of that process, or of the
//! machine, whatever an upper directory holds is never landed — the next
//! run uses a directory of its own. When the journal asks for it
//! ([`LandingJournal::fsync`]: the checkpoint store under `--durability
//! full`), what is about to land is synced to the disk before the journal
//! records its intent, so that a landed file is whole after a power loss
//! too.

use std::collections::{BTreeMap, HashSet};
use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::SandboxError;
use crate::run_dir::{self, OUTSIDE_PREFIX, RunDir};
use crate::system_view::owners::OthersView;

/// How a changed path changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    /// It did not exist before.
    Created,
    /// It existed and its content, kind, mode or link target changed.
    Modified,
    /// It existed and is gone.
    Deleted,
}

impl ChangeKind {
    /// The word for people: `created`, `modified`, `deleted`.
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeKind::Created => "created",
            ChangeKind::Modified => "modified",
            ChangeKind::Deleted => "deleted",
        }
    }
}

/// One path a confined command changed, as it is in the real location.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    /// The path in the real location.
    pub path: PathBuf,
    /// How it changed.
    pub kind: ChangeKind,
    /// Whether it is (or, when deleted, was) a directory.
    pub dir: bool,
    /// The new content's size in bytes (files; 0 otherwise).
    pub size: u64,
    /// What was there was removed whole and made again (a directory
    /// replaced, or moved away and copied back).
    pub replaced: bool,
    /// The real path was changed by someone else while the command ran (a
    /// person's edit, another command's landing): landing would overwrite
    /// that, so it never lands ([`Staging::land`] leaves it).
    pub changed_outside: bool,
}

/// Where landing records what it changes, so that the change set lands as a
/// whole and can be undone: a checkpoint store's change set, wired in by the
/// caller (the sandbox keeps no store of its own).
pub trait LandingJournal {
    /// Records `path`'s state before anything changes it.
    fn save(&mut self, path: &Path) -> Result<(), String>;
    /// Records only a directory's mode: it stays, and its children are
    /// saved one by one.
    fn save_mode(&mut self, path: &Path) -> Result<(), String> {
        self.save(path)
    }
    /// Whether what lands must be on the disk before [`applying`] records
    /// the intent (so that it outlives a power loss), or may stay in the
    /// page cache (it outlives the process being killed).
    ///
    /// [`applying`]: LandingJournal::applying
    fn fsync(&self) -> bool {
        true
    }
    /// Makes the intent durable: called once every path is saved, before
    /// the first change.
    fn applying(&mut self) -> Result<(), String>;
    /// Every change is applied: records it as landed and returns its id.
    fn landed(self: Box<Self>) -> Result<String, String>;
    /// Puts every saved path back as it was.
    fn roll_back(self: Box<Self>) -> Result<(), String>;
}

/// The overlay of one root for one run.
#[derive(Debug)]
struct Layer {
    root: PathBuf,
    upper: PathBuf,
    work: PathBuf,
}

/// The staged writes of one run: create with [`Staging::prepare`] before the
/// command, read with [`Staging::changes`] after it, then
/// [`Staging::land`] or drop.
#[derive(Debug)]
pub struct Staging {
    dir: PathBuf,
    layers: Vec<Layer>,
    /// When the run was prepared (nanoseconds since the epoch): a real path
    /// whose status changed since was changed outside the command.
    started: i128,
    /// The run directory's lock: held while this value lives, so that no
    /// other process's sweep removes it (`run_dir::sweep`).
    run: Option<RunDir>,
    /// The removal of what earlier runs left, joined when this run ends.
    sweeper: Option<std::thread::JoinHandle<()>>,
    /// The sweeper's go-ahead ([`Staging::take_sweep_signal`]), when not
    /// taken: closed at drop.
    sweep_signal: Option<SweepSignal>,
}

/// How long the sweeper waits for the command's child to be forked before
/// it sweeps anyway (a staging whose command is never spawned).
const SWEEP_WAIT_MS: libc::c_int = 200;

/// The sweeper's go-ahead: one end of a socket pair that the command's
/// child sends a byte on first thing after the fork (or that is closed).
///
/// Removing a directory tree holds a descriptor on each directory being
/// emptied; a fork meanwhile copies them into the child, which then holds
/// the last reference to directories removed since, and frees them — a
/// discard of their blocks each, on this file system — as it `exec`s
/// bubblewrap. Sweeping only once the child exists keeps that off the
/// command's path.
#[derive(Debug)]
pub(crate) struct SweepSignal(std::os::fd::OwnedFd);

impl SweepSignal {
    /// In the forked child: lets the sweeper start. Only a `send` that
    /// neither blocks nor raises `SIGPIPE` (the sweeper may have stopped
    /// waiting and closed its end): safe in a `pre_exec` hook.
    pub(crate) fn send(&self) {
        use std::os::fd::AsRawFd;
        // SAFETY: sends one byte from a static on a socket this value owns
        // (open until it is dropped, after the fork).
        unsafe {
            libc::send(
                self.0.as_raw_fd(),
                [1u8].as_ptr().cast(),
                1,
                libc::MSG_NOSIGNAL | libc::MSG_DONTWAIT,
            )
        };
    }
}

/// A connected socket pair for [`SweepSignal`]: `(the sweeper's end,
/// signal)`.
fn sweep_channel() -> io::Result<(std::os::fd::OwnedFd, SweepSignal)> {
    let (wait, signal) = std::os::unix::net::UnixStream::pair()?;
    Ok((wait.into(), SweepSignal(signal.into())))
}

/// Waits until `read` has a byte or is closed, or [`SWEEP_WAIT_MS`].
fn wait_for_signal(read: &std::os::fd::OwnedFd) {
    use std::os::fd::AsRawFd;
    let mut poll = libc::pollfd {
        fd: read.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd.
    unsafe { libc::poll(&mut poll, 1, SWEEP_WAIT_MS) };
}

static RUN: AtomicU64 = AtomicU64::new(0);

/// Characters that the overlay's mount options cannot carry in a path.
fn unmountable(p: &Path) -> bool {
    p.as_os_str()
        .as_bytes()
        .iter()
        .any(|b| matches!(b, b',' | b':' | b'\\' | b'\n'))
}

impl Staging {
    /// Makes the upper and work directories for `roots` (canonical) under
    /// `base` (which must be on the same file system as each root, and
    /// invisible inside the sandbox). A root on another file system than
    /// `base` is staged beside itself, in a hidden directory of its parent,
    /// when that parent is writable; otherwise this fails, naming the root.
    pub fn prepare(base: &Path, roots: &[PathBuf]) -> Result<Staging, SandboxError> {
        let setup = |what: &str, p: &Path, e: io::Error| {
            SandboxError::Setup(format!("staging: cannot {what} {}: {e}", p.display()))
        };
        std::fs::create_dir_all(base).map_err(|e| setup("create", base, e))?;
        let base_meta = std::fs::metadata(base).map_err(|e| setup("read", base, e))?;
        if base_meta.permissions().mode() & 0o777 != 0o700 {
            let _ = std::fs::set_permissions(base, std::fs::Permissions::from_mode(0o700));
        }
        let base_dev = base_meta.dev();
        let name = format!(
            "run-{}-{}-{}",
            std::process::id(),
            RUN.fetch_add(1, Ordering::Relaxed),
            crate::now_nanos()
        );
        // One root on the base's file system (the usual case): the spare
        // the previous run made, if there is one.
        let one_here =
            roots.len() == 1 && std::fs::metadata(&roots[0]).is_ok_and(|m| m.dev() == base_dev);
        let run = match one_here.then(|| RunDir::claim_spare(base, &name)).flatten() {
            Some(run) => run,
            None => {
                RunDir::create(base, &name).map_err(|e| setup("create", &base.join(&name), e))?
            }
        };
        // What earlier runs left (each run's directory is removed by a
        // later one, and a killed run's too; never a live run's) is removed
        // while this one's command runs: removing directories waits on the
        // file system's journal, milliseconds each on a busy disk.
        // It starts once the command's child is forked (see `SweepSignal`).
        let sweep_base = base.to_path_buf();
        let spare_name = name.clone();
        let (go, sweep_signal) = match sweep_channel() {
            Ok((go, signal)) => (Some(go), Some(signal)),
            Err(_) => (None, None),
        };
        let sweeper = std::thread::Builder::new()
            .name("toolgate-stage-sweep".into())
            .spawn(move || {
                if let Some(go) = go {
                    wait_for_signal(&go);
                }
                run_dir::sweep(&sweep_base, remove_tree);
                run_dir::make_spare(&sweep_base, &format!("spare-{spare_name}"));
            })
            .ok();
        let mut staging = Staging {
            dir: run.path().to_path_buf(),
            layers: Vec::new(),
            started: crate::now_nanos(),
            run: Some(run),
            sweeper,
            sweep_signal,
        };
        // Where each root's layer goes, decided first so that the ones
        // outside the run directory are recorded before they exist.
        let mut places = Vec::new();
        for (i, root) in roots.iter().enumerate() {
            if unmountable(root) {
                return Err(SandboxError::Spec(format!(
                    "staging: the root {} has a `,`, `:` or `\\` in its path, which an overlay mount cannot name",
                    root.display()
                )));
            }
            let root_dev = std::fs::metadata(root)
                .map_err(|e| setup("read", root, e))?
                .dev();
            let at = if root_dev == base_dev {
                staging.dir.join(format!("r{i}"))
            } else {
                // Beside the root, on its own file system.
                let parent = root.parent().ok_or_else(|| {
                    SandboxError::Spec(format!(
                        "staging: {} is on another file system than {} and has no parent to stage in",
                        root.display(),
                        base.display()
                    ))
                })?;
                parent.join(format!("{OUTSIDE_PREFIX}{name}-r{i}"))
            };
            if unmountable(&at) {
                return Err(SandboxError::Spec(format!(
                    "staging: {} cannot be named in an overlay mount",
                    at.display()
                )));
            }
            places.push((root, at));
        }
        let outside: Vec<PathBuf> = places
            .iter()
            .map(|(_, at)| at.clone())
            .filter(|at| !at.starts_with(&staging.dir))
            .collect();
        if let (Some(run), false) = (&staging.run, outside.is_empty()) {
            run.record_outside(&outside)
                .map_err(|e| setup("record the layers of", &staging.dir, e))?;
        }
        for (root, at) in places {
            let upper = at.join("upper");
            let work = at.join("work");
            // A claimed spare has them already (`work` is made last).
            if std::fs::symlink_metadata(&work).is_err() {
                for d in [&at, &upper, &work] {
                    std::fs::create_dir_all(d).map_err(|e| setup("create", d, e))?;
                }
            }
            if !at.starts_with(&staging.dir) {
                // Beside a root: private like the staging base.
                let _ = std::fs::set_permissions(&at, std::fs::Permissions::from_mode(0o700));
            }
            staging.layers.push(Layer {
                root: root.clone(),
                upper,
                work,
            });
        }
        Ok(staging)
    }

    /// The sweeper's go-ahead, for the command's child to send first thing
    /// after the fork ([`SweepSignal::send`]); without it the sweeper
    /// starts when this staging is dropped, or after a moment.
    pub(crate) fn take_sweep_signal(&mut self) -> Option<SweepSignal> {
        self.sweep_signal.take()
    }

    /// Directories that hold this run's layers outside `base` (staged
    /// beside a root).
    fn outside_dirs(&self) -> Vec<PathBuf> {
        self.layers
            .iter()
            .filter_map(|l| l.upper.parent())
            .filter(|p| !p.starts_with(&self.dir))
            .map(Path::to_path_buf)
            .collect()
    }

    /// Every directory of this run's layers: the sandbox hides them.
    pub(crate) fn dirs(&self) -> Vec<PathBuf> {
        let mut out = self.outside_dirs();
        out.push(self.dir.clone());
        out
    }

    /// The overlays of this run, ready to mount in the command's child
    /// before it `exec`s bubblewrap.
    pub(crate) fn overlay_mounts(&self) -> Result<OverlayMounts, SandboxError> {
        OverlayMounts::new(
            self.layers
                .iter()
                .map(|l| (l.root.as_path(), l.upper.as_path(), l.work.as_path())),
        )
    }

    /// Every path the command changed, in path order (a directory before
    /// what is below it). A deleted or replaced directory lists every path
    /// that was below it too, so that each is judged (moving `.git` away is
    /// a change to `.git/config`).
    pub fn changes(&self) -> Result<Vec<Change>, SandboxError> {
        self.changes_with(None)
    }

    /// [`Staging::changes`]; with `live` (the time of the last settling,
    /// nanoseconds since the epoch) for an overlay that is still mounted:
    /// the upper layers are only read, never changed (privilege bits are
    /// dropped when landing instead), an opaque directory over a real one
    /// is compared path by path, and a file that neither the upper layer
    /// nor the real location changed since then is not looked into again.
    pub(crate) fn changes_with(&self, walk: Option<i128>) -> Result<Vec<Change>, SandboxError> {
        let mut out = BTreeMap::new();
        for l in &self.layers {
            walk_upper(&l.upper, &l.root, &mut out, walk)
                .map_err(|e| SandboxError::Setup(format!("staging: reading the changes: {e}")))?;
        }
        let mut changes: Vec<Change> = out.into_values().collect();
        let mut outside = ChangedOutside::since(self.started);
        for c in &mut changes {
            c.changed_outside = outside.changed(&c.path, c.dir);
        }
        Ok(changes)
    }

    /// Applies the changes at the `accepted` paths to the real location, as
    /// one change set recorded in `journal` (a checkpoint store's change
    /// set); the rest is discarded. A deleted directory is removed only
    /// when every path below it is accepted; a created directory lands in
    /// one `rename` when everything below it is accepted. Returns the
    /// journal's id for the change set, or `None` when nothing landed (the
    /// journal is then dropped unused). On an error the journal rolls back,
    /// so nothing of the change set remains applied.
    pub fn land(
        &self,
        changes: &[Change],
        accepted: &HashSet<PathBuf>,
        journal: Box<dyn LandingJournal>,
    ) -> Result<Option<String>, SandboxError> {
        self.land_with(changes, accepted, journal, false)
    }

    /// [`Staging::land`]; with `copy`, for an overlay that is still mounted,
    /// what lands is copied out of the upper layer (which is left as it is)
    /// rather than renamed, and the set-user-ID, set-group-ID and `o+w`
    /// bits the real path did not carry are dropped from the copy.
    pub(crate) fn land_with(
        &self,
        changes: &[Change],
        accepted: &HashSet<PathBuf>,
        mut journal: Box<dyn LandingJournal>,
        copy: bool,
    ) -> Result<Option<String>, SandboxError> {
        // What someone else changed meanwhile is theirs: never overwritten.
        // Looked at again here, since judging (a person asked) takes time;
        // a path marked by `changes` still has its later change time.
        // In path order, so that a directory that still does not exist
        // vouches for everything below it without a look at each.
        let mut outside = ChangedOutside::since(self.started);
        let accepted: HashSet<&Path> = changes
            .iter()
            .filter(|c| accepted.contains(&c.path))
            .filter(|c| !c.changed_outside && !outside.changed(&c.path, c.dir))
            .map(|c| c.path.as_path())
            .collect();
        let plan = self.plan(changes, &accepted);
        if plan.is_empty() {
            return Ok(None);
        }
        let fail = |e: String| SandboxError::Setup(format!("landing the command's changes: {e}"));
        for step in &plan {
            match step {
                Step::Chmod { at, .. } => journal.save_mode(at),
                _ => journal.save(step.target()),
            }
            .map_err(fail)?;
        }
        if journal.fsync() {
            self.sync_staged().map_err(|e| fail(e.to_string()))?;
        }
        journal.applying().map_err(fail)?;
        for step in &plan {
            if let Err(e) = step.apply(copy) {
                let why = format!(
                    "landing the command's changes: {}: {e}",
                    step.target().display()
                );
                return Err(match journal.roll_back() {
                    Ok(()) => SandboxError::Setup(why),
                    Err(r) => SandboxError::Setup(format!("{why}; and rolling back failed: {r}")),
                });
            }
        }
        journal.landed().map(Some).map_err(fail)
    }

    /// Syncs the file systems of the upper directories to the disk: the
    /// `volatile` overlay left that undone.
    fn sync_staged(&self) -> io::Result<()> {
        for l in &self.layers {
            let dir = std::fs::File::open(&l.upper)?;
            // SAFETY: a valid open descriptor.
            if unsafe { libc::syncfs(std::os::fd::AsRawFd::as_raw_fd(&dir)) } != 0 {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(())
    }

    /// The steps that land the accepted changes, outermost first.
    fn plan(&self, changes: &[Change], accepted: &HashSet<&Path>) -> Vec<Step> {
        let mut steps = Vec::new();
        // A path whose whole subtree is accepted, by the changes below it.
        let refused: Vec<&Path> = changes
            .iter()
            .filter(|c| !accepted.contains(c.path.as_path()))
            .map(|c| c.path.as_path())
            .collect();
        let whole = |p: &Path| !refused.iter().any(|r| r.starts_with(p));
        let mut covered: Vec<&Path> = Vec::new();
        for c in changes {
            if covered.iter().any(|d| c.path.starts_with(d)) {
                continue;
            }
            if !accepted.contains(c.path.as_path()) {
                continue;
            }
            let Some(layer) = self.layer_of(&c.path) else {
                continue;
            };
            let upper = match c.path.strip_prefix(&layer.root) {
                Ok(rel) => layer.upper.join(rel),
                Err(_) => continue,
            };
            let fresh_dir = c.dir && (c.kind == ChangeKind::Created || c.replaced);
            match (c.kind, c.dir) {
                (ChangeKind::Deleted, true) => {
                    if whole(&c.path) {
                        steps.push(Step::Remove(c.path.clone()));
                        covered.push(&c.path);
                    }
                }
                (ChangeKind::Deleted, false) => steps.push(Step::Remove(c.path.clone())),
                (_, true) if fresh_dir && whole(&c.path) => {
                    steps.push(Step::Move {
                        from: upper,
                        to: c.path.clone(),
                    });
                    covered.push(&c.path);
                }
                (_, true) if fresh_dir => steps.push(Step::MakeDir {
                    like: upper,
                    at: c.path.clone(),
                }),
                (_, true) => steps.push(Step::Chmod {
                    like: upper,
                    at: c.path.clone(),
                }),
                (_, false) => steps.push(Step::Move {
                    from: upper,
                    to: c.path.clone(),
                }),
            }
        }
        steps
    }

    /// Sets the time from which a real path's change is someone else's
    /// (see [`Change::changed_outside`]): for a live overlay, the end of
    /// the last settling.
    pub(crate) fn restart_clock(&mut self, now: i128) {
        self.started = now;
    }

    /// The file system's own clock now: the status change time of a file
    /// of the run directory, written for it. Times the file system gives
    /// may lag the system clock by a tick (they are coarse), so a change
    /// made after this call has a change time at or after it, which a read
    /// of the system clock does not promise. The system clock on failure.
    pub(crate) fn fs_now(&self) -> i128 {
        let marker = self.dir.join("clock");
        match std::fs::write(&marker, b"").and_then(|()| std::fs::symlink_metadata(&marker)) {
            Ok(m) => i128::from(m.ctime()) * 1_000_000_000 + i128::from(m.ctime_nsec()),
            Err(_) => crate::now_nanos(),
        }
    }

    /// Each root staged.
    pub(crate) fn roots(&self) -> impl Iterator<Item = &Path> {
        self.layers.iter().map(|l| l.root.as_path())
    }

    /// Where the new content of a changed path is held until it lands.
    pub fn staged_path(&self, path: &Path) -> Option<PathBuf> {
        let layer = self.layer_of(path)?;
        Some(layer.upper.join(path.strip_prefix(&layer.root).ok()?))
    }

    fn layer_of(&self, path: &Path) -> Option<&Layer> {
        self.layers
            .iter()
            .filter(|l| path.starts_with(&l.root))
            .max_by_key(|l| l.root.as_os_str().len())
    }
}

impl Drop for Staging {
    /// Discards what did not land. Layers beside a root (in the person's
    /// tree) are removed now; the run directory under the staging base is
    /// only unlocked, and the next run removes it while its own command
    /// runs (see `run_dir::sweep`): nothing in it ever lands.
    fn drop(&mut self) {
        for dir in self.outside_dirs() {
            remove_tree(&dir);
        }
        self.sweep_signal.take();
        if let Some(sweeper) = self.sweeper.take() {
            let _ = sweeper.join();
        }
        self.run.take();
    }
}

/// Removes a staging tree, including the overlay's `work/work` directory,
/// which the kernel leaves with mode 000.
fn remove_tree(dir: &Path) {
    if std::fs::remove_dir_all(dir).is_ok() {
        return;
    }
    fn open_up(p: &Path) {
        if let Ok(m) = std::fs::symlink_metadata(p) {
            if m.is_dir() {
                let _ = std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o700));
                if let Ok(rd) = std::fs::read_dir(p) {
                    for e in rd.flatten() {
                        open_up(&e.path());
                    }
                }
            }
        }
    }
    open_up(dir);
    if let Err(e) = std::fs::remove_dir_all(dir) {
        tracing::warn!(dir = %dir.display(), error = %e, "could not remove a staging directory");
    }
}

/// One step of landing.
#[derive(Debug)]
enum Step {
    /// Put the upper file, link or directory tree at `to` (replacing it).
    Move { from: PathBuf, to: PathBuf },
    /// Make a directory with the mode of `like`.
    MakeDir { like: PathBuf, at: PathBuf },
    /// Give a directory the mode of `like`.
    Chmod { like: PathBuf, at: PathBuf },
    /// Remove a file or a whole tree.
    Remove(PathBuf),
}

impl Step {
    fn target(&self) -> &Path {
        match self {
            Step::Move { to, .. } => to,
            Step::MakeDir { at, .. } | Step::Chmod { at, .. } => at,
            Step::Remove(p) => p,
        }
    }

    fn apply(&self, copy: bool) -> io::Result<()> {
        match self {
            Step::Move { from, to } if copy => copy_in(from, to),
            Step::Move { from, to } => {
                strip_overlay_xattrs(from);
                if let Ok(m) = std::fs::symlink_metadata(to) {
                    // A directory replaced by a file or link (or by a new
                    // directory) goes first: rename cannot replace it.
                    let from_dir = std::fs::symlink_metadata(from).is_ok_and(|f| f.is_dir());
                    if m.is_dir() && (!from_dir || std::fs::read_dir(to)?.next().is_some()) {
                        std::fs::remove_dir_all(to)?;
                    } else if m.is_dir() {
                        std::fs::remove_dir(to)?;
                    }
                }
                std::fs::rename(from, to)
            }
            Step::MakeDir { like, at } => {
                let mode = kept_mode(std::fs::symlink_metadata(like)?.permissions().mode(), at);
                match std::fs::symlink_metadata(at) {
                    Ok(m) if m.is_dir() => {}
                    Ok(_) => {
                        std::fs::remove_file(at)?;
                        std::fs::create_dir(at)?;
                    }
                    Err(_) => std::fs::create_dir(at)?,
                }
                std::fs::set_permissions(at, std::fs::Permissions::from_mode(mode & 0o7777))
            }
            Step::Chmod { like, at } => {
                let mode = kept_mode(std::fs::symlink_metadata(like)?.permissions().mode(), at);
                std::fs::set_permissions(at, std::fs::Permissions::from_mode(mode & 0o7777))
            }
            Step::Remove(p) => match std::fs::symlink_metadata(p) {
                Ok(m) if m.is_dir() => std::fs::remove_dir_all(p),
                Ok(_) => std::fs::remove_file(p),
                Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
                Err(e) => Err(e),
            },
        }
    }
}

/// The overlay's own markers (`user.overlay.origin`, `…opaque`, `…impure`)
/// stay behind: they mean nothing outside the overlay.
fn strip_overlay_xattrs(path: &Path) {
    let Ok(c) = CString::new(path.as_os_str().as_bytes()) else {
        return;
    };
    let mut buf = vec![0u8; 4096];
    // SAFETY: `c` is a valid C string and `buf` a writable buffer of the
    // given length.
    let n = unsafe { libc::llistxattr(c.as_ptr(), buf.as_mut_ptr().cast(), buf.len()) };
    let Ok(n) = usize::try_from(n) else {
        return;
    };
    for name in buf[..n].split(|b| *b == 0).filter(|n| !n.is_empty()) {
        if name.starts_with(b"user.overlay.") {
            if let Ok(cn) = CString::new(name) {
                // SAFETY: both are valid C strings.
                unsafe { libc::lremovexattr(c.as_ptr(), cn.as_ptr()) };
            }
        }
    }
}

/// Whether an upper directory is opaque (it replaced a lower directory
/// whole: nothing of the lower one shows through).
fn is_opaque(path: &Path) -> bool {
    let Ok(c) = CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    let mut v = [0u8; 4];
    for name in [c"user.overlay.opaque", c"trusted.overlay.opaque"] {
        // SAFETY: valid C strings and a writable buffer of the given length.
        let n =
            unsafe { libc::lgetxattr(c.as_ptr(), name.as_ptr(), v.as_mut_ptr().cast(), v.len()) };
        if n >= 1 && v[0] == b'y' {
            return true;
        }
    }
    false
}

fn is_whiteout(m: &std::fs::Metadata) -> bool {
    m.file_type().is_char_device() && m.rdev() == 0
}

/// Reads one upper directory (`upper`, mirroring `real`) into `out`. With
/// `live` (see [`Staging::changes_with`]) the upper layer is only read.
fn walk_upper(
    upper: &Path,
    real: &Path,
    out: &mut BTreeMap<PathBuf, Change>,
    live: Option<i128>,
) -> io::Result<()> {
    let entries = match std::fs::read_dir(upper) {
        Ok(e) => e,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    for entry in entries {
        let entry = entry?;
        let name = entry.file_name();
        let up = entry.path();
        let at = real.join(&name);
        // Through the directory's own descriptor, not a walk of the whole
        // path (the same as `symlink_metadata(&up)`).
        let m = entry.metadata()?;
        let lower = std::fs::symlink_metadata(&at).ok();
        if let Some(since) = live {
            if !m.is_dir() && settled_before(&m, lower.as_ref(), since) {
                continue;
            }
        }
        if is_whiteout(&m) {
            if let Some(l) = lower {
                deleted_tree(&at, l.is_dir(), out);
            }
            continue;
        }
        let m = match live {
            Some(_) => m,
            None => drop_new_privilege_bits(&up, m, lower.as_ref())?,
        };
        if m.is_dir() {
            match &lower {
                Some(l) if l.is_dir() && (live.is_some() || !is_opaque(&up)) => {
                    if (l.permissions().mode() & 0o7777) != (m.permissions().mode() & 0o7777) {
                        record(out, change(&at, ChangeKind::Modified, true, 0));
                    }
                    walk_upper(&up, &at, out, live)?;
                    if live.is_some() && is_opaque(&up) {
                        // Nothing of the real directory shows through:
                        // what the upper one lacks is deleted.
                        for e in std::fs::read_dir(&at)?.flatten() {
                            if std::fs::symlink_metadata(up.join(e.file_name())).is_err() {
                                let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
                                deleted_tree(&e.path(), is_dir, out);
                            }
                        }
                    }
                }
                Some(l) => {
                    // Replaced whole: what was there is gone.
                    deleted_tree(&at, l.is_dir(), out);
                    record(out, change(&at, ChangeKind::Created, true, 0));
                    created_tree(&up, &at, out, live.is_some())?;
                }
                None => {
                    record(out, change(&at, ChangeKind::Created, true, 0));
                    created_tree(&up, &at, out, live.is_some())?;
                }
            }
            continue;
        }
        match &lower {
            None => {
                record(out, change(&at, ChangeKind::Created, false, m.len()));
            }
            Some(l) if l.is_dir() => {
                deleted_tree(&at, true, out);
                record(out, change(&at, ChangeKind::Created, false, m.len()));
            }
            Some(l) => {
                if !same_content(&up, &m, &at, l) {
                    record(out, change(&at, ChangeKind::Modified, false, m.len()));
                }
            }
        }
    }
    Ok(())
}

/// Whether real paths had their status changed at or after `since`
/// (nanoseconds since the epoch): by someone else, since a confined
/// command's writes go to the upper layer. The change time, unlike the
/// modification time, cannot be set back. Paths are given in path order (a
/// directory before what is below it), and a real path is looked at only
/// when its parent exists: below a directory that does not exist nothing
/// does, so a created tree of 10 000 files costs one look, not 10 000.
struct ChangedOutside {
    since: i128,
    /// Directories found missing from the real location.
    absent: HashSet<PathBuf>,
}

impl ChangedOutside {
    fn since(since: i128) -> ChangedOutside {
        ChangedOutside {
            since,
            absent: HashSet::new(),
        }
    }

    /// Whether `path` (a directory when `dir`) changed outside the run.
    fn changed(&mut self, path: &Path, dir: bool) -> bool {
        let parent_absent = path.parent().is_some_and(|p| self.absent.contains(p));
        let status = if parent_absent {
            None
        } else {
            std::fs::symlink_metadata(path).ok()
        };
        match status {
            Some(m) => {
                i128::from(m.ctime()) * 1_000_000_000 + i128::from(m.ctime_nsec()) >= self.since
            }
            None => {
                if dir {
                    self.absent.insert(path.to_path_buf());
                }
                false
            }
        }
    }
}

/// Whether neither an upper entry (not a directory) nor the real path it
/// stands for changed status since `since`: it was judged at a settling
/// then, and either landed or was set back, so both sides still agree. A
/// file or link whose real path is gone is not settled (someone removed
/// what had landed); a whiteout whose real path is gone is.
fn settled_before(up: &std::fs::Metadata, real: Option<&std::fs::Metadata>, since: i128) -> bool {
    ctime_nanos(up) < since
        && match real {
            Some(r) => ctime_nanos(r) < since,
            None => is_whiteout(up),
        }
}

/// A status change time in nanoseconds since the epoch.
fn ctime_nanos(m: &std::fs::Metadata) -> i128 {
    i128::from(m.ctime()) * 1_000_000_000 + i128::from(m.ctime_nsec())
}

/// `mode` without the privilege bits ([`PRIVILEGE_BITS`]) that the real
/// path `at` does not already carry.
fn kept_mode(mode: u32, at: &Path) -> u32 {
    let kept = std::fs::symlink_metadata(at)
        .ok()
        .filter(|m| !m.file_type().is_symlink())
        .map_or(0, |m| m.permissions().mode() & PRIVILEGE_BITS);
    mode & 0o7777 & !(PRIVILEGE_BITS & !kept)
}

/// Lands `from` (a file, link or directory tree of an upper layer that is
/// still mounted) at `to` by copying: the copy is made beside `to` under a
/// temporary name, then renamed over it. The upper layer is only read;
/// whiteouts in a copied tree are skipped.
fn copy_in(from: &Path, to: &Path) -> io::Result<()> {
    let parent = to
        .parent()
        .ok_or_else(|| io::Error::other("a root cannot be replaced"))?;
    let name = to.file_name().unwrap_or_default().to_string_lossy();
    let tmp = parent.join(format!(
        ".toolgate-landing-{}-{}-{name}",
        std::process::id(),
        RUN.fetch_add(1, Ordering::Relaxed)
    ));
    let mode = |m: &std::fs::Metadata, at: &Path| kept_mode(m.permissions().mode(), at);
    let result = copy_tree(from, &tmp, to, &mode).and_then(|()| {
        if let Ok(m) = std::fs::symlink_metadata(to) {
            let from_dir = std::fs::symlink_metadata(&tmp).is_ok_and(|f| f.is_dir());
            if m.is_dir() && (!from_dir || std::fs::read_dir(to)?.next().is_some()) {
                std::fs::remove_dir_all(to)?;
            } else if m.is_dir() {
                std::fs::remove_dir(to)?;
            }
        }
        std::fs::rename(&tmp, to)
    });
    if result.is_err() {
        match std::fs::symlink_metadata(&tmp) {
            Ok(m) if m.is_dir() => remove_tree(&tmp),
            Ok(_) => {
                let _ = std::fs::remove_file(&tmp);
            }
            Err(_) => {}
        }
    }
    result
}

/// Copies `from` to `tmp` (which does not exist), giving each copy the mode
/// `mode` says for the real path it will be (`real`, below `to`).
fn copy_tree(
    from: &Path,
    tmp: &Path,
    real: &Path,
    mode: &dyn Fn(&std::fs::Metadata, &Path) -> u32,
) -> io::Result<()> {
    let m = std::fs::symlink_metadata(from)?;
    let ft = m.file_type();
    if ft.is_symlink() {
        std::os::unix::fs::symlink(std::fs::read_link(from)?, tmp)
    } else if ft.is_dir() {
        std::fs::create_dir(tmp)?;
        for e in std::fs::read_dir(from)? {
            let e = e?;
            if e.file_type()?.is_char_device() {
                continue;
            }
            let n = e.file_name();
            copy_tree(&e.path(), &tmp.join(&n), &real.join(&n), mode)?;
        }
        std::fs::set_permissions(tmp, std::fs::Permissions::from_mode(mode(&m, real)))
    } else if ft.is_file() {
        std::fs::copy(from, tmp)?;
        std::fs::set_permissions(tmp, std::fs::Permissions::from_mode(mode(&m, real)))
    } else {
        // A device, socket or pipe the command made: nothing to carry.
        Ok(())
    }
}

/// What a confined command may not grant: the set-user-ID and
/// set-group-ID bits, and write access for other users (`o+w`).
const PRIVILEGE_BITS: u32 = 0o6002;

/// Clears, in the upper layer, the set-user-ID and set-group-ID bits and
/// the write access for others that the real path did not already carry: a
/// confined command may not plant a program that runs with its owner's
/// rights (root's, when toolgate runs as root) for whoever starts it later,
/// nor a directory whose files take its group, nor a file or directory any
/// other user of the machine may change (a script the person runs, a source
/// directory). So what lands never gains them. Returns the metadata as it
/// is now.
fn drop_new_privilege_bits(
    up: &Path,
    m: std::fs::Metadata,
    lower: Option<&std::fs::Metadata>,
) -> io::Result<std::fs::Metadata> {
    if m.file_type().is_symlink() {
        return Ok(m);
    }
    let mode = m.permissions().mode();
    let kept = lower
        .filter(|l| !l.file_type().is_symlink())
        .map_or(0, |l| l.permissions().mode() & PRIVILEGE_BITS);
    let gained = mode & PRIVILEGE_BITS & !kept;
    if gained == 0 {
        return Ok(m);
    }
    std::fs::set_permissions(up, std::fs::Permissions::from_mode(mode & 0o7777 & !gained))?;
    std::fs::symlink_metadata(up)
}

/// Adds a change; a path deleted and then created again (a directory
/// replaced, or moved away and copied back) is modified.
fn record(out: &mut BTreeMap<PathBuf, Change>, mut c: Change) {
    if let Some(before) = out.get(&c.path) {
        if before.kind == ChangeKind::Deleted && c.kind == ChangeKind::Created {
            c.kind = ChangeKind::Modified;
            c.replaced = true;
        }
    }
    out.insert(c.path.clone(), c);
}

fn change(path: &Path, kind: ChangeKind, dir: bool, size: u64) -> Change {
    Change {
        path: path.to_path_buf(),
        kind,
        dir,
        size,
        replaced: false,
        changed_outside: false,
    }
}

/// Everything below a new upper directory is created. With `read_only`
/// (a live overlay) the upper layer is not changed.
fn created_tree(
    up: &Path,
    at: &Path,
    out: &mut BTreeMap<PathBuf, Change>,
    read_only: bool,
) -> io::Result<()> {
    for entry in std::fs::read_dir(up)? {
        let entry = entry?;
        let ft = entry.file_type()?;
        let child = at.join(entry.file_name());
        if ft.is_char_device() {
            // A whiteout inside an opaque directory hides nothing.
            continue;
        }
        let m = if read_only {
            entry.metadata()?
        } else {
            drop_new_privilege_bits(&entry.path(), entry.metadata()?, None)?
        };
        if ft.is_dir() {
            record(out, change(&child, ChangeKind::Created, true, 0));
            created_tree(&entry.path(), &child, out, read_only)?;
        } else {
            record(out, change(&child, ChangeKind::Created, false, m.len()));
        }
    }
    Ok(())
}

/// `at` and, when it was a directory, everything that was below it, deleted.
fn deleted_tree(at: &Path, dir: bool, out: &mut BTreeMap<PathBuf, Change>) {
    record(out, change(at, ChangeKind::Deleted, dir, 0));
    if !dir {
        return;
    }
    let Ok(rd) = std::fs::read_dir(at) else {
        return;
    };
    for e in rd.flatten() {
        let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
        deleted_tree(&e.path(), is_dir, out);
    }
}

/// Whether an upper file or link is the lower one unchanged (the overlay
/// copies a file up when it is opened for writing, written or not).
fn same_content(up: &Path, um: &std::fs::Metadata, low: &Path, lm: &std::fs::Metadata) -> bool {
    if um.file_type() != lm.file_type()
        || (um.permissions().mode() & 0o7777) != (lm.permissions().mode() & 0o7777)
    {
        return false;
    }
    if um.file_type().is_symlink() {
        return std::fs::read_link(up).ok() == std::fs::read_link(low).ok();
    }
    if !um.is_file() || um.len() != lm.len() {
        return false;
    }
    files_equal(up, low).unwrap_or(false)
}

fn files_equal(a: &Path, b: &Path) -> io::Result<bool> {
    use std::io::Read;
    let (mut fa, mut fb) = (std::fs::File::open(a)?, std::fs::File::open(b)?);
    let (mut ba, mut bb) = (vec![0u8; 64 * 1024], vec![0u8; 64 * 1024]);
    loop {
        let na = read_full(&mut fa, &mut ba)?;
        let nb = read_full(&mut fb, &mut bb)?;
        if na != nb || ba[..na] != bb[..nb] {
            return Ok(false);
        }
        if na == 0 {
            return Ok(true);
        }
    }
    fn read_full(f: &mut std::fs::File, buf: &mut [u8]) -> io::Result<usize> {
        let mut n = 0;
        while n < buf.len() {
            match f.read(&mut buf[n..])? {
                0 => break,
                k => n += k,
            }
        }
        Ok(n)
    }
}

/// Everything the child needs to enter its namespaces, mount the overlays
/// and cover the host's sockets, made before the fork: after it, the child
/// only calls the kernel (no allocation, no lock), as a `pre_exec` hook must.
pub(crate) struct OverlayMounts {
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
    /// `(target, options)` per overlay: the root, and its lower, upper and
    /// work directories with `userxattr`.
    mounts: Vec<(CString, CString)>,
    /// Paths to cover — a directory with an empty read-only tmpfs, anything
    /// else with `/dev/null` — each skipped when it is gone by the time the
    /// child runs (a socket another program removed, a `.env` deleted).
    covers: Vec<(CString, bool)>,
    /// `(target, copy)`: files shown as another file's content (a
    /// configuration file without its secret values, see `redact`), each
    /// skipped when the target is gone by the time the child runs.
    copies: Vec<(CString, CString)>,
    /// The system's trees as any other user sees them, attached first.
    others: OthersView,
    /// Whether the sandbox's `/dev` is made here (`dev_tree`), for
    /// bubblewrap's `--dev-bind /dev /dev`.
    dev: bool,
}

impl OverlayMounts {
    /// The mounts of `layers`: each `(root, upper, work)` becomes an overlay
    /// over `root` with `root` as its lower layer.
    pub(crate) fn new<'a>(
        layers: impl IntoIterator<Item = (&'a Path, &'a Path, &'a Path)>,
    ) -> Result<OverlayMounts, SandboxError> {
        // SAFETY: getuid/getgid cannot fail.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        let mut mounts = Vec::new();
        for (root, upper, work) in layers {
            let mut data = Vec::new();
            data.extend_from_slice(b"lowerdir=");
            data.extend_from_slice(root.as_os_str().as_bytes());
            data.extend_from_slice(b",upperdir=");
            data.extend_from_slice(upper.as_os_str().as_bytes());
            data.extend_from_slice(b",workdir=");
            data.extend_from_slice(work.as_os_str().as_bytes());
            // `volatile`: no sync of the upper file system at unmount (see
            // the module's Durability).
            data.extend_from_slice(b",userxattr,volatile");
            let (Ok(target), Ok(data)) = (
                CString::new(root.as_os_str().as_bytes()),
                CString::new(data),
            ) else {
                return Err(SandboxError::Spec(format!(
                    "staging: a path of the overlay over {} holds a NUL byte",
                    root.display()
                )));
            };
            mounts.push((target, data));
        }
        Ok(OverlayMounts {
            uid_map: format!("{uid} {uid} 1").into_bytes(),
            gid_map: format!("{gid} {gid} 1").into_bytes(),
            mounts,
            covers: Vec::new(),
            copies: Vec::new(),
            others: OthersView::default(),
            dev: false,
        })
    }

    /// Also makes the sandbox's `/dev` ([`crate::dev_tree`]) when `dev`,
    /// after the system's trees and before anything else.
    pub(crate) fn making_dev(mut self, dev: bool) -> OverlayMounts {
        self.dev = dev;
        self
    }

    /// Also attaches `others`' mapped system trees, before anything else
    /// (the overlays, copies and covers are mounted on top of them).
    pub(crate) fn attaching(mut self, others: OthersView) -> OverlayMounts {
        self.others = others;
        self
    }

    /// Also covers each of `paths` (bubblewrap's view of the host carries
    /// the covers along): a directory, as it is now, with an empty
    /// read-only tmpfs, anything else with `/dev/null`. Unlike a mask given
    /// to bubblewrap, which fails the run when its path vanishes before
    /// bubblewrap mounts it, a path gone by then is skipped: nothing is left
    /// to reach. A path that is something else by then fails the run.
    pub(crate) fn covering(mut self, paths: &[PathBuf]) -> Result<OverlayMounts, SandboxError> {
        for p in paths {
            let dir = std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir());
            let c = CString::new(p.as_os_str().as_bytes())
                .map_err(|_| SandboxError::Spec(format!("{} holds a NUL byte", p.display())))?;
            self.covers.push((c, dir));
        }
        Ok(self)
    }

    /// Also shows each `(target, copy)`'s target as the copy (a read-only
    /// bind of the copy over it, once bubblewrap has bound the place
    /// read-only).
    pub(crate) fn showing(
        mut self,
        copies: &[(PathBuf, PathBuf)],
    ) -> Result<OverlayMounts, SandboxError> {
        let c = |p: &Path| {
            CString::new(p.as_os_str().as_bytes())
                .map_err(|_| SandboxError::Spec(format!("{} holds a NUL byte", p.display())))
        };
        for (target, copy) in copies {
            self.copies.push((c(target)?, c(copy)?));
        }
        Ok(self)
    }

    /// Whether there is anything to mount.
    pub(crate) fn is_empty(&self) -> bool {
        self.mounts.is_empty()
            && self.covers.is_empty()
            && self.copies.is_empty()
            && self.others.tops().is_empty()
            && !self.dev
    }

    /// In the forked child, before `exec`: a new user namespace (this user
    /// mapped to itself) and mount namespace, every mount made private so
    /// nothing propagates back to the host, then the overlays. They live in
    /// that namespace only: when the command exits they are gone, and the
    /// upper directories hold what it changed.
    ///
    /// Only system calls on memory made before the fork: safe in a
    /// `pre_exec` hook.
    pub(crate) fn enter(&self) -> io::Result<()> {
        // SAFETY: flags only; the forked child is single-threaded.
        if unsafe { libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNS) } != 0 {
            return Err(io::Error::last_os_error());
        }
        write_proc(c"/proc/self/setgroups", b"deny")?;
        write_proc(c"/proc/self/uid_map", &self.uid_map)?;
        write_proc(c"/proc/self/gid_map", &self.gid_map)?;
        let (none, slash, overlay) = (c"none", c"/", c"overlay");
        // SAFETY: valid C strings; a propagation change takes no data.
        let private = unsafe {
            libc::mount(
                none.as_ptr(),
                slash.as_ptr(),
                std::ptr::null(),
                libc::MS_REC | libc::MS_PRIVATE,
                std::ptr::null(),
            )
        };
        if private != 0 {
            return Err(io::Error::last_os_error());
        }
        self.others.attach()?;
        if self.dev {
            crate::dev_tree::mount_in_child()?;
        }
        for (target, data) in &self.mounts {
            // SAFETY: valid C strings; `data` is the overlay's option string.
            let rc = unsafe {
                libc::mount(
                    overlay.as_ptr(),
                    target.as_ptr(),
                    overlay.as_ptr(),
                    0,
                    data.as_ptr().cast(),
                )
            };
            if rc != 0 {
                return Err(io::Error::last_os_error());
            }
        }
        let (null, tmpfs, empty) = (c"/dev/null", c"tmpfs", c"mode=0755");
        // Before the covers, which may hide where the copies are kept.
        for (target, copy) in &self.copies {
            // SAFETY: valid C strings; a bind mount takes no data.
            let shown = unsafe {
                libc::mount(
                    copy.as_ptr(),
                    target.as_ptr(),
                    std::ptr::null(),
                    libc::MS_BIND,
                    std::ptr::null(),
                )
            };
            // Without its copy, the file is covered whole; gone, it is
            // skipped.
            // SAFETY: as above.
            if shown != 0
                && unsafe {
                    libc::mount(
                        null.as_ptr(),
                        target.as_ptr(),
                        std::ptr::null(),
                        libc::MS_BIND,
                        std::ptr::null(),
                    )
                } != 0
            {
                let err = io::Error::last_os_error();
                if err.raw_os_error() != Some(libc::ENOENT) {
                    return Err(err);
                }
            }
        }
        for (path, dir) in &self.covers {
            // SAFETY: valid C strings; a bind mount takes no data, a tmpfs
            // its option string.
            let rc = unsafe {
                if *dir {
                    libc::mount(
                        tmpfs.as_ptr(),
                        path.as_ptr(),
                        tmpfs.as_ptr(),
                        libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV,
                        empty.as_ptr().cast(),
                    )
                } else {
                    libc::mount(
                        null.as_ptr(),
                        path.as_ptr(),
                        std::ptr::null(),
                        libc::MS_BIND,
                        std::ptr::null(),
                    )
                }
            };
            if rc != 0 {
                let err = io::Error::last_os_error();
                if err.raw_os_error() != Some(libc::ENOENT) {
                    return Err(err);
                }
            }
        }
        Ok(())
    }
}

/// Whether this machine can stage writes: a child enters a user and mount
/// namespace and mounts an overlay over a scratch directory, exactly as a
/// staged run does ([`OverlayMounts`]), then `exec`s `program` (any executable that exits,
/// e.g. bubblewrap's `--version`).
pub(crate) fn probe(program: &Path) -> Result<(), String> {
    use std::os::unix::process::CommandExt;
    let scratch = std::env::temp_dir().join(format!(
        ".toolgate-stage-probe-{}-{}",
        std::process::id(),
        crate::now_nanos()
    ));
    let dirs = ["lower", "upper", "work"].map(|d| scratch.join(d));
    for d in &dirs {
        if let Err(e) = std::fs::create_dir_all(d) {
            let _ = std::fs::remove_dir_all(&scratch);
            return Err(format!("cannot make {}: {e}", d.display()));
        }
    }
    // With the sandbox's own `/dev` too, as a run makes it.
    let mounts = match OverlayMounts::new([(&*dirs[0], &*dirs[1], &*dirs[2])]) {
        Ok(m) => m.making_dev(crate::dev_tree::supported()),
        Err(e) => {
            let _ = std::fs::remove_dir_all(&scratch);
            return Err(e.to_string());
        }
    };
    let mut cmd = std::process::Command::new(program);
    cmd.arg("--version")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    // SAFETY: `enter` calls only async-signal-safe system calls on memory
    // prepared before the fork.
    unsafe {
        cmd.pre_exec(move || mounts.enter());
    }
    let result = cmd.status();
    let _ = std::fs::remove_dir_all(&scratch);
    match result {
        Ok(s) if s.success() => Ok(()),
        Ok(s) => Err(format!("the staging probe exited with {s}")),
        Err(e) => Err(format!(
            "an overlay cannot be mounted in a user namespace here: {e}"
        )),
    }
}

/// Writes `bytes` to a `/proc` file with raw system calls (safe after fork).
fn write_proc(file: &std::ffi::CStr, bytes: &[u8]) -> io::Result<()> {
    // SAFETY: a valid C string and a buffer of the length given.
    unsafe {
        let fd = libc::open(file.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let n = libc::write(fd, bytes.as_ptr().cast(), bytes.len());
        let err = io::Error::last_os_error();
        libc::close(fd);
        if n < 0 || n as usize != bytes.len() {
            return Err(err);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// The second layer behind the seccomp filter: a set-user-ID or
    /// set-group-ID bit that reached the upper layer (the command made it)
    /// is cleared before anything is judged or lands; a bit the real file
    /// already had is kept.
    #[test]
    fn privilege_bits_a_command_set_never_land() {
        let base = tempfile::tempdir().unwrap();
        let root = base.path().join("ws");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::write(root.join("had-it"), "x").unwrap();
        std::fs::set_permissions(root.join("had-it"), std::fs::Permissions::from_mode(0o4755))
            .unwrap();
        let staging =
            Staging::prepare(&base.path().join("stage"), std::slice::from_ref(&root)).unwrap();
        let upper = &staging.layers[0].upper;
        std::fs::create_dir_all(upper.join("bin/deep")).unwrap();
        for (path, mode) in [
            ("suidsh", 0o4755),
            ("bin/deep/sgid", 0o2755),
            ("had-it", 0o4711),
        ] {
            std::fs::write(upper.join(path), "#!/bin/sh\n").unwrap();
            std::fs::set_permissions(upper.join(path), std::fs::Permissions::from_mode(mode))
                .unwrap();
        }
        std::fs::set_permissions(upper.join("bin"), std::fs::Permissions::from_mode(0o2775))
            .unwrap();
        let changes = staging.changes().unwrap();
        assert_eq!(changes.len(), 5, "{changes:?}");
        for (path, mode) in [
            ("suidsh", 0o755),
            ("bin/deep/sgid", 0o755),
            ("bin", 0o775),
            ("had-it", 0o4711),
        ] {
            let m = std::fs::symlink_metadata(upper.join(path)).unwrap();
            assert_eq!(m.permissions().mode() & 0o7777, mode, "{path}");
        }
    }
}
