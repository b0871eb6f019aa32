//! The hook's time budget, without a thread to start: a one-shot timer
//! (`setitimer`) whose signal handler writes the blocking answer, rendered
//! beforehand, and ends the process, unless an answer was given first.
//!
//! The handler does only what is safe in a signal handler: an atomic swap,
//! `write` and `_exit`.

use std::sync::OnceLock;
use std::sync::atomic::Ordering;
use std::time::Duration;

use toolgate_hooks::Reply;

use super::ANSWERED;

/// The answer the timer gives, as bytes ready to write.
struct Rendered {
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    exit: i32,
}

static ON_TIMEOUT: OnceLock<Rendered> = OnceLock::new();

/// Arms the timer: after `limit`, `reply` is the answer unless one was given.
pub(super) fn arm(reply: &Reply, limit: Duration) -> std::io::Result<()> {
    let mut stdout = reply.stdout.clone().into_bytes();
    if !stdout.is_empty() {
        stdout.push(b'\n');
    }
    let mut stderr = reply.stderr.clone().into_bytes();
    if !stderr.is_empty() {
        stderr.push(b'\n');
    }
    let rendered = Rendered {
        stdout,
        stderr,
        exit: i32::from(reply.exit),
    };
    if ON_TIMEOUT.set(rendered).is_err() {
        return Err(std::io::Error::other("the hook's timer is armed already"));
    }
    // SAFETY: a zeroed `sigaction` is a valid value; the handler is an
    // `extern "C" fn(c_int)` that only calls async-signal-safe functions.
    let installed = unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_timeout as *const () as libc::sighandler_t;
        action.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(libc::SIGALRM, &action, std::ptr::null_mut())
    };
    if installed != 0 {
        return Err(std::io::Error::last_os_error());
    }
    set_timer(limit)
}

/// Moves the timer to `limit` from now (the hook waits for a person).
pub(super) fn extend(limit: Duration) -> std::io::Result<()> {
    set_timer(limit)
}

fn set_timer(limit: Duration) -> std::io::Result<()> {
    let timer = libc::itimerval {
        it_interval: libc::timeval {
            tv_sec: 0,
            tv_usec: 0,
        },
        it_value: libc::timeval {
            tv_sec: libc::time_t::try_from(limit.as_secs()).unwrap_or(libc::time_t::MAX),
            tv_usec: libc::suseconds_t::from(limit.subsec_micros()),
        },
    };
    // SAFETY: both pointers are valid for the call (the old value is not asked).
    if unsafe { libc::setitimer(libc::ITIMER_REAL, &timer, std::ptr::null_mut()) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

extern "C" fn on_timeout(_signal: libc::c_int) {
    if ANSWERED.swap(true, Ordering::SeqCst) {
        return;
    }
    let (stdout, stderr, exit) = match ON_TIMEOUT.get() {
        Some(r) => (&r.stdout[..], &r.stderr[..], r.exit),
        None => (
            &b""[..],
            &b"toolgate: the hook's time budget ran out\n"[..],
            2,
        ),
    };
    write_all(1, stdout);
    write_all(2, stderr);
    // SAFETY: `_exit` is async-signal-safe and never returns.
    unsafe { libc::_exit(exit) }
}

/// `write(2)` until all of `bytes` is written or it fails.
fn write_all(fd: libc::c_int, mut bytes: &[u8]) {
    while !bytes.is_empty() {
        // SAFETY: the pointer and length describe `bytes`, alive for the call.
        let n = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
        match usize::try_from(n) {
            Ok(n) if n > 0 => bytes = &bytes[n.min(bytes.len())..],
            _ if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted => {}
            _ => return,
        }
    }
}
