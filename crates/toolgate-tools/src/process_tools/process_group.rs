//! Process groups: signalling a whole group, checking that it is gone, and a
//! guard that kills the group if the call is dropped mid-run.
//!
//! A command runs as the leader of its own session (`setsid`), so its process
//! group id equals its pid and every descendant that does not leave the group
//! itself is reached by one `killpg`.

use std::time::Duration;

use nix::errno::Errno;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::time::{Instant, sleep};

/// How long a group gets between SIGTERM and SIGKILL.
pub const KILL_GRACE: Duration = Duration::from_secs(3);

/// How long to wait for the kernel to finish off a SIGKILLed group.
const KILL_SETTLE: Duration = Duration::from_secs(2);

const POLL: Duration = Duration::from_millis(20);

/// What terminating a group took.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Termination {
    /// SIGKILL was needed (the group outlived SIGTERM by [`KILL_GRACE`]).
    pub killed: bool,
    /// No live member remains.
    pub gone: bool,
}

/// Whether any process of group `pgid` is still alive (zombies do not count:
/// they have exited and only wait to be reaped).
pub fn group_alive(pgid: i32) -> bool {
    match killpg(Pid::from_raw(pgid), None) {
        Err(Errno::ESRCH) => false,
        // EPERM or success: someone is in the group; look closer for zombies.
        _ => live_members(pgid) > 0,
    }
}

/// Counts non-zombie processes whose process group is `pgid`, from `/proc`.
fn live_members(pgid: i32) -> usize {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        // Without /proc we cannot tell zombies apart: assume alive.
        return 1;
    };
    dir.filter_map(Result::ok)
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .bytes()
                .all(|b| b.is_ascii_digit())
        })
        .filter_map(|e| std::fs::read_to_string(e.path().join("stat")).ok())
        .filter_map(|stat| parse_stat(&stat))
        .filter(|(state, group)| *group == pgid && *state != 'Z' && *state != 'X')
        .count()
}

/// `(state, pgrp)` from a `/proc/PID/stat` line. The command name may contain
/// spaces and parentheses, so fields are counted after the last `)`.
fn parse_stat(stat: &str) -> Option<(char, i32)> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let _ppid = fields.next()?;
    let pgrp = fields.next()?.parse().ok()?;
    Some((state, pgrp))
}

fn signal_group(pgid: i32, signal: Signal) {
    match killpg(Pid::from_raw(pgid), signal) {
        Ok(()) | Err(Errno::ESRCH) => {}
        Err(e) => tracing::warn!(pgid, ?signal, error = %e, "could not signal process group"),
    }
}

/// Waits up to `within` for group `pgid` to have no live member.
pub async fn wait_gone(pgid: i32, within: Duration) -> bool {
    let until = Instant::now() + within;
    loop {
        if !group_alive(pgid) {
            return true;
        }
        if Instant::now() >= until {
            return false;
        }
        sleep(POLL).await;
    }
}

/// SIGTERM to the group, SIGKILL after `grace` if anything is still alive, then
/// waits until the group is gone (or reports that it is not).
pub async fn terminate(pgid: i32, grace: Duration) -> Termination {
    if !group_alive(pgid) {
        return Termination {
            killed: false,
            gone: true,
        };
    }
    signal_group(pgid, Signal::SIGTERM);
    // A stopped process cannot act on SIGTERM until it is continued.
    signal_group(pgid, Signal::SIGCONT);
    if wait_gone(pgid, grace).await {
        return Termination {
            killed: false,
            gone: true,
        };
    }
    signal_group(pgid, Signal::SIGKILL);
    let gone = wait_gone(pgid, KILL_SETTLE).await;
    if !gone {
        tracing::warn!(pgid, "process group still alive after SIGKILL");
    }
    Termination { killed: true, gone }
}

/// Kills the group with SIGKILL when dropped while armed: a call whose future
/// is dropped leaves nothing running.
#[derive(Debug)]
pub struct GroupGuard {
    pgid: i32,
    armed: bool,
}

impl GroupGuard {
    /// Guards group `pgid`.
    pub fn new(pgid: i32) -> Self {
        GroupGuard { pgid, armed: true }
    }

    /// The group was dealt with; dropping no longer kills it.
    pub fn disarm(&mut self) {
        self.armed = false;
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if self.armed && group_alive(self.pgid) {
            tracing::debug!(pgid = self.pgid, "killing process group of a dropped call");
            signal_group(self.pgid, Signal::SIGKILL);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_stat_with_odd_names() {
        let line = "1234 (a) b (c)) S 1 999 999 0 -1 4194560";
        assert_eq!(parse_stat(line), Some(('S', 999)));
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn own_group_is_alive_and_a_free_id_is_not() {
        let me = nix::unistd::getpgrp().as_raw();
        assert!(group_alive(me));
        // PID_MAX_LIMIT is 2^22; this id can never be a group.
        assert!(!group_alive(4_194_304 + 7));
    }
}
