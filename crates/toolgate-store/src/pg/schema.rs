//! The tables of the team store, created when a writer first connects.
//!
//! The event rows are those of the SQLite log (the same columns, the same
//! hash), plus three columns PostgreSQL computes from the payload for the
//! `--person`, `--machine` and `--agent` filters; the hash covers the payload,
//! so they are not part of the chain.

use postgres::Client;

/// The schema version this build writes (in `toolgate_meta`).
pub(crate) const SCHEMA_VERSION: i64 = 1;

/// Any key: only toolgate's schema creation takes this advisory lock.
const SCHEMA_LOCK: i64 = 0x5447_5047_5343_484d; // "TGPGSCHM"

const CREATE: &str = "
    CREATE TABLE IF NOT EXISTS toolgate_meta (
        key   TEXT PRIMARY KEY,
        value TEXT NOT NULL
    );
    CREATE TABLE IF NOT EXISTS toolgate_events (
        seq        BIGINT PRIMARY KEY,
        ts_ms      BIGINT NOT NULL,
        kind       TEXT NOT NULL,
        session_id TEXT NOT NULL,
        call_id    TEXT NOT NULL,
        payload    TEXT NOT NULL,
        prev_hash  TEXT NOT NULL,
        hash       TEXT NOT NULL,
        person     TEXT GENERATED ALWAYS AS (payload::jsonb ->> 'person') STORED,
        machine    TEXT GENERATED ALWAYS AS (payload::jsonb ->> 'machine') STORED,
        agent      TEXT GENERATED ALWAYS AS (payload::jsonb ->> 'agent') STORED
    );
    CREATE INDEX IF NOT EXISTS toolgate_events_by_session ON toolgate_events (session_id, seq);
    CREATE INDEX IF NOT EXISTS toolgate_events_by_call ON toolgate_events (call_id);
    CREATE INDEX IF NOT EXISTS toolgate_events_by_person ON toolgate_events (person, seq);
    CREATE INDEX IF NOT EXISTS toolgate_events_by_machine ON toolgate_events (machine, seq);
    CREATE TABLE IF NOT EXISTS toolgate_log_head (
        id   INTEGER PRIMARY KEY CHECK (id = 1),
        seq  BIGINT NOT NULL,
        hash TEXT NOT NULL
    );
    INSERT INTO toolgate_log_head (id, seq, hash)
        VALUES (1, 0, '0000000000000000000000000000000000000000000000000000000000000000')
        ON CONFLICT (id) DO NOTHING;
    CREATE TABLE IF NOT EXISTS toolgate_log_formats (
        first_seq BIGINT PRIMARY KEY,
        format    INTEGER NOT NULL
    );
    INSERT INTO toolgate_log_formats (first_seq, format) VALUES (1, 2)
        ON CONFLICT (first_seq) DO NOTHING;
    CREATE TABLE IF NOT EXISTS toolgate_approvals (
        id          BIGSERIAL PRIMARY KEY,
        project     TEXT NOT NULL,
        action      TEXT NOT NULL,
        pattern     TEXT NOT NULL,
        created_ms  BIGINT NOT NULL,
        approved_by TEXT NOT NULL,
        machine     TEXT NOT NULL,
        UNIQUE (project, action, pattern)
    );
";

/// Creates the tables that are missing, once per database (an advisory lock
/// keeps two processes from racing), and refuses a schema from a newer
/// toolgate.
pub(crate) fn ensure(client: &mut Client) -> Result<(), postgres::Error> {
    let found = version(client)?;
    if found == Some(SCHEMA_VERSION) {
        return Ok(());
    }
    let mut tx = client.transaction()?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&SCHEMA_LOCK])?;
    tx.batch_execute(CREATE)?;
    tx.execute(
        "INSERT INTO toolgate_meta (key, value) VALUES ('schema_version', $1)
         ON CONFLICT (key) DO NOTHING",
        &[&SCHEMA_VERSION.to_string()],
    )?;
    tx.commit()
}

/// The schema version recorded in the database, if the tables exist.
pub(crate) fn version(client: &mut Client) -> Result<Option<i64>, postgres::Error> {
    let exists: bool = client
        .query_one("SELECT to_regclass('toolgate_meta') IS NOT NULL", &[])?
        .get(0);
    if !exists {
        return Ok(None);
    }
    let row = client.query_opt(
        "SELECT value FROM toolgate_meta WHERE key = 'schema_version'",
        &[],
    )?;
    Ok(row.and_then(|r| r.get::<_, String>(0).parse().ok()))
}
