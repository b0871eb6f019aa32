//! Spans of the calls that agents' hooks answer.
//!
//! A hook process lives for one call and must answer within a couple of
//! milliseconds, so it sends nothing over the network: it records its events
//! in the audit log as always, and makes sure an exporter is running — a
//! detached `toolgate telemetry export` process that reads the hook events
//! back from the log, builds each call's `execute_tool` span from them (as
//! [`Telemetry::observe_hook_event`] says), sends them in batches, and exits
//! once the log has been quiet for [`DEFAULT_IDLE`]. A call still open then
//! (its outcome not reported by the agent) is sent as not reported; an
//! outcome reported after that has no span left to end, and stays in the
//! audit log only.
//!
//! At most one exporter runs per data directory: it holds an exclusive lock
//! on `telemetry-export.lock` for as long as it runs, and a hook only asks
//! whether the lock is held ([`exporter_running`]); the file says the
//! exporter's process id. Where it stopped reading
//! is kept in `telemetry-cursor` (the last seq it went past), so a later
//! exporter picks up there. Calls served by `toolgate mcp`, `serve` and
//! `call` are exported by those processes themselves, and are passed over.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use toolgate_core::Event;
use toolgate_core::event_query::{EventFilter, EventQuery, QueryError};

use super::Telemetry;
use crate::DataDir;

/// The lock a running exporter holds.
pub const LOCK_FILE: &str = "telemetry-export.lock";
/// The last seq an exporter went past.
pub const CURSOR_FILE: &str = "telemetry-cursor";

/// A hook call's span is ended as not reported this long after its last
/// event, if the agent sends no outcome.
pub const UNREPORTED_AFTER: Duration = Duration::from_secs(600);
/// How long an exporter a hook started waits on a quiet log before it
/// exits (`toolgate telemetry export --until-idle`).
pub const DEFAULT_IDLE: Duration = Duration::from_secs(120);
/// Without a cursor, an exporter starts with the hook calls of this long ago.
const FIRST_LOOK_BACK: Duration = Duration::from_secs(600);
/// Events read from the log at a time.
const BATCH: usize = 512;
/// How often a quiet log is read again.
const POLL: Duration = Duration::from_millis(250);

/// What went wrong running an exporter.
#[derive(Debug, thiserror::Error)]
pub enum HookExportError {
    /// The lock or cursor file cannot be used.
    #[error("{what} {}", path.display())]
    File {
        /// What was being done.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The audit log cannot be read.
    #[error("cannot read the audit log")]
    Log(#[source] QueryError),
}

/// How an exporter run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExportRun {
    /// Another exporter holds the lock; this one did nothing.
    AlreadyRunning,
    /// Read the log up to `cursor`, and ended `spans` spans.
    Done {
        /// The last seq read.
        cursor: u64,
        /// Spans ended (one per hook call), sent or counted as undelivered.
        spans: u64,
    },
}

fn whole_file(kind: libc::c_short) -> libc::flock {
    // SAFETY: `flock` is plain data; all-zero is a valid value.
    let mut lock: libc::flock = unsafe { std::mem::zeroed() };
    lock.l_type = kind;
    lock.l_whence = libc::SEEK_SET as libc::c_short;
    lock
}

/// Whether an exporter is running for `data`. Takes no lock: it asks
/// whether one would conflict.
pub fn exporter_running(data: &DataDir) -> bool {
    let Ok(file) = File::open(data.root().join(LOCK_FILE)) else {
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

/// The `toolgate` program to start the exporter with: this program when it
/// is `toolgate`, else the one installed beside it (`toolgate-hook`'s).
fn toolgate_program() -> Option<PathBuf> {
    let me = std::env::current_exe().ok()?;
    if me.file_name().is_some_and(|n| n == "toolgate") {
        return Some(me);
    }
    let beside = me.parent()?.join("toolgate");
    beside.is_file().then_some(beside)
}

/// Starts an exporter for `data` unless one is running; `config` are the
/// `--config` files the hook read, so the exporter reads the same
/// `[telemetry]` and `[store]`. Never waits for it, and never fails the
/// hook: what goes wrong is logged.
pub fn wake_exporter(data: &DataDir, config: &[PathBuf]) {
    if exporter_running(data) {
        return;
    }
    let Some(program) = toolgate_program() else {
        tracing::warn!("no `toolgate` program beside this one: hook calls are not exported");
        return;
    };
    let mut command = Command::new(program);
    command
        .arg("--data-dir")
        .arg(data.root())
        .args(["telemetry", "export", "--until-idle"])
        .arg(DEFAULT_IDLE.as_secs().to_string());
    for file in config {
        command.arg("--config").arg(file);
    }
    // Nothing of the hook's: the agent reads the hook's stdout to its end,
    // and must not wait for the exporter.
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let started = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    if let Err(e) = started {
        tracing::warn!("cannot start the span exporter: {e}");
    }
    // Not waited for: it outlives the hook, and init reaps it.
}

/// The exclusive lock of a running exporter, held until dropped.
struct Held {
    _file: File,
}

fn take_lock(data: &DataDir) -> Result<Option<Held>, HookExportError> {
    let path = data.root().join(LOCK_FILE);
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(|source| HookExportError::File {
            what: "cannot open the exporter's lock",
            path,
            source,
        })?;
    let lock = whole_file(libc::F_WRLCK as libc::c_short);
    // SAFETY: the descriptor is open for the call; `lock` is valid.
    if unsafe { libc::fcntl(file.as_raw_fd(), libc::F_SETLK, &lock) } != 0 {
        return Ok(None);
    }
    // Who holds it, for a person looking (the lock itself is what counts).
    let mut file = file;
    let said = file
        .set_len(0)
        .and_then(|()| writeln!(file, "{}", std::process::id()));
    if let Err(e) = said {
        tracing::debug!("cannot write the exporter's pid into its lock file: {e}");
    }
    Ok(Some(Held { _file: file }))
}

fn read_cursor(data: &DataDir) -> Option<u64> {
    std::fs::read_to_string(data.root().join(CURSOR_FILE))
        .ok()?
        .trim()
        .parse()
        .ok()
}

fn write_cursor(data: &DataDir, seq: u64) -> Result<(), HookExportError> {
    let path = data.root().join(CURSOR_FILE);
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, format!("{seq}\n"))
        .and_then(|()| std::fs::rename(&tmp, &path))
        .map_err(|source| HookExportError::File {
            what: "cannot record where span export stopped in",
            path,
            source,
        })
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

fn ms(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// Whether `e` was recorded by an agent's hook.
fn from_a_hook(e: &Event) -> bool {
    e.payload
        .extra
        .as_ref()
        .and_then(|x| x.get("hook"))
        .and_then(serde_json::Value::as_bool)
        == Some(true)
}

/// Where a first exporter starts: just before the oldest event of the
/// last [`FIRST_LOOK_BACK`], so a person who turns telemetry on sees the
/// calls from then on, not the whole history.
fn first_cursor(log: &dyn EventQuery, machine: Option<&str>) -> Result<u64, QueryError> {
    let since = now_ms() - ms(FIRST_LOOK_BACK);
    let recent = log.query(&EventFilter {
        machine: machine.map(str::to_string),
        limit: Some(BATCH),
        tail: true,
        ..EventFilter::default()
    })?;
    let first_recent = recent.iter().find(|s| s.event.ts_ms >= since);
    Ok(match (first_recent, recent.last()) {
        (Some(s), _) => s.seq.saturating_sub(1),
        (None, Some(last)) => last.seq,
        (None, None) => 0,
    })
}

/// Reads `log` (the events of `machine` only, for a team's database) and
/// exports the spans of its hook calls through `telemetry`, saving where
/// it stopped in `data`. Runs until the log has had nothing new for `idle`
/// (with `None`: until it has read what is there now), then ends every
/// call still open as not reported.
pub fn export_hook_calls(
    data: &DataDir,
    log: &dyn EventQuery,
    machine: Option<&str>,
    telemetry: &Arc<Telemetry>,
    idle: Option<Duration>,
) -> Result<ExportRun, HookExportError> {
    let Some(_held) = take_lock(data)? else {
        return Ok(ExportRun::AlreadyRunning);
    };
    let mut cursor = match read_cursor(data) {
        Some(c) => c,
        None => match first_cursor(log, machine) {
            Ok(c) => c,
            Err(QueryError::NoLog(_)) => 0,
            Err(e) => return Err(HookExportError::Log(e)),
        },
    };
    let ended_before = telemetry.spans_ended();
    let mut quiet_since = Instant::now();
    loop {
        let events = match log.query(&EventFilter {
            machine: machine.map(str::to_string),
            after_seq: Some(cursor),
            limit: Some(BATCH),
            ..EventFilter::default()
        }) {
            Ok(events) => events,
            // The first hook of a data directory may start the exporter
            // before a log exists: nothing to read yet.
            Err(QueryError::NoLog(_)) => Vec::new(),
            Err(e) => return Err(HookExportError::Log(e)),
        };
        let read = events.len();
        for stored in &events {
            if from_a_hook(&stored.event) {
                telemetry.observe_hook_event(&stored.event);
            }
            cursor = stored.seq;
        }
        if read > 0 {
            write_cursor(data, cursor)?;
            quiet_since = Instant::now();
        }
        telemetry.end_unreported(Some(now_ms() - ms(UNREPORTED_AFTER)));
        if read == BATCH {
            continue;
        }
        if idle.is_none_or(|idle| quiet_since.elapsed() >= idle) {
            break;
        }
        std::thread::sleep(POLL);
    }
    telemetry.end_unreported(None);
    telemetry.flush(Duration::from_secs(2));
    Ok(ExportRun::Done {
        cursor,
        spans: telemetry.spans_ended() - ended_before,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_events_a_hook_recorded_are_taken_for_hook_calls() {
        let mut e = Event::now(
            toolgate_core::EventKind::PermissionResolved,
            "s",
            "c",
            toolgate_core::EventPayload::default(),
        );
        assert!(!from_a_hook(&e));
        e.payload.extra = Some(serde_json::json!({"hook": false}));
        assert!(!from_a_hook(&e));
        e.payload.extra = Some(serde_json::json!({"hook": "yes"}));
        assert!(!from_a_hook(&e));
        e.payload.extra = Some(serde_json::json!({"hook": true, "agent": "codex"}));
        assert!(from_a_hook(&e));
    }

    #[test]
    fn a_cursor_that_is_not_a_number_is_taken_for_none() {
        let dir = tempfile::tempdir().unwrap();
        let data = DataDir::locate(Some(dir.path())).unwrap();
        assert_eq!(read_cursor(&data), None);
        std::fs::write(dir.path().join(CURSOR_FILE), "twelve\n").unwrap();
        assert_eq!(read_cursor(&data), None);
        write_cursor(&data, 42).unwrap();
        assert_eq!(read_cursor(&data), Some(42));
    }
}
