//! Asks handed over by a hook to toolgate's own channels: a hook process
//! for an agent that cannot ask a person (Codex, Gemini CLI, OpenCode)
//! posts its ask to the data directory's queue (`asks.db`, see
//! [`toolgate_store::AskQueue`]) and waits for the answer; a long-lived
//! channel — `toolgate approvals watch` on the person's terminal, or the
//! approval page of `toolgate serve` / `toolgate mcp` — shows it and
//! answers.
//!
//! A running channel says so by holding a shared lock on the data
//! directory's `ask-channels.lock` for as long as it runs ([`Presence`]); a
//! hook looks for it without taking it ([`channel_running`]), so with no
//! channel running the hook denies at once instead of waiting for nobody.
//! The lock goes with the process, however it ends.
//!
//! Only the person answers: the page takes answers only with its token, and
//! the watcher reads only its controlling terminal, never a pipe. Whoever
//! can write the data directory can also save approvals in it; the hook
//! trusts the queue no more than it trusts `state.db`.

use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::path::PathBuf;

use crate::DataDir;

/// The queue of handed-over asks in `data`.
pub fn queue_path(data: &DataDir) -> PathBuf {
    data.root().join("asks.db")
}

fn lock_path(data: &DataDir) -> PathBuf {
    data.root().join("ask-channels.lock")
}

/// A running channel, announced to hooks until it is dropped (or the
/// process ends).
#[derive(Debug)]
pub struct Presence {
    _file: File,
}

fn whole_file(kind: libc::c_short) -> libc::flock {
    // SAFETY: `flock` is plain data; all-zero is a valid value.
    let mut lock: libc::flock = unsafe { std::mem::zeroed() };
    lock.l_type = kind;
    lock.l_whence = libc::SEEK_SET as libc::c_short;
    lock
}

impl Presence {
    /// Announces a channel: a shared (read) lock on the data directory's
    /// lock file, which any number of channels hold at once.
    pub fn announce(data: &DataDir) -> std::io::Result<Presence> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(lock_path(data))?;
        let lock = whole_file(libc::F_RDLCK as libc::c_short);
        // SAFETY: the descriptor is open for the call; `lock` is valid.
        if unsafe { libc::fcntl(file.as_raw_fd(), libc::F_SETLK, &lock) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(Presence { _file: file })
    }
}

/// Whether a channel is running for `data` (a [`Presence`] is held by a
/// live process). Takes no lock: it asks whether an exclusive one would
/// conflict.
pub fn channel_running(data: &DataDir) -> bool {
    running_at(&lock_path(data))
}

fn running_at(path: &std::path::Path) -> bool {
    let Ok(file) = File::open(path) else {
        return false;
    };
    let mut lock = whole_file(libc::F_WRLCK as libc::c_short);
    // SAFETY: the descriptor is open for the call; `lock` is valid and
    // written back by the kernel.
    if unsafe { libc::fcntl(file.as_raw_fd(), libc::F_GETLK, &mut lock) } != 0 {
        return false;
    }
    lock.l_type != libc::F_UNLCK as libc::c_short
}

/// How often a relay reads the queue.
const RELAY_POLL: std::time::Duration = std::time::Duration::from_millis(200);

/// Shows the asks that hooks hand over on `channel` (the approval page of
/// `toolgate serve` and `toolgate mcp`), and writes each answer to the
/// queue, for as long as the returned task runs; an ask its hook stopped
/// waiting for is withdrawn from the channel. `by` names the channel in
/// the hook's answer (`page`).
pub fn spawn_relay(
    data: &DataDir,
    channel: std::sync::Arc<dyn toolgate_policy::approvals::ApprovalChannel>,
    by: &'static str,
) -> std::io::Result<tokio::task::JoinHandle<()>> {
    let presence = Presence::announce(data)?;
    let path = queue_path(data);
    Ok(tokio::spawn(async move {
        let _presence = presence;
        let mut shown: std::collections::HashMap<i64, tokio::task::JoinHandle<()>> =
            std::collections::HashMap::new();
        // Kept open between polls: opening the file five times a second cost
        // more CPU than a served call. Dropped (and opened again) on an error.
        let mut queue: Option<toolgate_store::AskQueue> = None;
        loop {
            shown.retain(|_, task| !task.is_finished());
            let p = path.clone();
            let open = queue.take();
            let pending = tokio::task::spawn_blocking(move || {
                let q = match open {
                    Some(q) => q,
                    None => toolgate_store::AskQueue::open(&p)?,
                };
                let asks = q.pending()?;
                Ok::<_, toolgate_store::StoreError>((q, asks))
            })
            .await;
            match pending {
                Ok(Ok((q, asks))) => {
                    queue = Some(q);
                    for ask in asks {
                        if shown.contains_key(&ask.id) {
                            continue;
                        }
                        let id = ask.id;
                        let task = tokio::spawn(show(ask, path.clone(), channel.clone(), by));
                        shown.insert(id, task);
                    }
                }
                Ok(Err(e)) => tracing::warn!(error = %e, "cannot read the ask queue"),
                Err(e) => tracing::warn!(error = %e, "cannot read the ask queue"),
            }
            tokio::time::sleep(RELAY_POLL).await;
        }
    }))
}

/// One handed-over ask on the channel, until it is answered or its hook
/// stops waiting.
async fn show(
    ask: toolgate_store::QueuedAsk,
    path: PathBuf,
    channel: std::sync::Arc<dyn toolgate_policy::approvals::ApprovalChannel>,
    by: &'static str,
) {
    let id = ask.id;
    let waiting = {
        let path = path.clone();
        async move {
            loop {
                tokio::time::sleep(RELAY_POLL).await;
                let p = path.clone();
                let still = tokio::task::spawn_blocking(move || {
                    toolgate_store::AskQueue::open(&p).and_then(|q| q.is_waiting(id))
                })
                .await;
                if !matches!(still, Ok(Ok(true))) {
                    return;
                }
            }
        }
    };
    let answer = tokio::select! {
        answer = channel.ask(&ask.prompt) => answer,
        () = waiting => return,
    };
    match answer {
        Ok(answer) => {
            let written = tokio::task::spawn_blocking(move || {
                toolgate_store::AskQueue::open(&path).and_then(|q| q.answer(id, &answer, by))
            })
            .await;
            if !matches!(written, Ok(Ok(_))) {
                tracing::warn!(id, "cannot write the answer to the ask queue");
            }
        }
        // Nobody could answer here; the hook denies when its wait ends.
        Err(e) => tracing::debug!(id, error = %e, "a handed-over ask was not answered"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_channel_is_seen_while_its_presence_is_held() {
        let dir = tempfile::tempdir().unwrap();
        let data = DataDir::locate(Some(dir.path())).unwrap();
        assert!(!channel_running(&data));
        // A lock held by this process never conflicts with this process's
        // own query: look from a child, as a hook would.
        let presence = Presence::announce(&data).unwrap();
        let path = lock_path(&data);
        let probe = || {
            // SAFETY: the child only opens the file, asks and `_exit`s.
            let pid = unsafe { libc::fork() };
            if pid == 0 {
                let code = i32::from(running_at(&path));
                unsafe { libc::_exit(code) }
            }
            let mut status = 0;
            unsafe { libc::waitpid(pid, &mut status, 0) };
            libc::WEXITSTATUS(status) == 1
        };
        assert!(probe());
        drop(presence);
        assert!(!probe());
    }
}
