//! What a confined command may do, and the command line that confines it.
//!
//! The view is built by construction: the host's file system read-only, with
//! every top-level directory that is not the system's ([`SYSTEM_TOP`]:
//! `/usr`, `/etc`, `/opt`… — so `/home`, `/root`, `/tmp`, `/run`, `/srv`,
//! `/mnt` and whatever else a machine keeps there) replaced by an empty
//! one, and `/var/tmp` too; then only what is needed is put back — the places of the home
//! directory that toolchains need (read-only), the configured writable
//! paths, and the location's roots (through the staging overlay when
//! staging is on). Last, whatever the path facts call a credential is
//! masked wherever it is visible, and so is every unix socket bound outside
//! the location and every entry of the system's local directories that
//! other users may not read (`system_view`).

use std::collections::HashSet;
use std::ffi::OsStr;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use toolgate_paths::credential;
use toolgate_paths::protected::{Anchor, PROTECTED};

use crate::child::{CHILD_ARG, ChildArgs};
use crate::exit_report::ExitReport;
use crate::scan::{Inodes, SCAN_LIMIT, scan_place, scan_tree};
use crate::stage::{OverlayMounts, Staging};
use crate::system_view::owners::OthersView;
use crate::system_view::{hidden_from_others, private_mounts_within};
use crate::{SandboxError, Support};

/// The bubblewrap options every confined command gets: new user, PID, IPC,
/// UTS and (where possible) cgroup namespaces, no user namespaces inside, no
/// capabilities, killed with its parent.
pub(crate) const NAMESPACE_ARGS: &[&str] = &[
    "--unshare-user",
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-cgroup-try",
    "--disable-userns",
    "--cap-drop",
    "ALL",
    "--die-with-parent",
];

/// Where the proxy's socket appears inside the sandbox.
pub(crate) const PROXY_SOCKET_INSIDE: &str = "/dev/.toolgate-proxy.sock";

/// The top-level directories shown (read-only): the system's programs,
/// libraries and configuration. Every other top-level directory is
/// replaced by an empty one — where other users' files, other projects,
/// host services' sockets and scratch files live — and every other
/// top-level file is masked: what a machine keeps there is not known, so
/// it is hidden unless named here.
pub const SYSTEM_TOP: &[(&str, &str)] = &[
    ("usr", "programs and libraries"),
    ("bin", "programs (often a link into /usr)"),
    ("sbin", "system programs"),
    ("lib", "libraries"),
    ("lib32", "32-bit libraries"),
    ("lib64", "the dynamic loader and 64-bit libraries"),
    ("libx32", "x32 libraries"),
    ("etc", "system configuration (its secrets are masked)"),
    ("opt", "add-on software packages"),
    (
        "var",
        "system state and caches (its scratch directories emptied)",
    ),
    ("nix", "the Nix store"),
    ("snap", "snap packages"),
    ("sys", "the kernel's view of devices"),
    ("proc", "mounted anew for the sandbox's processes"),
    ("dev", "mounted anew: only the standard devices"),
];

/// The shown top-level directories never shown through an idmapped mount
/// (`system_view::owners`): bubblewrap mounts `/proc` and `/dev` anew, and
/// `/sys`'s private parts are found in the mount table.
const NOT_MAPPED: &[&str] = &["proc", "dev", "sys"];

/// The system's top-level directories under `root` that may be shown
/// through an idmapped mount: real directories (not links into another),
/// holding none of the places the run binds in by their own rules
/// (`placed`: a bind of a place within a mapped tree would be mapped too,
/// and its owner's files unreadable), and holding each program the run
/// executes (`executed`) only where any user may reach and run it.
pub(crate) fn mappable_tops(root: &Path, placed: &[PathBuf], executed: &[&Path]) -> Vec<PathBuf> {
    SYSTEM_TOP
        .iter()
        .filter(|(name, _)| !NOT_MAPPED.contains(name))
        .map(|(name, _)| root.join(name))
        .filter(|top| std::fs::symlink_metadata(top).is_ok_and(|m| m.is_dir()))
        .filter(|top| {
            !placed
                .iter()
                .any(|p| p.starts_with(top) || top.starts_with(p))
        })
        .filter(|top| {
            executed
                .iter()
                .filter(|e| e.starts_with(top))
                .all(|e| others_may_run(top, e))
        })
        .collect()
}

/// Whether any user may reach `program` from `top` and run it: every
/// directory on the way searchable by others, and the program executable
/// by them.
fn others_may_run(top: &Path, program: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let mut at = Some(program);
    while let Some(p) = at {
        let Ok(m) = std::fs::metadata(p) else {
            return false;
        };
        if m.permissions().mode() & 0o001 == 0 {
            return false;
        }
        if p == top {
            return true;
        }
        at = p.parent();
    }
    false
}

/// Directories inside the shown ones that are emptied too: scratch files
/// of other programs, and services' sockets.
const EMPTIED_WITHIN: &[&str] = &["/var/tmp", "/var/run"];

/// What is hidden at the top of `root`: its directories that are not the
/// system's (emptied, and the scratch directories within), and its other
/// files (masked). Symbolic links are left: they lead into what is shown or
/// into what is emptied.
fn hidden_at_top(root: &Path) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let (mut dirs, mut files) = (Vec::new(), Vec::new());
    if let Ok(entries) = std::fs::read_dir(root) {
        for e in entries.flatten() {
            let name = e.file_name();
            if SYSTEM_TOP.iter().any(|(n, _)| OsStr::new(n) == name) {
                continue;
            }
            match e.file_type() {
                Ok(t) if t.is_dir() => dirs.push(e.path()),
                Ok(t) if t.is_symlink() => {}
                _ => files.push(e.path()),
            }
        }
    }
    dirs.extend(
        EMPTIED_WITHIN
            .iter()
            .map(|p| root.join(p.trim_start_matches('/')))
            .filter(|p| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir())),
    );
    dirs.sort();
    files.sort();
    (dirs, files)
}

/// What a confined command may touch. Paths are absolute.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxSpec {
    /// The location's roots: writable (through the staging overlay when
    /// `stage` is set, directly otherwise).
    pub roots: Vec<PathBuf>,
    /// The user's home directory: hidden but for `readable`.
    pub home: Option<PathBuf>,
    /// Places shown read-only (by default the toolchains and caches of the
    /// home directory, [`toolgate_paths::home::HOME_READABLE`]); missing
    /// ones are skipped.
    pub readable: Vec<PathBuf>,
    /// Other writable paths, outside the location and not staged; missing
    /// ones are skipped. Whatever is written there lands at once: it is
    /// code other projects may run.
    pub writable: Vec<PathBuf>,
    /// Places hidden whatever else shows them (toolgate's own config and
    /// data directories).
    pub hidden: Vec<PathBuf>,
    /// Where staged writes are kept ([`Staging`]); `None`: the roots are
    /// written directly, with the existing protected entries of the path
    /// facts at each root read-only.
    pub stage: Option<PathBuf>,
    /// Whether the command keeps the machine's network.
    pub network: bool,
    /// The unix socket of an allowlisting proxy ([`crate::proxy`]). When set
    /// and `network` is not, the command's network is the proxy only.
    pub proxy: Option<PathBuf>,
    /// The directory the command starts in.
    pub cwd: PathBuf,
    /// The executable that acts as the helper inside the sandbox (it must
    /// call [`run_if_requested`](crate::run_if_requested) first thing);
    /// `None`: the running program.
    pub helper: Option<PathBuf>,
    /// A directory of the caller's own (hidden from the command) where the
    /// walks for credential files, and of the system's directories for what
    /// others may not read, are remembered between processes, so that a
    /// short process does not walk every tree whole; `None`: only within
    /// this process.
    pub scan_cache: Option<PathBuf>,
    /// Whether bubblewrap reports the command's exit code on a pipe
    /// ([`Confined::exit_report`]) before it exits itself. The caller must
    /// then keep the report until the command has exited.
    pub report_exit: bool,
}

impl SandboxSpec {
    /// A spec for a location: the home directory (`None`: `$HOME`) hidden
    /// but for its toolchains and caches, no extra writable paths, no
    /// network, no staging, cwd = the first root.
    pub fn for_location(roots: Vec<PathBuf>, home: Option<&Path>) -> Self {
        let home = home
            .map(Path::to_path_buf)
            .or_else(|| std::env::var_os("HOME").map(PathBuf::from))
            .filter(|h| h.is_absolute());
        let readable = home
            .as_deref()
            .map(toolgate_paths::home::readable_in)
            .unwrap_or_default();
        SandboxSpec {
            cwd: roots.first().cloned().unwrap_or_else(|| PathBuf::from("/")),
            roots,
            home,
            readable,
            writable: Vec::new(),
            hidden: Vec::new(),
            stage: None,
            network: false,
            proxy: None,
            helper: None,
            scan_cache: None,
            report_exit: false,
        }
    }
}

/// A command ready to run confined, and what it holds for the run: keep this
/// value alive until the command has exited, then read
/// [`Confined::staging`] (dropping it discards what was not landed).
#[derive(Debug)]
pub struct Confined {
    /// The command: `bwrap … -- helper … -- program args` (with staging,
    /// a `pre_exec` hook first mounts the overlays).
    /// The caller sets its environment, stdio and process group.
    pub command: Command,
    /// The paths masked for this run.
    pub masked: Vec<PathBuf>,
    /// Things worth knowing about this run (a scan that stopped early).
    pub notes: Vec<String>,
    /// The staged writes, when the spec asked for staging.
    pub staging: Option<Staging>,
    /// Where bubblewrap reports the command's exit code before it exits
    /// itself ([`ExitReport::exit_code`]), when the spec asked for it; keep
    /// it until the command has exited. `None` when no pipe could be made.
    pub exit_report: Option<ExitReport>,
}

impl SandboxSpec {
    /// The command that runs `program args` confined by this spec, on a
    /// machine whose `support` is available.
    pub fn command<S: AsRef<OsStr>>(
        &self,
        support: &Support,
        program: impl AsRef<OsStr>,
        args: impl IntoIterator<Item = S>,
    ) -> Result<Confined, SandboxError> {
        let bwrap = match (&support.bwrap, support.available) {
            (Some(b), true) => b.clone(),
            _ => return Err(SandboxError::Unavailable(support.reasons.join("; "))),
        };
        let helper = match &self.helper {
            Some(h) => h.clone(),
            None => std::env::current_exe().map_err(|e| {
                SandboxError::Setup(format!("cannot find the running program: {e}"))
            })?,
        };
        let roots = canonical_all(&self.roots, "root")?;
        if roots.is_empty() {
            return Err(SandboxError::Spec(
                "a sandbox needs at least one root".into(),
            ));
        }
        let writable = existing(&self.writable);
        let readable = existing(&self.readable);
        let hidden = existing(&self.hidden);
        let home = self
            .home
            .as_ref()
            .map(|h| h.canonicalize().unwrap_or_else(|_| h.clone()));
        let mut notes = Vec::new();

        let mut staging = match &self.stage {
            Some(base) => Some(Staging::prepare(base, &roots)?),
            None => None,
        };

        let mut cmd = Command::new(&bwrap);
        // First thing in the child: the staging's sweep of earlier runs may
        // start (see `stage::SweepSignal`).
        if let Some(signal) = staging.as_mut().and_then(Staging::take_sweep_signal) {
            // SAFETY: `send` only calls `write`.
            unsafe {
                cmd.pre_exec(move || {
                    signal.send();
                    Ok(())
                });
            }
        }
        cmd.args(NAMESPACE_ARGS);
        if !self.network {
            cmd.arg("--unshare-net");
        }
        cmd.args(["--ro-bind", "/", "/"]);
        // The sandbox's `/dev` is made by the child that mounts the
        // overlays (`dev_tree`: what `--dev` makes, for one bind instead of
        // bubblewrap's six); `--dev` where the kernel lacks the mount API.
        let own_dev = crate::dev_tree::supported();
        if own_dev {
            cmd.args(["--dev-bind", "/dev", "/dev"]);
        } else {
            cmd.args(["--dev", "/dev"]);
        }
        cmd.args(["--proc", "/proc"]);

        // Emptied: every top-level directory that is not the system's
        // (other users' and projects' files, scratch space, host services'
        // sockets), and the home directory wherever it is.
        let (mut emptied, top_files) = hidden_at_top(Path::new("/"));
        if let Some(h) = &home {
            if !emptied.iter().any(|e| h.starts_with(e)) && h.is_dir() && h != Path::new("/") {
                emptied.push(h.clone());
            }
        }
        for e in &emptied {
            cmd.arg("--tmpfs").arg(e);
        }
        // The resolver's configuration often lives under /run.
        if let Ok(target) = std::fs::canonicalize("/etc/resolv.conf") {
            if emptied.iter().any(|e| target.starts_with(e)) {
                cmd.arg("--ro-bind").arg(&target).arg(&target);
            }
        }
        // The helper itself must be reachable inside.
        if emptied.iter().any(|e| helper.starts_with(e)) {
            cmd.arg("--ro-bind").arg(&helper).arg(&helper);
        }
        for p in &readable {
            cmd.arg("--ro-bind").arg(p).arg(p);
        }
        for p in &writable {
            cmd.arg("--bind").arg(p).arg(p);
        }
        for p in &roots {
            cmd.arg("--bind").arg(p).arg(p);
        }
        if staging.is_none() {
            for p in protected_at_roots(&roots) {
                cmd.arg("--ro-bind").arg(&p).arg(&p);
            }
        }
        let visible = View {
            emptied: &emptied,
            shown: roots.iter().chain(&readable).chain(&writable).collect(),
        };

        // Masked: toolgate's own places, then every credential visible.
        let mut masked: Vec<PathBuf> = hidden
            .iter()
            .filter(|p| visible.shows(p))
            .cloned()
            .collect();
        if let Some(s) = &staging {
            masked.extend(s.dirs().into_iter().filter(|p| visible.shows(p)));
        }
        masked.extend(system_secrets());
        masked.extend(top_files);
        // The system's local directories as any other user sees them: what
        // their owners keep from others is hidden from the command too,
        // whoever runs it (see `system_view`). What the run itself needs
        // there is left: the places bound in by their own rules, the
        // helper, bubblewrap, the staging and the proxy's socket.
        let needed: Vec<PathBuf> = roots
            .iter()
            .chain(&readable)
            .chain(&writable)
            .chain([&helper, &bwrap])
            .chain(self.stage.as_ref())
            .chain(self.proxy.as_ref())
            .map(|p| p.canonicalize().unwrap_or_else(|_| p.clone()))
            .collect();
        let needed: Vec<&Path> = needed.iter().map(PathBuf::as_path).collect();
        let skipped: Vec<&Path> = emptied.iter().map(PathBuf::as_path).collect();
        // Run as root, the command would own every root-owned file: the
        // system's directories are shown through idmapped mounts under which
        // it owns nothing, so the kernel hides what others may not read, at
        // any depth (`system_view::owners`). Those the kernel will not map
        // are walked as before.
        let placed: Vec<PathBuf> = roots
            .iter()
            .chain(&readable)
            .chain(&writable)
            .chain(self.stage.as_ref())
            .chain(self.proxy.as_ref())
            .chain(self.scan_cache.as_ref())
            .map(|p| p.canonicalize().unwrap_or_else(|_| p.clone()))
            .collect();
        let others = OthersView::prepare(&mappable_tops(
            Path::new("/"),
            &placed,
            &[helper.as_path(), bwrap.as_path()],
        ));
        let system =
            hidden_from_others(others.tops(), &needed, &skipped, self.scan_cache.as_deref());
        notes.extend(system.notes);
        masked.extend(system.masked);
        masked.extend(
            private_mounts_within(Path::new("/sys"))
                .into_iter()
                .filter(|p| !needed.iter().any(|n| n.starts_with(p))),
        );
        let home_for_facts = home
            .clone()
            .unwrap_or_else(|| PathBuf::from("/nonexistent"));
        let root_refs: Vec<&Path> = roots.iter().map(PathBuf::as_path).collect();
        let snapshot =
            crate::kept_snapshot::snapshot(&home_for_facts, &root_refs, self.scan_cache.as_deref());
        let inodes: Inodes = snapshot.iter().map(|(d, i, _)| (d, i)).collect();
        let mut trees: Vec<&PathBuf> = roots.iter().chain(&writable).collect();
        trees.extend(readable.iter().filter(|p| p.is_dir()));
        // The home directory's toolchain places hold installed packages
        // (hundreds of thousands of files) and, at any depth, what a person
        // or a tool wrote (`~/.cargo/credentials.toml`, a version manager's
        // `PREFIX/etc/npmrc`, a tool's token under `~/.cache`): they are
        // walked at every depth but the packages' trees, unless a
        // credential file has another name somewhere, which is then looked
        // for in all of them.
        let linked = snapshot
            .iter()
            .any(|(_, _, p)| std::fs::symlink_metadata(p).is_ok_and(|m| m.nlink() > 1));
        let toolchains = home
            .as_deref()
            .map(toolgate_paths::home::readable_in)
            .unwrap_or_default();
        for tree in trees {
            if credential::is_credential(tree, &home_for_facts).is_some() {
                masked.push(tree.clone());
                continue;
            }
            let stored = self.scan_cache.as_deref();
            let scan = if !linked && toolchains.contains(tree) {
                scan_place(tree, &inodes, stored)
            } else {
                scan_tree(tree, &inodes, stored)
            };
            if scan.truncated {
                notes.push(format!(
                    "stopped looking for credential files in {} after {SCAN_LIMIT} entries",
                    tree.display()
                ));
            }
            masked.extend(scan.masked);
        }
        for p in &readable {
            if credential::is_credential(p, &home_for_facts).is_some() {
                masked.push(p.clone());
            }
        }
        masked.extend(
            bound_sockets()
                .into_iter()
                .filter(|s| visible.shows(s) && !in_plain_root(s, &roots, home.as_deref())),
        );
        // Configuration files with secret values (a registry token in
        // `~/.cargo/config.toml`): shown without them.
        let redactions = crate::redact::redactions(&readable, &masked, self.scan_cache.as_deref());
        masked.extend(redactions.hidden);
        masked.sort();
        masked.dedup();
        // A mask inside another mask is redundant (and cannot be mounted in
        // an emptied directory).
        let mut kept: Vec<PathBuf> = Vec::new();
        for m in masked {
            if !kept.iter().any(|k| m.starts_with(k)) {
                kept.push(m);
            }
        }
        let masked = kept;
        // Masked paths come and go while the run starts (a socket's server
        // stops, a `.env` is deleted): they are covered before bubblewrap
        // starts, in the child's own mount namespace, skipping any gone by
        // then (see `OverlayMounts::covering`).
        let mounts = match &staging {
            Some(s) => s.overlay_mounts()?,
            None => OverlayMounts::new([])?,
        }
        .attaching(others)
        .making_dev(own_dev)
        .covering(&masked)?
        .showing(&redactions.shown)?;
        if !mounts.is_empty() {
            // SAFETY: `enter` calls only async-signal-safe system calls on
            // memory prepared before the fork.
            unsafe {
                cmd.pre_exec(move || mounts.enter());
            }
        }

        let proxy = match (&self.proxy, self.network) {
            (Some(socket), false) => {
                // Bound last, onto the sandbox's own /dev, where no root or
                // writable path can be mounted over it.
                cmd.arg("--bind").arg(socket).arg(PROXY_SOCKET_INSIDE);
                Some(PathBuf::from(PROXY_SOCKET_INSIDE))
            }
            _ => None,
        };
        // The command's exit code, reported before bubblewrap's own exit
        // (see `ExitReport`); without a pipe, the caller waits for that.
        let exit_report = match self.report_exit.then(ExitReport::new) {
            Some(Ok(r)) => r.write_fd().map(|fd| (r, fd)),
            Some(Err(e)) => {
                tracing::debug!("no status pipe for bubblewrap: {e}");
                None
            }
            None => None,
        };
        let exit_report = exit_report.map(|(r, fd)| {
            cmd.arg("--json-status-fd").arg(fd.to_string());
            // SAFETY: `inherit_in_child` only calls `fcntl`.
            unsafe {
                cmd.pre_exec(move || ExitReport::inherit_in_child(fd));
            }
            r
        });
        cmd.args(["--setenv", "TMPDIR", "/tmp"]);
        cmd.arg("--chdir").arg(&self.cwd);
        let child = ChildArgs {
            network: self.network,
            writable: roots.iter().chain(&writable).cloned().collect(),
            proxy,
            program: program.as_ref().to_os_string(),
            args: args
                .into_iter()
                .map(|a| a.as_ref().to_os_string())
                .collect(),
        };
        cmd.arg("--")
            .arg(&helper)
            .arg(CHILD_ARG)
            .args(child.encode());
        Ok(Confined {
            command: cmd,
            masked,
            notes,
            staging,
            exit_report,
        })
    }
}

/// What the command sees of the host before masks.
struct View<'a> {
    emptied: &'a [PathBuf],
    shown: Vec<&'a PathBuf>,
}

impl View<'_> {
    fn shows(&self, p: &Path) -> bool {
        self.shown.iter().any(|s| p.starts_with(s))
            || !self.emptied.iter().any(|e| p.starts_with(e))
    }
}

/// Whether `p` lies in a root that does not hold the home directory: the
/// location's own sockets are its own.
fn in_plain_root(p: &Path, roots: &[PathBuf], home: Option<&Path>) -> bool {
    roots
        .iter()
        .any(|r| p.starts_with(r) && !home.is_some_and(|h| h.starts_with(r)))
}

/// The existing protected places at each root (entries anchored anywhere),
/// read-only when writes are not staged.
fn protected_at_roots(roots: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for root in roots {
        for e in PROTECTED.iter().filter(|e| e.anchor == Anchor::Anywhere) {
            let p = e.names.iter().fold(root.clone(), |p, n| p.join(n));
            if std::fs::symlink_metadata(&p).is_ok() {
                out.push(p);
            }
        }
    }
    out
}

/// The system's secrets of the path facts that exist here (`/etc/shadow`,
/// `/etc/ssl/private`, SSH host keys…).
fn system_secrets() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = credential::SECRET_SYSTEM
        .iter()
        .map(PathBuf::from)
        .filter(|p| std::fs::symlink_metadata(p).is_ok())
        .collect();
    if let Ok(rd) = std::fs::read_dir("/etc/ssh") {
        for e in rd.flatten() {
            let p = e.path();
            if credential::is_credential(&p, Path::new("/nonexistent")).is_some() {
                out.push(p);
            }
        }
    }
    out
}

/// Every unix socket bound to a path on this machine, as the kernel lists
/// them (`/proc/net/unix`): what a confined command could connect to.
fn bound_sockets() -> Vec<PathBuf> {
    let Ok(text) = std::fs::read_to_string("/proc/net/unix") else {
        return Vec::new();
    };
    let mut seen = HashSet::new();
    text.lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().nth(7))
        .filter(|p| p.starts_with('/'))
        .map(PathBuf::from)
        .filter(|p| seen.insert(p.clone()))
        .filter(|p| std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_socket()))
        .collect()
}

/// Of `paths`, those that exist, canonical. Most of them are usually
/// missing (the toolchain places of a home directory): each directory that
/// holds several is listed once, and only what is there is resolved, rather
/// than resolving every path component by component.
fn existing(paths: &[PathBuf]) -> Vec<PathBuf> {
    let mut parents: std::collections::HashMap<&Path, usize> = std::collections::HashMap::new();
    for p in paths {
        if let Some(parent) = p.parent() {
            *parents.entry(parent).or_default() += 1;
        }
    }
    let mut listed: std::collections::HashMap<&Path, HashSet<std::ffi::OsString>> =
        std::collections::HashMap::new();
    let mut out = Vec::new();
    for p in paths {
        let shared = match (p.parent(), p.file_name()) {
            (Some(parent), Some(name)) if parents.get(parent).is_some_and(|n| *n > 1) => {
                Some((parent, name))
            }
            _ => None,
        };
        if let Some((parent, name)) = shared {
            let names = listed.entry(parent).or_insert_with(|| {
                std::fs::read_dir(parent)
                    .map(|rd| rd.flatten().map(|e| e.file_name()).collect())
                    .unwrap_or_default()
            });
            if !names.contains(name) {
                continue;
            }
        }
        if let Ok(c) = p.canonicalize() {
            out.push(c);
        }
    }
    out
}

fn canonical_all(paths: &[PathBuf], what: &str) -> Result<Vec<PathBuf>, SandboxError> {
    paths
        .iter()
        .map(|p| {
            p.canonicalize()
                .map_err(|e| SandboxError::Spec(format!("{what} {}: {e}", p.display())))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn for_location_hides_home_but_its_toolchains() {
        let spec = SandboxSpec::for_location(vec!["/ws".into()], Some(Path::new("/home/u")));
        assert!(spec.readable.contains(&PathBuf::from("/home/u/.cargo")));
        assert!(!spec.readable.iter().any(|p| p.ends_with(".ssh")));
        assert!(!spec.network);
        assert!(spec.stage.is_none());
        assert_eq!(spec.cwd, PathBuf::from("/ws"));
    }

    #[test]
    fn what_is_not_the_systems_at_the_top_is_hidden() {
        let root = tempfile::tempdir().unwrap();
        for d in ["usr", "etc", "home", "srv", "work", "var/tmp", "var/lib"] {
            std::fs::create_dir_all(root.path().join(d)).unwrap();
        }
        std::fs::write(root.path().join("credentials.json"), "{}").unwrap();
        std::os::unix::fs::symlink("usr/bin", root.path().join("bin")).unwrap();
        std::os::unix::fs::symlink("srv/data", root.path().join("data")).unwrap();
        let (dirs, files) = hidden_at_top(root.path());
        let names: Vec<String> = dirs
            .iter()
            .map(|d| d.strip_prefix(root.path()).unwrap().display().to_string())
            .collect();
        assert_eq!(names, ["home", "srv", "var/tmp", "work"]);
        assert_eq!(files, [root.path().join("credentials.json")]);
    }

    #[test]
    fn a_system_directory_holding_a_bound_place_or_an_unreachable_program_is_not_mapped() {
        use std::os::unix::fs::PermissionsExt;
        let root = tempfile::tempdir().unwrap();
        let r = root.path();
        for d in [
            "usr/bin",
            "etc",
            "var/www/project",
            "opt/private/bin",
            "proc",
            "sys",
            "home",
        ] {
            std::fs::create_dir_all(r.join(d)).unwrap();
        }
        std::os::unix::fs::symlink("usr/bin", r.join("bin")).unwrap();
        for (f, mode) in [("usr/bin/helper", 0o755), ("opt/private/bin/bwrap", 0o755)] {
            std::fs::write(r.join(f), "x").unwrap();
            std::fs::set_permissions(r.join(f), std::fs::Permissions::from_mode(mode)).unwrap();
        }
        std::fs::set_permissions(
            r.join("opt/private"),
            std::fs::Permissions::from_mode(0o700),
        )
        .unwrap();
        let tops = mappable_tops(
            r,
            &[r.join("var/www/project")],
            &[&r.join("usr/bin/helper"), &r.join("opt/private/bin/bwrap")],
        );
        // /var holds the location (a bind from a mapped tree would be
        // mapped too), /opt a program others could not run; /bin is a
        // link, /proc and /sys are the kernel's, /home is not the system's.
        assert_eq!(tops, [r.join("usr"), r.join("etc")]);
        // A place that holds a top (a location at `/`) leaves it unmapped.
        assert!(mappable_tops(r, &[r.to_path_buf()], &[]).is_empty());
    }

    #[test]
    fn sockets_are_listed_from_the_kernel() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.sock");
        let _l = std::os::unix::net::UnixListener::bind(&path).unwrap();
        assert!(bound_sockets().contains(&path.canonicalize().unwrap_or(path)));
    }
}
