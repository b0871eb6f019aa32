//! The helper that runs inside bubblewrap's namespaces, last before the
//! command: it sets `no_new_privs`, restricts itself with Landlock, installs
//! the seccomp filters and then `exec`s the command.
//!
//! It is the same executable as the caller's (`helper` in the spec, by default
//! the running program), started with [`CHILD_ARG`] as its first argument. A
//! program that builds sandboxed commands calls [`run_if_requested`] first
//! thing in `main`.

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, Ruleset, RulesetAttr,
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
pub fn run_if_requested() {
    let mut args = std::env::args_os();
    let _program = args.next();
    match args.next() {
        Some(first) if first == CHILD_ARG => {}
        _ => return,
    }
    let code = match ChildArgs::decode(args) {
        Ok(child) => {
            let err = confine_and_exec(&child);
            eprintln!("toolgate sandbox: {err}");
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

fn confine_and_exec(child: &ChildArgs) -> SandboxError {
    if let Err(e) = set_no_new_privs() {
        return e;
    }
    if let Err(e) = landlock_restrict(child) {
        return e;
    }
    if let Err(e) = crate::seccomp::apply() {
        return e;
    }
    let err = std::process::Command::new(&child.program)
        .args(&child.args)
        .exec();
    SandboxError::Exec {
        program: PathBuf::from(&child.program),
        source: err,
    }
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

fn landlock_restrict(child: &ChildArgs) -> Result<(), SandboxError> {
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
    let status = ruleset
        .create()
        .map_err(landlock_err)?
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
