//! Where the database is ([`PgConfig`]) and a thread that owns one connection
//! to it ([`Worker`]), connecting again after the connection is lost.

use std::str::FromStr;
use std::sync::mpsc;
use std::sync::{Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use postgres::config::Host;
use std::collections::HashMap;

use postgres::{Client, NoTls, Statement};

use crate::error::StoreError;

/// How long connecting may take before the database counts as unreachable.
pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);

/// How long an unanswered request may wait on a live TCP connection before
/// the connection counts as dead (a server that went away without closing).
const TCP_USER_TIMEOUT: Duration = Duration::from_secs(10);

/// A PostgreSQL database to keep the log and approvals in: the URL
/// (`postgres://USER@HOST:PORT/DBNAME?…`, without a password) and the
/// password, read by the caller from a file or an environment variable.
#[derive(Clone)]
pub struct PgConfig {
    config: postgres::Config,
    target: String,
}

impl std::fmt::Debug for PgConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the password.
        f.debug_struct("PgConfig")
            .field("target", &self.target)
            .finish_non_exhaustive()
    }
}

impl PgConfig {
    /// Parses `url`. A URL that is not `postgres://` or `postgresql://`, that
    /// does not parse, or that holds a password is refused (a password goes
    /// in `password`, which the caller read from a file or a variable).
    ///
    /// ```
    /// use toolgate_store::PgConfig;
    /// let c = PgConfig::parse("postgres://tg@db.example:5433/audit", None).unwrap();
    /// assert_eq!(c.target(), "postgres://tg@db.example:5433/audit");
    /// let e = PgConfig::parse("postgres://tg:hunter2@db/audit", None).unwrap_err();
    /// assert!(e.to_string().contains("password"), "{e}");
    /// assert!(!e.to_string().contains("hunter2"), "{e}");
    /// ```
    pub fn parse(url: &str, password: Option<String>) -> Result<PgConfig, StoreError> {
        let url = url.trim();
        if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
            return Err(StoreError::PgConfig(format!(
                "the store URL {:?} is not a PostgreSQL URL; write it as postgres://USER@HOST:PORT/DATABASE",
                redact(url)
            )));
        }
        let mut config = postgres::Config::from_str(url).map_err(|e| {
            StoreError::PgConfig(format!(
                "the store URL {:?} cannot be read: {e}",
                redact(url)
            ))
        })?;
        if config.get_password().is_some() {
            return Err(StoreError::PgConfig(format!(
                "the store URL {:?} holds a password; config files are shared and copied, so \
                 put the password in a file readable only by you (password_file) or in an \
                 environment variable (password_env)",
                redact(url)
            )));
        }
        if config.get_hosts().is_empty() {
            return Err(StoreError::PgConfig(format!(
                "the store URL {:?} names no host",
                redact(url)
            )));
        }
        if config.get_dbname().is_none() {
            return Err(StoreError::PgConfig(format!(
                "the store URL {:?} names no database; add /DATABASE after the host",
                redact(url)
            )));
        }
        if let Some(p) = password {
            config.password(p);
        }
        if config.get_user().is_none() {
            if let Ok(user) = std::env::var("USER") {
                config.user(&user);
            }
        }
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        config.tcp_user_timeout(TCP_USER_TIMEOUT);
        config.keepalives(true);
        config.keepalives_idle(Duration::from_secs(30));
        if config.get_application_name().is_none() {
            config.application_name("toolgate");
        }
        let target = target_of(&config);
        Ok(PgConfig { config, target })
    }

    /// The database as a person reads it in messages: the URL without any
    /// password (`postgres://user@host:port/dbname`).
    pub fn target(&self) -> &str {
        &self.target
    }

    /// A new connection.
    pub(crate) fn connect(&self) -> Result<Client, postgres::Error> {
        self.config.connect(NoTls)
    }

    /// The error for `source`, naming this database and what was being done.
    pub(crate) fn error(&self, context: &str, source: postgres::Error) -> StoreError {
        let detail = match source.as_db_error() {
            Some(db) => format!("{} ({})", db.message(), db.code().code()),
            None => {
                let mut text = source.to_string();
                let mut cause = std::error::Error::source(&source);
                while let Some(c) = cause {
                    let more = c.to_string();
                    if !text.contains(&more) {
                        text.push_str(": ");
                        text.push_str(&more);
                    }
                    cause = c.source();
                }
                text
            }
        };
        StoreError::Postgres {
            context: context.to_string(),
            target: self.target.clone(),
            detail,
            source,
        }
    }
}

/// `url` with anything between `://` and `@` that has a `:` blanked.
fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    match rest.split_once('@') {
        Some((userinfo, host)) if userinfo.contains(':') => {
            let user = userinfo.split(':').next().unwrap_or_default();
            format!("{scheme}://{user}:***@{host}")
        }
        _ => url.to_string(),
    }
}

fn target_of(config: &postgres::Config) -> String {
    let user = config.get_user().unwrap_or_default();
    let ports = config.get_ports();
    let hosts: Vec<String> = config
        .get_hosts()
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let port = ports.get(i).or(ports.first()).copied().unwrap_or(5432);
            match h {
                Host::Tcp(name) => format!("{name}:{port}"),
                Host::Unix(dir) => format!("[{}]:{port}", dir.display()),
            }
        })
        .collect();
    let db = config.get_dbname().unwrap_or_default();
    if user.is_empty() {
        format!("postgres://{}/{db}", hosts.join(","))
    } else {
        format!("postgres://{user}@{}/{db}", hosts.join(","))
    }
}

/// A live connection and the statements prepared on it.
pub(crate) struct Session {
    /// The connection.
    pub client: Client,
    statements: HashMap<&'static str, Statement>,
}

impl Session {
    /// `sql` prepared on this connection (once; kept until it is lost).
    pub(crate) fn prepare(&mut self, sql: &'static str) -> Result<Statement, postgres::Error> {
        if let Some(s) = self.statements.get(sql) {
            return Ok(s.clone());
        }
        let statement = self.client.prepare(sql)?;
        self.statements.insert(sql, statement.clone());
        Ok(statement)
    }
}

/// One connection, made when first needed and again after it is lost.
pub(crate) struct Conn {
    config: PgConfig,
    session: Option<Session>,
    /// Create the tables when connecting (writers), or leave the database
    /// as it is (readers).
    create_schema: bool,
}

impl Conn {
    pub(crate) fn new(config: PgConfig, create_schema: bool) -> Conn {
        Conn {
            config,
            session: None,
            create_schema,
        }
    }

    pub(crate) fn config(&self) -> &PgConfig {
        &self.config
    }

    /// The connection, connecting (and creating the tables) if there is none.
    fn session(&mut self) -> Result<&mut Session, StoreError> {
        if self.session.as_ref().is_some_and(|s| s.client.is_closed()) {
            self.session = None;
        }
        match &mut self.session {
            Some(s) => Ok(s),
            slot @ None => {
                let mut client = self
                    .config
                    .connect()
                    .map_err(|e| self.config.error("cannot connect to the audit database", e))?;
                let found = super::schema::version(&mut client)
                    .map_err(|e| self.config.error("cannot read the toolgate tables of", e))?;
                if let Some(found) = found.filter(|v| *v > super::schema::SCHEMA_VERSION) {
                    return Err(StoreError::NewerSchema {
                        path: self.config.target.clone().into(),
                        found,
                        supported: super::schema::SCHEMA_VERSION,
                    });
                }
                if self.create_schema {
                    super::schema::ensure(&mut client).map_err(|e| {
                        self.config.error("cannot create the toolgate tables in", e)
                    })?;
                }
                tracing::debug!(database = %self.config.target, "connected");
                Ok(slot.insert(Session {
                    client,
                    statements: HashMap::new(),
                }))
            }
        }
    }

    /// Runs `f` on the connection. An error that is not the server's answer
    /// to a statement (the connection broke, timed out) drops the connection,
    /// so the next call connects again.
    pub(crate) fn run<R>(
        &mut self,
        context: &str,
        f: impl FnOnce(&mut Session) -> Result<R, postgres::Error>,
    ) -> Result<R, StoreError> {
        let session = self.session()?;
        match f(session) {
            Ok(r) => Ok(r),
            Err(e) => {
                if e.as_db_error().is_none() || session.client.is_closed() {
                    self.session = None;
                }
                Err(self.config.error(context, e))
            }
        }
    }
}

type Job = Box<dyn FnOnce(&mut Conn) + Send>;

/// A thread that owns a [`Conn`] and runs what it is sent, one at a time:
/// the synchronous client never runs on a caller's (possibly async) thread.
pub(crate) struct Worker {
    jobs: Mutex<Option<mpsc::Sender<Job>>>,
    thread: Mutex<Option<JoinHandle<()>>>,
    target: String,
}

impl std::fmt::Debug for Worker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Worker")
            .field("target", &self.target)
            .finish_non_exhaustive()
    }
}

impl Worker {
    /// Starts the thread; it connects on the first job.
    pub(crate) fn start(
        name: &str,
        config: PgConfig,
        create_schema: bool,
    ) -> Result<Worker, StoreError> {
        let (tx, rx) = mpsc::channel::<Job>();
        let target = config.target().to_string();
        let mut conn = Conn::new(config, create_schema);
        let thread = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                while let Ok(job) = rx.recv() {
                    job(&mut conn);
                }
            })
            .map_err(|source| StoreError::Io {
                context: "starting a thread for",
                path: target.clone().into(),
                source,
            })?;
        Ok(Worker {
            jobs: Mutex::new(Some(tx)),
            thread: Mutex::new(Some(thread)),
            target,
        })
    }

    /// Runs `f` on the worker's connection and waits for its answer.
    pub(crate) fn call<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Conn) -> Result<R, StoreError> + Send + 'static,
    ) -> Result<R, StoreError> {
        let (tx, rx) = mpsc::channel();
        let job: Job = Box::new(move |conn| {
            let _ = tx.send(f(conn));
        });
        let sent = self
            .jobs
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
            .is_some_and(|jobs| jobs.send(job).is_ok());
        if !sent {
            return Err(StoreError::WriterStopped);
        }
        rx.recv().map_err(|_| StoreError::WriterStopped)?
    }

    /// Stops the thread after the jobs already sent.
    pub(crate) fn stop(&self) {
        drop(
            self.jobs
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take(),
        );
        let thread = self
            .thread
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(t) = thread {
            let _ = t.join();
        }
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.stop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_checked_and_passwords_never_shown() {
        let e = |u: &str| PgConfig::parse(u, None).unwrap_err().to_string();
        assert!(e("mysql://x@h/db").contains("not a PostgreSQL URL"));
        assert!(e("host=h dbname=x").contains("not a PostgreSQL URL"));
        let inline = e("postgresql://tg:s3cret@h:5432/db");
        assert!(inline.contains("password_file"), "{inline}");
        assert!(!inline.contains("s3cret"), "{inline}");
        assert!(e("postgres://tg@h").contains("no database"));
        assert!(e("postgres://tg@h:notaport/db").contains("cannot be read"));
        let ok = PgConfig::parse("postgres://tg@h/db", Some("pw".into())).unwrap();
        assert_eq!(ok.target(), "postgres://tg@h:5432/db");
        assert!(!format!("{ok:?}").contains("pw\""));
    }
}
