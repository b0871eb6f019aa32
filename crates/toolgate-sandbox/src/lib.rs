//! Confines a process on Linux: what it may write, read, reach and signal.
//!
//! The crate decides nothing and knows no tool. A caller describes what a
//! command may touch in a [`SandboxSpec`], asks [`detect`] what the machine
//! supports, and gets a [`std::process::Command`] that runs the command
//! confined.
//!
//! # Mechanism
//!
//! Three layers, each from a different part of the kernel, so that a gap in
//! one is not a gap in all:
//!
//! 1. **bubblewrap** (`bwrap`, Debian package `bubblewrap`) builds the view:
//!    new user, PID, IPC, UTS and cgroup namespaces (and a new, empty network
//!    namespace unless the spec asks for the network), no capabilities, user
//!    namespaces disabled inside, killed with its parent. The view is built
//!    by construction, hidden unless needed: the host's file system
//!    read-only; `/tmp`, `/var/tmp`, `/run`, `/home`, `/root` and the user's
//!    home directory replaced by empty ones; then the places of the home
//!    directory that toolchains need put back read-only
//!    ([`toolgate_paths::home`]), the configured writable paths and the
//!    location's roots; then, in the system's local directories (`/etc`,
//!    `/opt`, `/var`, `/usr/local`), every entry other users may not read
//!    masked, so even a command run as root sees what any user sees; then
//!    every credential of the path facts that is visible masked (the system's, the location's and the home places',
//!    whatever their case, and hard links to credential files), toolgate's
//!    own places hidden, and every unix socket bound outside the location
//!    (as the kernel lists them) covered. `/proc` is a new procfs that shows
//!    only the sandbox's own processes. bubblewrap is chosen over doing the
//!    namespace and mount work in a `pre_exec` hook because it is small,
//!    audited, shipped by every distribution, and works both as root and as
//!    an ordinary user (through unprivileged user namespaces).
//!
//!    With staging ([`stage`]), the roots are overlays: the command's writes
//!    land in an upper directory, and reach the location only when the
//!    caller has judged each changed path and lands it. A process that
//!    outlives a call (a server) keeps its overlay for its whole life and
//!    is settled again and again while it runs ([`LiveStaging`]): the upper
//!    layer is only read while mounted, what lands is copied out of it, and
//!    what does not is set back through the mounted overlay itself.
//! 2. **Landlock** is applied by a helper that bubblewrap runs inside the
//!    namespaces: writes only beneath the roots, the writable paths, `/tmp`,
//!    `/dev` and `/proc`; no TCP bind or connect when the network is off; no
//!    signals to, and no abstract sockets of, processes outside. It cannot be
//!    applied before bubblewrap (a Landlock-restricted process may not mount)
//!    and bubblewrap cannot apply it itself, hence the helper: by default
//!    the caller's own executable re-run with [`CHILD_ARG`]
//!    ([`run_if_requested`]), which needs no second binary to install and
//!    find; a caller may name a smaller program that calls
//!    [`run_if_requested`] and holds nothing else (`SandboxSpec::helper`),
//!    which starts faster. Landlock is best effort:
//!    where the kernel lacks it the namespaces still confine.
//! 3. **seccomp** (built with `seccompiler`) is installed by the same helper
//!    after `no_new_privs`: it refuses `ptrace`, mounts, `unshare`/`setns`
//!    and namespace-creating `clone`, kexec, `bpf`, `perf_event_open`, the
//!    key ring, module loading, io_uring, the `TIOCSTI`/`TIOCLINUX` ioctls and
//!    a few more ([`seccomp::refused_names`]).
//!
//! # Network through the proxy
//!
//! A command without the network gets a new network namespace with only its
//! own loopback. When the spec names a [`proxy`] socket, that socket is bound
//! into the sandbox, the helper listens on an ephemeral port of the sandbox's
//! loopback before confining itself, forks (twice, so that it is a child of
//! the sandbox's init) a forwarder that carries each TCP connection on that
//! port to the socket, and sets `HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY` (and
//! their lower-case forms) to it, with `NO_PROXY` empty. Landlock admits TCP
//! connections to that one port and no bind at all, so the proxy — which
//! admits only the listed names and reports every connection — is the only
//! way out. A command that ignores the variables reaches nothing.
//!
//! Support is detected by trying it: bubblewrap is run once with every
//! namespace, the Landlock ABI is asked of the kernel, seccomp is probed with
//! `prctl`. Never from the kernel version.
//!
//! # What is not confined
//!
//! A confined command may read the host's file system outside the emptied
//! directories (`/usr`, and `/etc`, `/opt`, `/var` as other users see them,
//! other directories outside any home) and the location. Without staging it writes the
//! roots directly (the existing protected entries at each root read-only);
//! with staging nothing reaches the roots unjudged. The configured writable
//! paths are written directly, always.

mod child;
mod detect;
mod dev_tree;
mod exit_report;
mod kept;
mod kept_snapshot;
mod live_stage;
pub mod proxy;
mod redact;
mod run_dir;
mod sandbox_spec;
mod scan;
pub mod seccomp;
pub mod stage;
mod system_view;
#[cfg(feature = "test-util")]
pub mod test_util;

pub use child::CHILD_ARG;
pub use detect::{Support, detect, detect_cached, landlock_abi};
pub use exit_report::ExitReport;
pub use live_stage::{LiveStaging, NotReset};
pub use sandbox_spec::{Confined, SandboxSpec};
pub use scan::SCAN_LIMIT;
pub use stage::{Change, ChangeKind, LandingJournal, Staging};

/// When this process was started as the sandbox's helper (inside the
/// sandbox, confining itself and running the command), does that and never
/// returns; otherwise returns at once. Call it first thing in `main` of any
/// program that builds sandboxed commands with itself as the helper.
pub fn run_if_requested() {
    child::run_if_requested();
}

/// How the system's directories are kept to what any other user may read,
/// in words, as `toolgate sandbox status` prints it: as root, through
/// idmapped mounts (tried now, as a run would) or, where the kernel refuses,
/// by walking `/etc`, `/opt`, `/var` and `/usr/local`.
pub fn system_view_status() -> String {
    let tops = sandbox_spec::mappable_tops(std::path::Path::new("/"), &[], &[]);
    // SAFETY: geteuid has no preconditions and cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        return "as this user sees it; what its owner keeps from others walked for in /etc, /opt, /var and /usr/local".into();
    }
    let view = system_view::owners::OthersView::prepare(&tops);
    let list = |v: Vec<String>| {
        if v.is_empty() {
            "none".to_string()
        } else {
            v.join(", ")
        }
    };
    let mapped: Vec<String> = view
        .tops()
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    let unmapped: Vec<String> = tops
        .iter()
        .filter(|t| !view.tops().contains(t))
        .map(|p| p.display().to_string())
        .collect();
    if unmapped.is_empty() {
        return format!(
            "as any other user sees it: idmapped ({}), root's files owned by nobody",
            mapped.join(", ")
        );
    }
    let walked: Vec<String> = system_view::WALKED
        .iter()
        .map(|(p, _)| *p)
        .filter(|p| {
            !view
                .tops()
                .iter()
                .any(|m| std::path::Path::new(p).starts_with(m))
        })
        .map(str::to_string)
        .collect();
    format!(
        "idmapped: {}; walked for what others may not read: {}; the kernel refuses to map {}, so a root-only file there outside the walked directories is readable to a command run as root",
        list(mapped),
        list(walked),
        unmapped.join(", ")
    )
}

/// Nanoseconds since the epoch (0 if the clock is before it).
pub(crate) fn now_nanos() -> i128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i128::try_from(d.as_nanos()).unwrap_or(i128::MAX))
}

/// Why a command could not be confined.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// The machine cannot confine commands.
    #[error("the sandbox is not available on this machine: {0}")]
    Unavailable(String),
    /// The spec is unusable (a root that does not exist, …).
    #[error("bad sandbox spec: {0}")]
    Spec(String),
    /// Setting up the confinement failed.
    #[error("sandbox setup failed: {0}")]
    Setup(String),
    /// Building or installing the seccomp filter failed.
    #[error("seccomp: {0}")]
    Seccomp(String),
    /// The command could not be started inside the sandbox.
    #[error("cannot run {program} inside the sandbox: {source}", program = program.display())]
    Exec {
        /// The program.
        program: std::path::PathBuf,
        /// Why.
        source: std::io::Error,
    },
}
