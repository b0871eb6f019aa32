//! Opening SQLite files safely: recognise our own files, initialise empty ones,
//! and refuse anything else without writing a byte to it.

use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, ErrorCode, OpenFlags, TransactionBehavior};

use crate::error::StoreError;

/// Sets SQLite up for a process that opens a connection or two once and
/// exits (a hook):
///
/// - no lookaside memory. Each connection otherwise sets aside 120 KiB of
///   slots for small allocations and writes every slot as it opens; in a
///   process this short, the page faults cost more than the slots save;
/// - no memory statistics, which SQLite otherwise keeps under a global mutex
///   taken for every allocation and free (a few percent of a hook's
///   instructions); toolgate reads none of them.
///
/// Takes effect only when called before the first connection is opened;
/// later, it changes nothing.
pub fn tune_for_short_process() {
    // SAFETY: `sqlite3_config` takes two ints for LOOKASIDE and one for
    // MEMSTATUS; before SQLite initialises it changes the default,
    // afterwards it returns SQLITE_MISUSE and changes nothing.
    let lookaside = unsafe {
        rusqlite::ffi::sqlite3_config(
            rusqlite::ffi::SQLITE_CONFIG_LOOKASIDE,
            0 as std::ffi::c_int,
            0 as std::ffi::c_int,
        )
    };
    // SAFETY: as above.
    let memstatus = unsafe {
        rusqlite::ffi::sqlite3_config(rusqlite::ffi::SQLITE_CONFIG_MEMSTATUS, 0 as std::ffi::c_int)
    };
    for rc in [lookaside, memstatus] {
        if rc != rusqlite::ffi::SQLITE_OK {
            tracing::debug!(
                rc,
                "SQLite already initialised; its settings left as they are"
            );
        }
    }
}

/// How long a connection waits for another process's write lock before failing.
pub(crate) const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// One kind of toolgate SQLite file.
#[derive(Clone, Copy, Debug)]
pub(crate) struct FileKind {
    /// For messages: `event log`, `state database`.
    pub name: &'static str,
    /// `PRAGMA application_id` marking our files of this kind.
    pub application_id: i32,
    /// The schema version this build writes (`PRAGMA user_version`).
    pub version: i64,
    /// Creates the schema version `version` in an empty file.
    pub schema: &'static str,
    /// The page size of a new file (only settable before the first table).
    pub page_size: u32,
    /// `upgrades[i]` brings a file from version `i + 1` to `i + 2`; a file
    /// opened for writing is brought to `version` first.
    pub upgrades: &'static [&'static str],
}

/// Whether a connection may create and initialise the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Access {
    /// Create the file if missing, initialise an empty one, use WAL.
    ReadWrite,
    /// The file must exist and already be ours; nothing is written.
    ReadOnly,
}

/// Opens `path` as a file of `kind`. A file that is not SQLite, is another
/// program's database, or is too new is an error, and is left untouched.
pub(crate) fn open(path: &Path, kind: FileKind, access: Access) -> Result<Connection, StoreError> {
    let flags = match access {
        Access::ReadWrite => OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE,
        Access::ReadOnly => {
            if !path.exists() {
                return Err(StoreError::Missing(path.to_path_buf()));
            }
            OpenFlags::SQLITE_OPEN_READ_ONLY
        }
    } | OpenFlags::SQLITE_OPEN_NO_MUTEX
        | OpenFlags::SQLITE_OPEN_URI;
    let conn = Connection::open_with_flags(path, flags)
        .map_err(StoreError::sqlite(format!("opening {}", path.display())))?;
    conn.busy_timeout(BUSY_TIMEOUT)
        .map_err(StoreError::sqlite("setting the busy timeout"))?;

    // Reading the header writes nothing; garbage fails here with "not a database".
    let state = read_state(&conn, path, kind)?;
    match state {
        State::Ours(found) if found < kind.version && access == Access::ReadWrite => {
            upgrade(&conn, path, kind)?
        }
        State::Ours(_) => {}
        State::Empty if access == Access::ReadOnly => {
            return Err(not_ours(path, kind, "the file is an empty database"));
        }
        State::Empty => {
            // Outside a transaction, before any table exists; ignored otherwise.
            conn.execute_batch(&format!("PRAGMA page_size = {}", kind.page_size))
                .map_err(StoreError::sqlite("setting the page size"))?;
            initialise(&conn, path, kind)?
        }
    }
    if access == Access::ReadWrite {
        let mode: String = conn
            .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
            .map_err(StoreError::sqlite("switching to WAL mode"))?;
        if !mode.eq_ignore_ascii_case("wal") {
            tracing::warn!(path = %path.display(), mode, "SQLite refused WAL mode");
        }
    }
    Ok(conn)
}

enum State {
    /// Ours, at this schema version.
    Ours(i64),
    Empty,
}

fn read_state(conn: &Connection, path: &Path, kind: FileKind) -> Result<State, StoreError> {
    let header = conn
        .query_row("PRAGMA application_id", [], |r| r.get::<_, i32>(0))
        .and_then(|app| {
            let version = conn.query_row("PRAGMA user_version", [], |r| r.get::<_, i64>(0))?;
            // Our own file needs no count: each short process (a hook) would
            // prepare and run one more statement for nothing.
            let objects = if app == kind.application_id {
                0
            } else {
                conn.query_row("SELECT count(*) FROM sqlite_master", [], |r| {
                    r.get::<_, i64>(0)
                })?
            };
            Ok((app, version, objects))
        });
    let (app, version, objects) = match header {
        Ok(h) => h,
        Err(e) => {
            return Err(match e.sqlite_error_code() {
                Some(ErrorCode::NotADatabase) => {
                    not_ours(path, kind, "it is not a SQLite database")
                }
                Some(ErrorCode::DatabaseCorrupt) => not_ours(path, kind, "the database is corrupt"),
                _ => StoreError::Sqlite {
                    context: format!("reading the header of {}", path.display()),
                    source: e,
                },
            });
        }
    };
    if app == kind.application_id {
        if version > kind.version {
            return Err(StoreError::NewerSchema {
                path: path.to_path_buf(),
                found: version,
                supported: kind.version,
            });
        }
        return Ok(State::Ours(version));
    }
    if app == 0 && objects == 0 {
        return Ok(State::Empty);
    }
    let detail = if app == 0 {
        format!("it is another program's SQLite database ({objects} schema objects)")
    } else {
        format!("it is a SQLite database with application id {app:#x}")
    };
    Err(not_ours(path, kind, &detail))
}

fn initialise(conn: &Connection, path: &Path, kind: FileKind) -> Result<(), StoreError> {
    // Immediate: two processes creating the same file serialise here, and the
    // second sees the first one's schema when it re-checks.
    let tx = rusqlite::Transaction::new_unchecked(conn, TransactionBehavior::Immediate).map_err(
        StoreError::sqlite(format!("initialising {}", path.display())),
    )?;
    if let State::Empty = read_state(&tx, path, kind)? {
        tx.execute_batch(kind.schema)
            .map_err(StoreError::sqlite(format!(
                "creating the schema in {}",
                path.display()
            )))?;
        tx.execute_batch(&format!(
            "PRAGMA application_id = {}; PRAGMA user_version = {};",
            kind.application_id, kind.version
        ))
        .map_err(StoreError::sqlite("marking the file"))?;
    }
    tx.commit().map_err(StoreError::sqlite(format!(
        "initialising {}",
        path.display()
    )))
}

/// Runs the upgrades from the file's version to `kind.version` in one
/// transaction (immediate, so two processes upgrading serialise, and the
/// second finds nothing left to do).
fn upgrade(conn: &Connection, path: &Path, kind: FileKind) -> Result<(), StoreError> {
    let tx = rusqlite::Transaction::new_unchecked(conn, TransactionBehavior::Immediate)
        .map_err(StoreError::sqlite(format!("upgrading {}", path.display())))?;
    let found = match read_state(&tx, path, kind)? {
        State::Ours(found) => found,
        State::Empty => return Err(not_ours(path, kind, "the file is an empty database")),
    };
    for version in found..kind.version {
        let script = usize::try_from(version - 1)
            .ok()
            .and_then(|i| kind.upgrades.get(i))
            .ok_or_else(|| {
                not_ours(
                    path,
                    kind,
                    &format!("no upgrade is known from schema version {version}"),
                )
            })?;
        tx.execute_batch(script)
            .map_err(StoreError::sqlite(format!(
                "upgrading {} from schema version {version}",
                path.display()
            )))?;
    }
    if found < kind.version {
        tx.execute_batch(&format!("PRAGMA user_version = {};", kind.version))
            .map_err(StoreError::sqlite("marking the file"))?;
        tracing::info!(path = %path.display(), from = found, to = kind.version, "upgraded the {}", kind.name);
    }
    tx.commit()
        .map_err(StoreError::sqlite(format!("upgrading {}", path.display())))
}

fn not_ours(path: &Path, kind: FileKind, detail: &str) -> StoreError {
    StoreError::NotOurs {
        path: path.to_path_buf(),
        expected: kind.name,
        detail: detail.to_string(),
    }
}
