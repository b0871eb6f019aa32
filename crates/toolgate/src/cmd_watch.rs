//! `toolgate approvals watch`: the terminal as a channel for the asks that
//! agents' hooks hand over (see `toolgate::handover`). Shows each ask on
//! the controlling terminal, reads the person's answer there, and writes it
//! to the queue; the hook that asked is waiting for it.
//!
//! It reads only the terminal (`/dev/tty`), never stdin: a command that
//! pipes words into it answers nothing.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;
use toolgate::DataDir;
use toolgate::handover::{Presence, queue_path};
use toolgate::terminal::{parse_answer, render_prompt};
use toolgate_store::{AskQueue, QueuedAsk};

/// How often the queue is read for new asks.
const POLL: Duration = Duration::from_millis(100);

/// `toolgate approvals watch`.
#[derive(Debug, Clone, Args)]
pub struct WatchArgs {
    /// Stop after answering this many asks (default: run until interrupted).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub count: Option<u64>,
}

/// Runs the watcher until interrupted (or `--count` answers).
pub fn run(args: WatchArgs, data: &DataDir) -> Result<i32> {
    let tty_in = File::open("/dev/tty")
        .context("`toolgate approvals watch` answers on a terminal, and this process has none")?;
    let mut tty_out = OpenOptions::new()
        .write(true)
        .open("/dev/tty")
        .context("cannot write to the terminal")?;
    let queue = AskQueue::open(queue_path(data)).context("cannot open the ask queue")?;
    let _presence = Presence::announce(data).context("cannot announce the watcher")?;
    writeln!(
        tty_out,
        "toolgate: answering the asks of agents' hooks here (data directory {}); Ctrl-C to stop",
        data.root().display()
    )?;
    let mut answered = 0u64;
    loop {
        let pending = queue.pending().context("cannot read the ask queue")?;
        let Some(ask) = pending.into_iter().next() else {
            std::thread::sleep(POLL);
            continue;
        };
        if let Some(done) = ask_one(&ask, &queue, &tty_in, &mut tty_out)? {
            let by = if queue.answer(ask.id, &done, "terminal")? {
                "answered"
            } else {
                "too late: the hook stopped waiting"
            };
            writeln!(tty_out, "toolgate: {by}")?;
            answered += 1;
            if args.count.is_some_and(|n| answered >= n) {
                return Ok(0);
            }
        }
    }
}

/// Shows `ask` and reads answers until a valid one, or until the ask stops
/// waiting (`None`).
fn ask_one(
    ask: &QueuedAsk,
    queue: &AskQueue,
    tty_in: &File,
    tty_out: &mut File,
) -> Result<Option<toolgate_policy::approvals::Answer>> {
    // The queue is a file other processes write: its agent name is escaped too.
    let agent = toolgate_core::visible::escape_hidden(&ask.agent, &[]);
    write!(tty_out, "\n[{agent}]{}", render_prompt(&ask.prompt))?;
    tty_out.flush()?;
    loop {
        match read_line(tty_in, POLL)? {
            Some(line) => {
                if let Some(answer) = parse_answer(&line, &ask.prompt) {
                    return Ok(Some(answer));
                }
                write!(
                    tty_out,
                    "Not a valid choice: {:?}. Allow? [o]nce / [r]eject [message]: ",
                    line.trim()
                )?;
                tty_out.flush()?;
            }
            None => {
                if !queue.is_waiting(ask.id)? {
                    writeln!(
                        tty_out,
                        "\ntoolgate: withdrawn (answered elsewhere or timed out)"
                    )?;
                    return Ok(None);
                }
            }
        }
    }
}

/// One line from the terminal, if one is typed within `wait`.
fn read_line(tty: &File, wait: Duration) -> Result<Option<String>> {
    let mut fds = libc::pollfd {
        fd: tty.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    let ms = libc::c_int::try_from(wait.as_millis()).unwrap_or(libc::c_int::MAX);
    // SAFETY: one valid pollfd for the call.
    let ready = unsafe { libc::poll(&mut fds, 1, ms) };
    if ready <= 0 {
        return Ok(None);
    }
    // The terminal is in line mode: what is readable is a whole line.
    let mut buf = [0u8; 4096];
    let n = (&*tty).read(&mut buf).context("cannot read the terminal")?;
    if n == 0 {
        anyhow::bail!("the terminal closed");
    }
    Ok(Some(String::from_utf8_lossy(&buf[..n]).into_owned()))
}
