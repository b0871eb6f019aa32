//! The helper that runs inside bubblewrap's namespaces, last before the
//! command: it sets `no_new_privs`, restricts itself with Landlock, installs
//! the seccomp filters and then `exec`s the command.
//!
//! It is the same executable as the caller's (`helper` in the spec, by default
//! the running program), started with [`CHILD_ARG`] as its first argument. A
//! program that builds sandboxed commands calls [`run_if_requested`] first
//! thing in `main`.

use std::ffi::OsString;
use std::io;
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, NetPort, Ruleset, RulesetAttr,
    RulesetCreatedAttr, RulesetStatus, Scope, path_beneath_rules,
};

use crate::SandboxError;

/// The first argument that makes a program act as the sandbox helper.
pub const CHILD_ARG: &str = "__toolgate-sandbox-child";

/// What the helper is told on its command line.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct ChildArgs {
    pub network: bool,
    pub writable: Vec<PathBuf>,
    /// The proxy's unix socket, as seen inside the sandbox: the command's
    /// only way out when it has no network of its own.
    pub proxy: Option<PathBuf>,
    pub program: OsString,
    pub args: Vec<OsString>,
}

impl ChildArgs {
    /// The helper's arguments after [`CHILD_ARG`].
    pub(crate) fn encode(&self) -> Vec<OsString> {
        let mut out: Vec<OsString> = Vec::new();
        out.push(if self.network { "--net" } else { "--no-net" }.into());
        for w in &self.writable {
            out.push("--write".into());
            out.push(w.clone().into_os_string());
        }
        if let Some(p) = &self.proxy {
            out.push("--proxy".into());
            out.push(p.clone().into_os_string());
        }
        out.push("--".into());
        out.push(self.program.clone());
        out.extend(self.args.iter().cloned());
        out
    }

    pub(crate) fn decode(mut args: impl Iterator<Item = OsString>) -> Result<Self, String> {
        let mut parsed = ChildArgs::default();
        loop {
            let Some(arg) = args.next() else {
                return Err("missing `--` before the command".into());
            };
            match arg.to_str() {
                Some("--net") => parsed.network = true,
                Some("--no-net") => parsed.network = false,
                Some("--write") => {
                    let path = args.next().ok_or("--write needs a path")?;
                    parsed.writable.push(PathBuf::from(path));
                }
                Some("--proxy") => {
                    let path = args.next().ok_or("--proxy needs a socket path")?;
                    parsed.proxy = Some(PathBuf::from(path));
                }
                Some("--") => break,
                _ => return Err(format!("unknown helper argument {arg:?}")),
            }
        }
        parsed.program = args.next().ok_or("no command after `--`")?;
        parsed.args = args.collect();
        Ok(parsed)
    }
}

/// When this process was started as the sandbox helper, confines it and runs
/// the command (never returning); otherwise returns at once. Call it first
/// thing in `main` of any program that builds sandboxed commands with itself
/// as the helper.
pub(crate) fn run_if_requested() {
    let mut args = std::env::args_os();
    let _program = args.next();
    match args.next() {
        Some(first) if first == CHILD_ARG => {}
        _ => return,
    }
    let code = match ChildArgs::decode(args) {
        Ok(child) => {
            let err = confine_and_exec(&child);
            match not_visible_hint(Path::new(&child.program), &err) {
                Some(hint) => eprintln!("toolgate sandbox: {err}: {hint}"),
                None => eprintln!("toolgate sandbox: {err}"),
            }
            match err {
                SandboxError::Exec { .. } => 127,
                _ => 126,
            }
        }
        Err(e) => {
            eprintln!("toolgate sandbox helper: {e}");
            2
        }
    };
    std::process::exit(code);
}

/// Why a program that runs outside "does not exist" inside, and what to
/// make readable: it links into a place the sandbox hides, or it is in one
/// itself (an absolute path outside the location, the system and the
/// toolchains).
fn not_visible_hint(program: &Path, err: &SandboxError) -> Option<String> {
    const REMEDY: &str =
        "make that installation readable (`[sandbox] readable`, or an upstream's `readable`)";
    if let Some(target) = hidden_target(program) {
        return Some(format!(
            "it links to {}, which the sandbox hides; {REMEDY}",
            target.display()
        ));
    }
    let missing = matches!(err, SandboxError::Exec { source, .. } if source.kind() == std::io::ErrorKind::NotFound);
    (missing && program.is_absolute() && std::fs::symlink_metadata(program).is_err())
        .then(|| format!("it is not visible in the sandbox; {REMEDY}"))
}

/// Where `program`, a link that resolves to nothing in here, points: the
/// usual reason a program that runs outside "does not exist" inside (a
/// virtualenv's interpreter in a hidden home directory, say).
fn hidden_target(program: &Path) -> Option<PathBuf> {
    let mut at = program.to_path_buf();
    // Follow the chain of links as far as it is visible.
    for _ in 0..40 {
        let meta = std::fs::symlink_metadata(&at).ok()?;
        if !meta.file_type().is_symlink() {
            return None;
        }
        let next = std::fs::read_link(&at).ok()?;
        let next = match at.parent() {
            Some(dir) if next.is_relative() => dir.join(next),
            _ => next,
        };
        if std::fs::symlink_metadata(&next).is_err() {
            return Some(next);
        }
        at = next;
    }
    None
}

/// The environment variables that point a command at the forwarder. Every
/// proxy variable the common tools read (curl, pip, npm, cargo, go, git);
/// `NO_PROXY` is emptied so that nothing is sent around the proxy.
const PROXY_VARS: &[&str] = &[
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "http_proxy",
    "https_proxy",
    "ALL_PROXY",
    "all_proxy",
];

fn confine_and_exec(child: &ChildArgs) -> SandboxError {
    // Whatever toolgate's own parent left open (an agent's pipe, a file, a
    // socket to a daemon or the network) must not reach the command.
    if let Err(e) = close_inherited_descriptors() {
        return e;
    }
    // The forwarder's listener is bound first: once Landlock is in force,
    // binding a TCP port is refused.
    let forwarder = match (&child.proxy, child.network) {
        (Some(socket), false) => {
            match TcpListener::bind("127.0.0.1:0").and_then(|l| Ok((l.local_addr()?.port(), l))) {
                Ok((port, listener)) => Some((port, listener, socket.clone())),
                Err(e) => {
                    return SandboxError::Setup(format!(
                        "cannot listen on the sandbox's loopback for the proxy: {e}"
                    ));
                }
            }
        }
        _ => None,
    };
    if let Err(e) = set_no_new_privs() {
        return e;
    }
    if let Err(e) = landlock_restrict(child, forwarder.as_ref().map(|f| f.0)) {
        return e;
    }
    if let Err(e) = crate::seccomp::apply() {
        return e;
    }
    let mut command = std::process::Command::new(&child.program);
    command.args(&child.args);
    if let Some((port, listener, socket)) = forwarder {
        if let Err(e) = start_forwarder(listener, &socket) {
            return e;
        }
        let url = format!("http://127.0.0.1:{port}");
        for var in PROXY_VARS {
            command.env(var, &url);
        }
        command.env("NO_PROXY", "").env("no_proxy", "");
    }
    let err = command.exec();
    SandboxError::Exec {
        program: PathBuf::from(&child.program),
        source: err,
    }
}

/// Marks every descriptor above the standard three close-on-exec, so that
/// the command starts with stdin, stdout and stderr only. Descriptors are
/// inherited across `exec` unless marked, and bubblewrap passes on all it
/// was given: a file open in the process that started toolgate (a key, a
/// `.env`) would be readable inside, and a socket would carry data out of
/// a sandbox that has no network. The helper itself needs none of them
/// across its `exec` (the proxy is reached by a path).
fn close_inherited_descriptors() -> Result<(), SandboxError> {
    // SAFETY: close_range takes integer arguments only; with
    // CLOSE_RANGE_CLOEXEC it closes nothing, it only sets the flag.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_close_range,
            3 as libc::c_uint,
            libc::c_uint::MAX,
            libc::CLOSE_RANGE_CLOEXEC,
        )
    };
    if rc == 0 {
        return Ok(());
    }
    // Kernels before 5.11: each open descriptor, one by one.
    let fds: Vec<libc::c_int> = std::fs::read_dir("/proc/self/fd")
        .map_err(|e| SandboxError::Setup(format!("cannot list the open descriptors: {e}")))?
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .filter(|&fd| fd > 2)
        .collect();
    for fd in fds {
        // SAFETY: fcntl on a descriptor number; one that is already closed
        // (the directory listing's own) fails harmlessly with EBADF.
        let flags = unsafe { libc::fcntl(fd, libc::F_GETFD) };
        if flags >= 0 && unsafe { libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC) } < 0 {
            return Err(SandboxError::Setup(format!(
                "cannot close descriptor {fd} before the command: {}",
                io::Error::last_os_error()
            )));
        }
    }
    Ok(())
}

fn set_no_new_privs() -> Result<(), SandboxError> {
    // SAFETY: PR_SET_NO_NEW_PRIVS takes integer arguments only.
    let rc = unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) };
    if rc == 0 {
        Ok(())
    } else {
        Err(SandboxError::Setup(format!(
            "PR_SET_NO_NEW_PRIVS: {}",
            std::io::Error::last_os_error()
        )))
    }
}

/// The newest Landlock ABI this crate asks for; the kernel may offer less,
/// in which case the rules degrade to what it enforces (best effort: the
/// namespaces are the primary wall, Landlock the second).
const LANDLOCK_ABI: ABI = ABI::V6;

fn landlock_err(e: impl std::fmt::Display) -> SandboxError {
    SandboxError::Setup(format!("landlock: {e}"))
}

/// Runs the forwarder in a grandchild, already confined like the command
/// (Landlock, seccomp): it accepts TCP connections on the sandbox's own
/// loopback and carries each one to the proxy's unix socket. Forked twice so
/// that it is a child of the sandbox's init, not of the command (which would
/// otherwise see an unknown child), and dies with the sandbox.
fn start_forwarder(listener: TcpListener, socket: &Path) -> Result<(), SandboxError> {
    // SAFETY: the helper is single-threaded here (it runs first thing in
    // `main`, before any thread is started), so the child may go on running
    // ordinary Rust code.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(SandboxError::Setup(format!(
            "cannot start the proxy forwarder: {}",
            io::Error::last_os_error()
        )));
    }
    if pid == 0 {
        // SAFETY: as above; this intermediate child only forks and exits.
        let grandchild = unsafe { libc::fork() };
        if grandchild == 0 {
            detach_stdio();
            forward(&listener, socket);
        }
        // SAFETY: _exit ends this process without running the parent's
        // exit handlers twice.
        unsafe { libc::_exit(if grandchild < 0 { 1 } else { 0 }) }
    }
    drop(listener);
    let mut status = 0;
    // SAFETY: waits for the child just forked; `status` is a valid int.
    let rc = unsafe { libc::waitpid(pid, &mut status, 0) };
    if rc != pid || !libc::WIFEXITED(status) || libc::WEXITSTATUS(status) != 0 {
        return Err(SandboxError::Setup(
            "cannot start the proxy forwarder: its process failed".into(),
        ));
    }
    Ok(())
}

/// Points the forwarder's standard streams at `/dev/null`, so that it holds
/// none of the command's pipes open (a reader of the command's output would
/// otherwise wait for the forwarder too).
fn detach_stdio() {
    let Ok(null) = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/null")
    else {
        return;
    };
    use std::os::fd::AsRawFd;
    for fd in 0..=2 {
        // SAFETY: dup2 onto the standard descriptors of this process, which
        // no Rust object owns here.
        unsafe { libc::dup2(null.as_raw_fd(), fd) };
    }
}

/// The forwarder's loop; never returns.
fn forward(listener: &TcpListener, socket: &Path) -> ! {
    for conn in listener.incoming() {
        let Ok(tcp) = conn else { continue };
        let socket = socket.to_path_buf();
        let spawned = std::thread::Builder::new()
            .stack_size(64 * 1024)
            .spawn(move || {
                let _ = relay(tcp, &socket);
            });
        if spawned.is_err() {
            // Dropping the connection tells the client; the next may fit.
            continue;
        }
    }
    // SAFETY: ends the forwarder process; nothing is left to run.
    unsafe { libc::_exit(0) }
}

/// Carries one connection both ways until each side has closed.
fn relay(tcp: TcpStream, socket: &Path) -> io::Result<()> {
    let unix = UnixStream::connect(socket)?;
    let mut tcp_read = tcp.try_clone()?;
    let mut unix_write = unix.try_clone()?;
    let up = std::thread::Builder::new()
        .stack_size(64 * 1024)
        .spawn(move || {
            let _ = io::copy(&mut tcp_read, &mut unix_write);
            let _ = unix_write.shutdown(Shutdown::Write);
        })?;
    let (mut unix_read, mut tcp_write) = (unix, tcp);
    let _ = io::copy(&mut unix_read, &mut tcp_write);
    let _ = tcp_write.shutdown(Shutdown::Write);
    let _ = up.join();
    Ok(())
}

fn landlock_restrict(child: &ChildArgs, proxy_port: Option<u16>) -> Result<(), SandboxError> {
    if crate::detect::landlock_abi().is_none() {
        return Ok(());
    }
    let abi = LANDLOCK_ABI;
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(abi))
        .map_err(landlock_err)?
        .scope(Scope::from_all(abi))
        .map_err(landlock_err)?;
    if !child.network {
        ruleset = ruleset
            .handle_access(AccessNet::from_all(abi))
            .map_err(landlock_err)?;
    }
    let mut write_roots: Vec<PathBuf> = child.writable.clone();
    write_roots.extend(["/tmp", "/dev", "/proc"].map(PathBuf::from));
    let mut created = ruleset.create().map_err(landlock_err)?;
    if let (Some(port), false) = (proxy_port, child.network) {
        // The command may connect to the forwarder's port on the sandbox's
        // own loopback (its network namespace has nothing else), and to
        // nothing else over TCP.
        created = created
            .add_rule(NetPort::new(port, AccessNet::ConnectTcp))
            .map_err(landlock_err)?;
    }
    let status = created
        .add_rules(path_beneath_rules(["/"], AccessFs::from_read(abi)))
        .map_err(landlock_err)?
        .add_rules(path_beneath_rules(
            write_roots.iter().filter(|p| p.exists()),
            AccessFs::from_all(abi),
        ))
        .map_err(landlock_err)?
        .restrict_self()
        .map_err(landlock_err)?;
    if status.ruleset == RulesetStatus::NotEnforced {
        tracing::debug!("landlock not enforced by this kernel");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn args_round_trip() {
        let child = ChildArgs {
            network: false,
            writable: vec!["/ws".into(), "/home/u/.cargo".into()],
            proxy: Some("/dev/.toolgate-proxy.sock".into()),
            program: "bash".into(),
            args: vec!["-c".into(), "--write x --".into()],
        };
        assert_eq!(
            ChildArgs::decode(child.encode().into_iter()).unwrap(),
            child
        );
    }

    #[test]
    fn bad_args_named() {
        let err = ChildArgs::decode(["--bogus".into()].into_iter()).unwrap_err();
        assert!(err.contains("--bogus"), "{err}");
        let err = ChildArgs::decode(["--net".into()].into_iter()).unwrap_err();
        assert!(err.contains("--"), "{err}");
    }
}
