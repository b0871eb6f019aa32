//! The seccomp filters applied in the confined process just before it runs
//! the command.
//!
//! A confined build needs almost every system call, so this is the one place
//! where the crate lists what to refuse rather than what to admit: the
//! namespaces, mounts and Landlock rules are the allow-lists; this filter only
//! takes away the kernel interfaces that can undo them or reach outside
//! (tracing other processes, mounting, entering or making namespaces, loading
//! code into the kernel, injecting terminal input).

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

use crate::SandboxError;

/// System calls refused with `EPERM`, whatever their arguments.
fn refused_always() -> Vec<(i64, &'static str)> {
    vec![
        (libc::SYS_ptrace, "ptrace"),
        (libc::SYS_process_vm_readv, "process_vm_readv"),
        (libc::SYS_process_vm_writev, "process_vm_writev"),
        (libc::SYS_pidfd_getfd, "pidfd_getfd"),
        (libc::SYS_mount, "mount"),
        (libc::SYS_umount2, "umount2"),
        (libc::SYS_pivot_root, "pivot_root"),
        (libc::SYS_chroot, "chroot"),
        (libc::SYS_move_mount, "move_mount"),
        (libc::SYS_open_tree, "open_tree"),
        (libc::SYS_fsopen, "fsopen"),
        (libc::SYS_fsconfig, "fsconfig"),
        (libc::SYS_fsmount, "fsmount"),
        (libc::SYS_fspick, "fspick"),
        (libc::SYS_mount_setattr, "mount_setattr"),
        (libc::SYS_unshare, "unshare"),
        (libc::SYS_setns, "setns"),
        (libc::SYS_kexec_load, "kexec_load"),
        (libc::SYS_kexec_file_load, "kexec_file_load"),
        (libc::SYS_bpf, "bpf"),
        (libc::SYS_perf_event_open, "perf_event_open"),
        (libc::SYS_keyctl, "keyctl"),
        (libc::SYS_add_key, "add_key"),
        (libc::SYS_request_key, "request_key"),
        (libc::SYS_init_module, "init_module"),
        (libc::SYS_finit_module, "finit_module"),
        (libc::SYS_delete_module, "delete_module"),
        (libc::SYS_reboot, "reboot"),
        (libc::SYS_swapon, "swapon"),
        (libc::SYS_swapoff, "swapoff"),
        (libc::SYS_acct, "acct"),
        (libc::SYS_userfaultfd, "userfaultfd"),
        (libc::SYS_open_by_handle_at, "open_by_handle_at"),
        (libc::SYS_name_to_handle_at, "name_to_handle_at"),
        // io_uring performs file and network operations that this filter
        // would not see.
        (libc::SYS_io_uring_setup, "io_uring_setup"),
        (libc::SYS_io_uring_enter, "io_uring_enter"),
        (libc::SYS_io_uring_register, "io_uring_register"),
        (libc::SYS_quotactl, "quotactl"),
        (libc::SYS_syslog, "syslog"),
        (libc::SYS_settimeofday, "settimeofday"),
        (libc::SYS_clock_settime, "clock_settime"),
        (libc::SYS_clock_adjtime, "clock_adjtime"),
        (libc::SYS_vhangup, "vhangup"),
    ]
}

/// The names of the system calls the filter refuses, for `sandbox status`.
pub fn refused_names() -> Vec<&'static str> {
    let mut names: Vec<&'static str> = refused_always().into_iter().map(|(_, n)| n).collect();
    names.extend([
        "ioctl(TIOCSTI)",
        "ioctl(TIOCLINUX)",
        "clone(CLONE_NEW*)",
        "clone3 (ENOSYS)",
        "openat2 (ENOSYS)",
        "chmod, fchmod, fchmodat, fchmodat2, creat, open, openat, mkdir, mkdirat, mknod, mknodat with a set-user-ID or set-group-ID mode",
    ]);
    names
}

const NAMESPACE_FLAGS: &[u64] = &[
    libc::CLONE_NEWNS as u64,
    libc::CLONE_NEWUSER as u64,
    libc::CLONE_NEWPID as u64,
    libc::CLONE_NEWNET as u64,
    libc::CLONE_NEWIPC as u64,
    libc::CLONE_NEWUTS as u64,
    libc::CLONE_NEWCGROUP as u64,
];

/// The system calls that give a file its mode: `(number, mode argument,
/// flags argument)`, where the flags argument (`open`'s) decides whether the
/// mode is used at all. A confined command may not set the set-user-ID or
/// set-group-ID bit with any of them: a program it leaves behind must not run
/// with its owner's rights (root's, when toolgate runs as root) for whoever
/// starts it later.
fn mode_setters() -> Vec<(i64, u8, Option<u8>)> {
    #[allow(unused_mut)]
    let mut calls = vec![
        (libc::SYS_fchmod, 1, None),
        (libc::SYS_fchmodat, 2, None),
        (libc::SYS_fchmodat2, 2, None),
        (libc::SYS_openat, 3, Some(2)),
        (libc::SYS_mkdirat, 2, None),
        (libc::SYS_mknodat, 2, None),
    ];
    // The older calls that newer architectures no longer have.
    #[cfg(target_arch = "x86_64")]
    calls.extend([
        (libc::SYS_chmod, 1, None),
        (libc::SYS_creat, 1, None),
        (libc::SYS_open, 2, Some(1)),
        (libc::SYS_mkdir, 1, None),
        (libc::SYS_mknod, 1, None),
    ]);
    calls
}

/// The bits no mode set inside may carry.
const PRIVILEGE_BITS: [u64; 2] = [libc::S_ISUID as u64, libc::S_ISGID as u64];

/// Flags that make `open` use its mode: a file created, or an unnamed one.
const CREATING_FLAGS: [u64; 2] = [libc::O_CREAT as u64, libc::O_TMPFILE as u64];

/// Rules matching a call whose mode argument carries a privilege bit (and,
/// for `open`, whose flags create a file).
fn privilege_bit_rules(
    mode_arg: u8,
    flags_arg: Option<u8>,
) -> Result<Vec<SeccompRule>, SandboxError> {
    let bit = |arg: u8, b: u64| {
        SeccompCondition::new(arg, SeccompCmpArgLen::Dword, SeccompCmpOp::MaskedEq(b), b)
    };
    let mut rules = Vec::new();
    for b in PRIVILEGE_BITS {
        match flags_arg {
            None => rules.push(SeccompRule::new(vec![
                bit(mode_arg, b).map_err(seccomp_err)?,
            ])),
            Some(flags) => {
                for creating in CREATING_FLAGS {
                    rules.push(SeccompRule::new(vec![
                        bit(flags, creating).map_err(seccomp_err)?,
                        bit(mode_arg, b).map_err(seccomp_err)?,
                    ]));
                }
            }
        }
    }
    rules
        .into_iter()
        .collect::<Result<_, _>>()
        .map_err(seccomp_err)
}

fn arch() -> Result<TargetArch, SandboxError> {
    TargetArch::try_from(std::env::consts::ARCH)
        .map_err(|e| SandboxError::Seccomp(format!("architecture {}: {e}", std::env::consts::ARCH)))
}

fn seccomp_err(e: impl std::fmt::Display) -> SandboxError {
    SandboxError::Seccomp(e.to_string())
}

/// The filters, in the order to install them: the `EPERM` one (fixed list,
/// `TIOCSTI`/`TIOCLINUX` ioctls, `clone` making namespaces) and the `ENOSYS`
/// one for `clone3`, whose flags live in memory a filter cannot read (the C
/// library then falls back to `clone`, which the first filter does see).
// The ioctl request constants' type differs between C libraries.
#[allow(clippy::unnecessary_cast)]
pub fn filters() -> Result<Vec<BpfProgram>, SandboxError> {
    let arch = arch()?;
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for (nr, _) in refused_always() {
        rules.insert(nr, Vec::new());
    }
    let ioctl_rules = [libc::TIOCSTI, libc::TIOCLINUX]
        .into_iter()
        .map(|request| {
            SeccompCondition::new(1, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, request as u64)
                .and_then(|c| SeccompRule::new(vec![c]))
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(seccomp_err)?;
    rules.insert(libc::SYS_ioctl, ioctl_rules);
    let clone_rules = NAMESPACE_FLAGS
        .iter()
        .map(|&flag| {
            SeccompCondition::new(
                0,
                SeccompCmpArgLen::Qword,
                SeccompCmpOp::MaskedEq(flag),
                flag,
            )
            .and_then(|c| SeccompRule::new(vec![c]))
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(seccomp_err)?;
    rules.insert(libc::SYS_clone, clone_rules);
    for (nr, mode_arg, flags_arg) in mode_setters() {
        rules.insert(nr, privilege_bit_rules(mode_arg, flags_arg)?);
    }
    let eperm = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )
    .map_err(seccomp_err)?;

    let mut clone3 = BTreeMap::new();
    clone3.insert(libc::SYS_clone3, Vec::new());
    // Its mode lives in memory a filter cannot read; the C library's `open`
    // does not use it, and callers that do fall back to `openat`.
    clone3.insert(libc::SYS_openat2, Vec::new());
    let enosys = SeccompFilter::new(
        clone3,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::ENOSYS as u32),
        arch,
    )
    .map_err(seccomp_err)?;
    Ok(vec![
        BpfProgram::try_from(eperm).map_err(seccomp_err)?,
        BpfProgram::try_from(enosys).map_err(seccomp_err)?,
    ])
}

/// Installs the filters on the calling thread (`no_new_privs` must be set).
pub fn apply() -> Result<(), SandboxError> {
    for filter in filters()? {
        seccompiler::apply_filter(&filter).map_err(seccomp_err)?;
    }
    Ok(())
}

/// Whether the kernel offers seccomp filters (`PR_GET_SECCOMP` answers).
pub fn available() -> bool {
    // SAFETY: PR_GET_SECCOMP reads the calling thread's mode and takes no pointers.
    unsafe { libc::prctl(libc::PR_GET_SECCOMP, 0, 0, 0, 0) >= 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_compile() {
        let f = filters().unwrap();
        assert_eq!(f.len(), 2);
        assert!(f.iter().all(|p| !p.is_empty()));
    }
}
