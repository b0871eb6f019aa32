//! The hash-chained event log in PostgreSQL: group commits on a writer
//! thread, each moving the head row from the value it chained after (in one
//! statement), or locking the head row first (see [`AppendMode`]).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;

use postgres::types::ToSql;
use rusqlite::types::Value as SqlValue;
use tokio::sync::oneshot;
use toolgate_core::event_query::{EventFilter, EventQuery, QueryError, StoredEvent, VerifyReport};
use toolgate_core::{Event, EventAck, EventSink, Failure, SinkError};

use super::conn::{Conn, PgConfig, Session, Worker};
use crate::canonical::LogFormat;
use crate::error::StoreError;
use crate::log::LogStats;
use crate::log::formats::FormatRuns;
use crate::log::reader::RawEvent;
use crate::log::writer::Batch;

/// Rows read per round trip when walking the chain.
const VERIFY_PAGE: i64 = 10_000;

const HEAD_FOR_UPDATE: &str = "SELECT seq, hash FROM toolgate_log_head WHERE id = 1 FOR UPDATE";
const INSERT_EVENTS: &str = "INSERT INTO toolgate_events
    (seq, ts_ms, kind, session_id, call_id, payload, prev_hash, hash)
    SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[], $5::text[],
                         $6::text[], $7::text[], $8::text[])";
const UPDATE_HEAD: &str = "UPDATE toolgate_log_head SET seq = $1, hash = $2 WHERE id = 1";
/// One statement (autocommit): moves the head from ($11, $12) to ($9, $10)
/// and inserts the rows, or, when the head is no longer ($11, $12), neither.
const APPEND_IF_HEAD: &str = "WITH moved AS (
        UPDATE toolgate_log_head SET seq = $9, hash = $10
        WHERE id = 1 AND seq = $11 AND hash = $12
        RETURNING 1)
    INSERT INTO toolgate_events
        (seq, ts_ms, kind, session_id, call_id, payload, prev_hash, hash)
    SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[], $5::text[],
                         $6::text[], $7::text[], $8::text[])
    WHERE EXISTS (SELECT 1 FROM moved)";
const EVENT_COLUMNS: &str = "seq, ts_ms, kind, session_id, call_id, payload, prev_hash, hash";

enum Message {
    Wake,
    Flush(Sender<()>),
}

struct Shared {
    queue: Mutex<VecDeque<Batch>>,
    wakes: Mutex<Option<Sender<Message>>>,
    events: AtomicU64,
    commits: AtomicU64,
}

impl Shared {
    fn queue(&self) -> MutexGuard<'_, VecDeque<Batch>> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn tell(&self, m: Message) -> bool {
        self.wakes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
            .is_some_and(|w| w.send(m).is_ok())
    }

    /// Whole batches from the front (as the SQLite log takes them).
    fn take(&self) -> Vec<Batch> {
        crate::log::writer::take_batches(&mut self.queue())
    }
}

/// The audit log in a PostgreSQL database shared by many processes.
///
/// `submit` queues; the writer thread commits whatever is queued in one
/// transaction that locks the head row, and only then resolves the acks. When
/// the commit fails (the database is down, the connection broke) every ack of
/// that transaction is an error naming the database, and the next batch
/// connects again. Queries and `verify` run on a second connection of their
/// own. Dropping (or [`close`](Self::close)) commits what was submitted.
pub struct PgEventLog {
    config: PgConfig,
    shared: Arc<Shared>,
    writer: Option<JoinHandle<()>>,
    reader: Worker,
}

impl std::fmt::Debug for PgEventLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgEventLog")
            .field("target", &self.config.target())
            .finish_non_exhaustive()
    }
}

impl PgEventLog {
    /// Starts the writer and reader threads. Nothing connects until the
    /// first event or query: an unreachable database shows up there, as an
    /// error naming it. [`PgEventLog::check`] connects now.
    pub fn open(config: PgConfig) -> Result<PgEventLog, StoreError> {
        PgEventLog::open_with(config, AppendMode::Adaptive)
    }

    /// [`PgEventLog::open`] with the way appends take the head (for
    /// measuring one against the other).
    pub fn open_with(config: PgConfig, mode: AppendMode) -> Result<PgEventLog, StoreError> {
        let (tx, rx) = mpsc::channel();
        let shared = Arc::new(Shared {
            queue: Mutex::new(VecDeque::new()),
            wakes: Mutex::new(Some(tx)),
            events: AtomicU64::new(0),
            commits: AtomicU64::new(0),
        });
        let conn = Conn::new(config.clone(), true);
        let writer_shared = Arc::clone(&shared);
        let writer = std::thread::Builder::new()
            .name("tg-pg-writer".into())
            .spawn(move || run(writer_shared, rx, conn, mode))
            .map_err(|source| StoreError::Io {
                context: "starting the writer thread for",
                path: config.target().into(),
                source,
            })?;
        let reader = Worker::start("tg-pg-reader", config.clone(), false)?;
        Ok(PgEventLog {
            config,
            shared,
            writer: Some(writer),
            reader,
        })
    }

    /// Connects now (creating the tables if they are missing), so that a
    /// bad address, password or database is reported at start.
    pub fn check(&self) -> Result<(), StoreError> {
        let config = self.config.clone();
        self.reader.call(move |_| {
            let mut conn = Conn::new(config, true);
            conn.run("checking the audit database", |_| Ok(()))
        })
    }

    /// The database, for messages (no password).
    pub fn target(&self) -> &str {
        self.config.target()
    }

    /// Events and transactions committed by this instance so far.
    pub fn stats(&self) -> LogStats {
        LogStats {
            events: self.shared.events.load(Ordering::Relaxed),
            commits: self.shared.commits.load(Ordering::Relaxed),
            ..LogStats::default()
        }
    }

    /// The events matching `filter`, oldest first.
    pub fn query(&self, filter: &EventFilter) -> Result<Vec<StoredEvent>, StoreError> {
        let filter = filter.clone();
        self.reader.call(move |conn| query(conn, &filter))
    }

    /// The largest seq in the log (0 when empty).
    pub fn last_seq(&self) -> Result<u64, StoreError> {
        self.reader.call(|conn| {
            conn.run("reading the audit database", |s| {
                let seq: Option<i64> = s
                    .client
                    .query_one("SELECT max(seq) FROM toolgate_events", &[])?
                    .get(0);
                Ok(seq.map_or(0, |s| u64::try_from(s).unwrap_or(0)))
            })
        })
    }

    /// Walks the whole chain in one snapshot (writers may keep appending).
    pub fn verify(&self) -> Result<VerifyReport, StoreError> {
        self.reader.call(verify)
    }

    /// Blocks until every event submitted before this call is committed (or
    /// failed). Not from an async task; await the acks there.
    pub fn flush(&self) -> Result<(), StoreError> {
        let (tx, rx) = mpsc::channel();
        if !self.shared.tell(Message::Flush(tx)) {
            return Err(StoreError::WriterStopped);
        }
        rx.recv().map_err(|_| StoreError::WriterStopped)
    }

    /// Commits everything submitted and stops the threads.
    pub fn close(mut self) -> Result<(), StoreError> {
        self.shutdown()
    }

    fn shutdown(&mut self) -> Result<(), StoreError> {
        drop(
            self.shared
                .wakes
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take(),
        );
        self.reader.stop();
        match self.writer.take() {
            Some(h) => h.join().map_err(|_| StoreError::WriterStopped),
            None => Ok(()),
        }
    }

    fn submit_events(&self, events: Vec<Event>) -> EventAck {
        let pending = match events
            .into_iter()
            .map(crate::log::pending)
            .collect::<Result<Vec<_>, _>>()
        {
            Ok(p) => p,
            Err(e) => {
                let err = SinkError::Storage(Failure::caused(
                    "the event payload cannot be serialised",
                    e,
                ));
                return Box::pin(async move { Err(err) });
            }
        };
        let (ack, done) = oneshot::channel();
        self.shared.queue().push_back(Batch {
            events: pending,
            ack,
        });
        if !self.shared.tell(Message::Wake) {
            // Closed: whatever is queued is answered by the closing writer,
            // or here if it is gone already.
            return Box::pin(async { Err(SinkError::Closed) });
        }
        Box::pin(async move { done.await.unwrap_or(Err(SinkError::Closed)) })
    }
}

impl Drop for PgEventLog {
    fn drop(&mut self) {
        if let Err(e) = self.shutdown() {
            tracing::error!(database = %self.config.target(), error = %e, "the audit log writer failed on close");
        }
    }
}

impl EventSink for PgEventLog {
    fn submit(&self, event: Event) -> EventAck {
        self.submit_events(vec![event])
    }

    fn submit_batch(&self, events: Vec<Event>) -> EventAck {
        if events.is_empty() {
            return Box::pin(async { Ok(0) });
        }
        self.submit_events(events)
    }
}

fn failed(e: StoreError) -> QueryError {
    QueryError::Failed(Failure::of(e))
}

/// A missing table is a log nobody has written yet.
fn query_error(target: &str, e: StoreError) -> QueryError {
    if let StoreError::Postgres { source, .. } = &e {
        if source.code() == Some(&postgres::error::SqlState::UNDEFINED_TABLE) {
            return QueryError::NoLog(target.to_string());
        }
    }
    failed(e)
}

impl EventQuery for PgEventLog {
    fn query(&self, filter: &EventFilter) -> Result<Vec<StoredEvent>, QueryError> {
        PgEventLog::query(self, filter).map_err(|e| query_error(self.target(), e))
    }

    fn verify(&self) -> Result<VerifyReport, QueryError> {
        PgEventLog::verify(self).map_err(|e| query_error(self.target(), e))
    }
}

/// The writer thread: commits what is queued at each wake-up, until the log
/// is closed; then commits what is left.
fn run(shared: Arc<Shared>, wakes: Receiver<Message>, mut conn: Conn, mode: AppendMode) {
    let mut state = WriterState {
        mode,
        ..WriterState::default()
    };
    let mut flushes = Vec::new();
    while let Ok(first) = wakes.recv() {
        let mut note = |m: Message| {
            if let Message::Flush(f) = m {
                flushes.push(f);
            }
        };
        note(first);
        while let Ok(m) = wakes.try_recv() {
            note(m);
        }
        drain(&shared, &mut conn, &mut state);
        for f in flushes.drain(..) {
            let _ = f.send(());
        }
    }
    drain(&shared, &mut conn, &mut state);
}

fn drain(shared: &Shared, conn: &mut Conn, state: &mut WriterState) {
    loop {
        let taken = shared.take();
        if taken.is_empty() {
            return;
        }
        let count: usize = taken.iter().map(|b| b.events.len()).sum();
        match conn.run("appending events to the audit database", |s| {
            append(s, &taken, state)
        }) {
            Ok(first) => {
                shared.commits.fetch_add(1, Ordering::Relaxed);
                shared.events.fetch_add(count as u64, Ordering::Relaxed);
                let mut next = first;
                for b in taken {
                    next += b.events.len() as u64;
                    let _ = b.ack.send(Ok(next.saturating_sub(1)));
                }
            }
            Err(e) => {
                tracing::error!(error = %e, events = count, "audit database commit failed");
                let failure = Failure::new(format!(
                    "{count} event(s) were not recorded, so the step they describe does not go on: {e}"
                ))
                .because(e);
                for b in taken {
                    let _ = b.ack.send(Err(SinkError::Storage(failure.clone())));
                }
            }
        }
    }
}

/// The batches' rows chained after `(head_seq, head_hash)`, as the arrays
/// the insert takes.
struct Rows<'a> {
    seqs: Vec<i64>,
    ts: Vec<i64>,
    kinds: Vec<&'static str>,
    sessions: Vec<&'a str>,
    calls: Vec<&'a str>,
    payloads: Vec<&'a str>,
    prevs: Vec<String>,
    hashes: Vec<String>,
    /// The new head.
    last: (i64, String),
}

impl<'a> Rows<'a> {
    fn chain(batches: &'a [Batch], head_seq: i64, head_hash: &str) -> Rows<'a> {
        let n = batches.iter().map(|b| b.events.len()).sum();
        let mut rows = Rows {
            seqs: Vec::with_capacity(n),
            ts: Vec::with_capacity(n),
            kinds: Vec::with_capacity(n),
            sessions: Vec::with_capacity(n),
            calls: Vec::with_capacity(n),
            payloads: Vec::with_capacity(n),
            prevs: Vec::with_capacity(n),
            hashes: Vec::with_capacity(n),
            last: (head_seq, head_hash.to_string()),
        };
        let (mut seq, mut prev) = (head_seq, head_hash.to_string());
        for p in batches.iter().flat_map(|b| &b.events) {
            seq += 1;
            let hash = p.hash(seq, &prev);
            rows.seqs.push(seq);
            rows.ts.push(p.ts_ms);
            rows.kinds.push(p.kind);
            rows.sessions.push(p.session_id.as_str());
            rows.calls.push(p.call_id.as_str());
            rows.payloads.push(p.payload.as_str());
            rows.prevs.push(std::mem::replace(&mut prev, hash.clone()));
            rows.hashes.push(hash);
        }
        rows.last = (seq, prev);
        rows
    }
}

/// After another writer got to the head first, how many commits go straight
/// to the locked path (several writers at once: waiting in line for the
/// lock beats losing races).
const LOCKED_AFTER_A_MISS: u32 = 32;

/// How a writer appends.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AppendMode {
    /// In one statement when this writer was the last to append, else (and
    /// for a while after another writer got there first) under the head
    /// row's lock. The default.
    #[default]
    Adaptive,
    /// Always in a transaction that locks the head row first.
    Locked,
}

/// What a writer remembers between its commits.
#[derive(Default)]
struct WriterState {
    mode: AppendMode,
    /// The head this writer last committed.
    head: Option<(i64, String)>,
    /// Commits left that take the lock first.
    locked_left: u32,
}

/// Appends the batches after the head; returns the first seq.
///
/// When this writer was the last to append, optimistically, in one
/// statement and one round trip: the rows are chained after the head it
/// remembers, and the statement moves the head only if it is still there,
/// inserting the rows only if it did. When the head was elsewhere (another
/// writer appended), and for the next commits after such a miss, in a
/// transaction that locks the head row first, which cannot miss.
fn append(
    s: &mut Session,
    batches: &[Batch],
    state: &mut WriterState,
) -> Result<u64, postgres::Error> {
    let cached = state.head.take();
    if state.mode == AppendMode::Locked {
        return append_locked(s, batches, &mut state.head);
    }
    if state.locked_left > 0 {
        state.locked_left -= 1;
        return append_locked(s, batches, &mut state.head);
    }
    let Some((head_seq, head_hash)) = cached else {
        return append_locked(s, batches, &mut state.head);
    };
    let append = s.prepare(APPEND_IF_HEAD)?;
    let rows = Rows::chain(batches, head_seq, &head_hash);
    let inserted = s.client.execute(
        &append,
        &[
            &rows.seqs,
            &rows.ts,
            &rows.kinds,
            &rows.sessions,
            &rows.calls,
            &rows.payloads,
            &rows.prevs,
            &rows.hashes,
            &rows.last.0,
            &rows.last.1,
            &head_seq,
            &head_hash,
        ],
    )?;
    if inserted > 0 {
        state.head = Some(rows.last);
        return Ok(u64::try_from(head_seq + 1).unwrap_or(1));
    }
    state.locked_left = LOCKED_AFTER_A_MISS;
    append_locked(s, batches, &mut state.head)
}

/// Appends the batches in one transaction holding the head row's lock.
fn append_locked(
    s: &mut Session,
    batches: &[Batch],
    head: &mut Option<(i64, String)>,
) -> Result<u64, postgres::Error> {
    let lock = s.prepare(HEAD_FOR_UPDATE)?;
    let insert = s.prepare(INSERT_EVENTS)?;
    let update = s.prepare(UPDATE_HEAD)?;
    let mut tx = s.client.transaction()?;
    let row = tx.query_one(&lock, &[])?;
    let head_seq: i64 = row.get(0);
    let head_hash: String = row.get(1);
    let rows = Rows::chain(batches, head_seq, &head_hash);
    tx.execute(
        &insert,
        &[
            &rows.seqs,
            &rows.ts,
            &rows.kinds,
            &rows.sessions,
            &rows.calls,
            &rows.payloads,
            &rows.prevs,
            &rows.hashes,
        ],
    )?;
    tx.execute(&update, &[&rows.last.0, &rows.last.1])?;
    tx.commit()?;
    *head = Some(rows.last);
    Ok(u64::try_from(head_seq + 1).unwrap_or(1))
}

fn raw(row: &postgres::Row) -> RawEvent {
    RawEvent {
        seq: row.get(0),
        ts_ms: SqlValue::Integer(row.get(1)),
        kind: SqlValue::Text(row.get(2)),
        session_id: SqlValue::Text(row.get(3)),
        call_id: SqlValue::Text(row.get(4)),
        payload: SqlValue::Text(row.get(5)),
        prev_hash: SqlValue::Text(row.get(6)),
        hash: SqlValue::Text(row.get(7)),
        damage: None,
    }
}

fn query(conn: &mut Conn, filter: &EventFilter) -> Result<Vec<StoredEvent>, StoreError> {
    let after = i64::try_from(filter.after_seq.unwrap_or(0)).unwrap_or(i64::MAX);
    let mut sql = format!("SELECT {EVENT_COLUMNS} FROM toolgate_events WHERE seq > $1");
    let mut texts: Vec<String> = Vec::new();
    for (column, value) in [
        ("session_id", &filter.session),
        ("call_id", &filter.call_id),
        ("person", &filter.person),
        ("machine", &filter.machine),
        ("agent", &filter.agent),
    ] {
        if let Some(v) = value {
            texts.push(v.clone());
            sql.push_str(&format!(" AND {column} = ${}", texts.len() + 1));
        }
    }
    if let Some(kind) = filter.kind {
        texts.push(kind.as_str().to_string());
        sql.push_str(&format!(" AND kind = ${}", texts.len() + 1));
    }
    let tail = filter.tail && filter.limit.is_some();
    sql.push_str(if tail {
        " ORDER BY seq DESC"
    } else {
        " ORDER BY seq ASC"
    });
    let limit = filter.limit.map(|l| i64::try_from(l).unwrap_or(i64::MAX));
    if limit.is_some() {
        sql.push_str(&format!(" LIMIT ${}", texts.len() + 2));
    }
    let rows = conn.run("reading the audit database", |s| {
        let mut params: Vec<&(dyn ToSql + Sync)> = vec![&after];
        params.extend(texts.iter().map(|t| t as &(dyn ToSql + Sync)));
        if let Some(l) = &limit {
            params.push(l);
        }
        s.client.query(sql.as_str(), &params)
    })?;
    let mut out = rows
        .iter()
        .map(|r| raw(r).decode())
        .collect::<Result<Vec<_>, _>>()?;
    if tail {
        out.reverse();
    }
    Ok(out)
}

fn verify(conn: &mut Conn) -> Result<VerifyReport, StoreError> {
    let config = conn.config().clone();
    let mut walked: Option<Result<VerifyReport, StoreError>> = None;
    conn.run("verifying the audit database", |s| {
        let mut tx = s
            .client
            .build_transaction()
            .isolation_level(postgres::IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()?;
        let head = tx
            .query_opt("SELECT seq, hash FROM toolgate_log_head WHERE id = 1", &[])?
            .map(|r| (r.get::<_, i64>(0), r.get::<_, String>(1)));
        let mut runs = Vec::new();
        for r in tx.query(
            "SELECT first_seq, format FROM toolgate_log_formats ORDER BY first_seq",
            &[],
        )? {
            let (first_seq, number): (i64, i32) = (r.get(0), r.get(1));
            match LogFormat::from_number(i64::from(number)) {
                Some(f) => runs.push((first_seq, f)),
                None => {
                    walked = Some(Err(StoreError::UnknownLogFormat {
                        format: i64::from(number),
                        first_seq,
                    }));
                    return Ok(());
                }
            }
        }
        let formats = FormatRuns::from_runs(runs);
        let page = tx.prepare(&format!(
            "SELECT {EVENT_COLUMNS} FROM toolgate_events WHERE seq > $1 ORDER BY seq LIMIT $2"
        ))?;
        let pages = Pages {
            tx: &mut tx,
            page,
            buf: Vec::new().into_iter(),
            last: i64::MIN,
            done: false,
            config: &config,
        };
        walked = Some(crate::log::verify::walk(pages, head, &formats));
        tx.commit()
    })?;
    walked.unwrap_or(Err(StoreError::WriterStopped))
}

/// The event rows in seq order, a page per round trip.
struct Pages<'a, 't> {
    tx: &'a mut postgres::Transaction<'t>,
    page: postgres::Statement,
    buf: std::vec::IntoIter<RawEvent>,
    last: i64,
    done: bool,
    config: &'a PgConfig,
}

impl Iterator for Pages<'_, '_> {
    type Item = Result<RawEvent, StoreError>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(r) = self.buf.next() {
            return Some(Ok(r));
        }
        if self.done {
            return None;
        }
        match self.tx.query(&self.page, &[&self.last, &VERIFY_PAGE]) {
            Ok(rows) => {
                if (rows.len() as i64) < VERIFY_PAGE {
                    self.done = true;
                }
                let rows: Vec<RawEvent> = rows.iter().map(raw).collect();
                self.last = rows.last().map_or(self.last, |r| r.seq);
                self.buf = rows.into_iter();
                self.buf.next().map(Ok)
            }
            Err(e) => {
                self.done = true;
                Some(Err(self.config.error("reading the audit database", e)))
            }
        }
    }
}
