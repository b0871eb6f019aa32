//! Beyond one machine: where the audit log and the saved approvals live
//! (`[store]`: the data directory's SQLite files, or one PostgreSQL database
//! a team shares) and who is who (`[identity]`: the person and the machine
//! every event and approval carries).
//!
//! Both sections are read from the user config, the `--config` files and the
//! managed config (later wins, the managed layer last), never from a
//! project's `.toolgate/config.toml` (the policy's parser refuses them there).
//!
//! ```toml
//! [store]
//! url = "postgres://toolgate@db.internal:5432/toolgate"
//! password_file = "~/.config/toolgate/db-password"   # or: password_env = "TOOLGATE_DB_PASSWORD"
//!
//! [identity]
//! person = "ada@example.com"      # default: the OS user and host, user@host
//! machine = "ada-laptop"          # default: the host name
//! ```

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Deserialize;
use toolgate_core::event_query::{EventFilter, EventQuery, QueryError, StoredEvent, VerifyReport};
use toolgate_core::{Event, EventAck, EventSink};
use toolgate_policy::approvals::ApprovalStore;
use toolgate_policy::policy::PolicySources;
use toolgate_store::{
    Durability, EventLog, PgApprovals, PgConfig, PgEventLog, SqliteApprovals, StoreError,
};

use crate::data_dir::DataDir;
use crate::error::BuildError;
use crate::telemetry::{Telemetry, TelemetrySettings};

/// What is wrong with `[store]` or `[identity]`, or with opening the store.
#[derive(Debug, thiserror::Error)]
pub enum TeamError {
    /// A config file cannot be read.
    #[error("cannot read {}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A setting is wrong; the message names the file and the fix.
    #[error("{0}")]
    Invalid(String),
    /// The store refused the settings or could not be opened.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Who is behind the calls of this process, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Identity {
    /// The person (`[identity] person`, else `user@host`).
    pub person: String,
    /// The machine (`[identity] machine`, else the host name).
    pub machine: String,
}

impl Identity {
    /// The OS user and host: `user@host`, and the host name.
    pub fn from_os() -> Identity {
        let host = host_name();
        let user = std::env::var("USER")
            .or_else(|_| std::env::var("LOGNAME"))
            .ok()
            .filter(|u| !u.is_empty())
            .or_else(user_from_passwd)
            .unwrap_or_else(|| "unknown".into());
        Identity {
            person: format!("{user}@{host}"),
            machine: host,
        }
    }
}

/// This process's user name from `/etc/passwd` (when `USER` is not set).
fn user_from_passwd() -> Option<String> {
    // SAFETY: `geteuid` takes nothing and always succeeds.
    let uid = unsafe { libc::geteuid() }.to_string();
    let passwd = std::fs::read_to_string("/etc/passwd").ok()?;
    passwd.lines().find_map(|line| {
        let mut fields = line.split(':');
        let name = fields.next()?;
        (fields.nth(1)? == uid).then(|| name.to_string())
    })
}

/// The host name: the kernel's (`gethostname`, one system call where
/// reading `/proc/sys/kernel/hostname` took five and a walk of `/proc`),
/// else `/etc/hostname`, else `HOSTNAME`.
fn host_name() -> String {
    kernel_host_name()
        .or_else(|| std::fs::read_to_string("/etc/hostname").ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok().filter(|h| !h.is_empty()))
        .unwrap_or_else(|| "unknown-host".into())
}

fn kernel_host_name() -> Option<String> {
    let mut name = [0u8; 256];
    // SAFETY: `name` is valid for writes of its length; `gethostname` writes
    // at most that many bytes.
    if unsafe { libc::gethostname(name.as_mut_ptr().cast(), name.len()) } != 0 {
        return None;
    }
    // Cut at the terminating NUL (absent when the name was truncated).
    let end = name.iter().position(|b| *b == 0).unwrap_or(name.len());
    String::from_utf8(name[..end].to_vec()).ok()
}

/// Where the audit log and the saved approvals live.
#[derive(Clone, Debug, Default)]
pub enum StoreChoice {
    /// SQLite files in the data directory (`audit.db`, `state.db`).
    #[default]
    Local,
    /// One PostgreSQL database shared by the team.
    Postgres {
        /// Where it is, with the password read.
        config: Box<PgConfig>,
        /// Where `[store]` was set (`file`), for messages.
        origin: String,
    },
}

/// `[store]` and `[identity]`, as the layers set them.
#[derive(Clone, Debug)]
pub struct TeamConfig {
    /// Where the log and approvals live.
    pub store: StoreChoice,
    /// Who and where.
    pub identity: Identity,
    /// `[telemetry]`: OTLP export of every call, when set (and not
    /// `enabled = false`).
    pub telemetry: Option<TelemetrySettings>,
}

#[derive(Debug, Default, Deserialize)]
struct Doc {
    store: Option<toml::Value>,
    identity: Option<toml::Value>,
    telemetry: Option<toml::Value>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTelemetry {
    enabled: Option<bool>,
    endpoint: Option<String>,
    include_arguments: Option<bool>,
    certificate: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStore {
    url: Option<String>,
    password_file: Option<String>,
    password_env: Option<String>,
    password: Option<toml::Value>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawIdentity {
    person: Option<String>,
    machine: Option<String>,
}

impl TeamConfig {
    /// Reads `[store]` and `[identity]` from the layers a team may set them
    /// in: the user config, the session (`--config`) files and the managed
    /// config, later winning. Missing files are skipped.
    pub fn load(sources: &PolicySources) -> Result<TeamConfig, TeamError> {
        let files = sources
            .user
            .iter()
            .chain(&sources.session_files)
            .chain(sources.managed.iter());
        let mut store: Option<(RawStore, PathBuf)> = None;
        let mut identity = RawIdentity::default();
        let mut telemetry: Option<TelemetrySettings> = None;
        for file in files {
            let text = match std::fs::read_to_string(file) {
                Ok(t) => t,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(source) => {
                    return Err(TeamError::Read {
                        path: file.clone(),
                        source,
                    });
                }
            };
            // Broken TOML is an error here too: never a silent fall back to
            // the local store.
            let doc: Doc = toml::from_str(&text).map_err(|e| {
                TeamError::Invalid(format!("{}: invalid TOML: {}", file.display(), e.message()))
            })?;
            if let Some(v) = doc.store {
                let raw: RawStore = v.try_into().map_err(|e: toml::de::Error| {
                    TeamError::Invalid(format!(
                        "{}: [store]: {} (the keys are url, password_file, password_env)",
                        file.display(),
                        e.message()
                    ))
                })?;
                store = Some((raw, file.clone()));
            }
            if let Some(v) = doc.identity {
                let raw: RawIdentity = v.try_into().map_err(|e: toml::de::Error| {
                    TeamError::Invalid(format!(
                        "{}: [identity]: {} (the keys are person and machine)",
                        file.display(),
                        e.message()
                    ))
                })?;
                identity.person = raw.person.or(identity.person);
                identity.machine = raw.machine.or(identity.machine);
            }
            if let Some(v) = doc.telemetry {
                let raw: RawTelemetry = v.try_into().map_err(|e: toml::de::Error| {
                    TeamError::Invalid(format!(
                        "{}: [telemetry]: {} (the keys are enabled, endpoint, include_arguments, certificate)",
                        file.display(),
                        e.message()
                    ))
                })?;
                telemetry = telemetry_settings(raw, file, &sources.home)?;
            }
        }
        let os = Identity::from_os();
        let identity = Identity {
            person: nonempty(identity.person, "person")?.unwrap_or(os.person),
            machine: nonempty(identity.machine, "machine")?.unwrap_or(os.machine),
        };
        let store = match store {
            None => StoreChoice::Local,
            Some((raw, file)) => store_choice(raw, &file, &sources.home)?,
        };
        Ok(TeamConfig {
            store,
            identity,
            telemetry,
        })
    }

    /// The standard layers (user and managed config; no project), for
    /// commands that have no location (`log`, `approvals`).
    pub fn load_standard() -> Result<TeamConfig, TeamError> {
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
        TeamConfig::load(&PolicySources::standard(cwd))
    }

    /// Opens the audit log this config chooses, stamping every event with
    /// the identity and `agent`.
    pub fn open_audit_log(
        &self,
        data: &DataDir,
        durability: Durability,
        agent: Option<&str>,
    ) -> Result<Arc<dyn AuditLog>, BuildError> {
        let inner: Arc<dyn AuditLog> = match &self.store {
            StoreChoice::Local => {
                let path = data.audit_db();
                Arc::new(
                    EventLog::open(&path, durability)
                        .map_err(|source| BuildError::AuditLog { path, source })?,
                )
            }
            StoreChoice::Postgres { config, .. } => Arc::new(
                PgEventLog::open((**config).clone()).map_err(|e| BuildError::Team(e.into()))?,
            ),
        };
        // A collector that cannot be set up costs the log nothing: say so
        // and go on without export.
        let telemetry = self.telemetry.as_ref().and_then(|s| {
            Telemetry::global(s, Some(data.root()))
                .map_err(|e| tracing::warn!("[telemetry]: {e}; calls are not exported"))
                .ok()
        });
        Ok(Arc::new(Stamped {
            inner,
            person: self.identity.person.clone(),
            machine: self.identity.machine.clone(),
            agent: agent.map(str::to_string),
            telemetry,
        }))
    }

    /// Opens the saved approvals this config chooses; what is saved records
    /// the identity.
    pub fn open_approvals(&self, data: &DataDir) -> Result<Arc<dyn ApprovalStore>, BuildError> {
        Ok(match &self.store {
            StoreChoice::Local => {
                let path = data.state_db();
                Arc::new(
                    SqliteApprovals::open(&path)
                        .map_err(|source| BuildError::Approvals { path, source })?
                        .with_identity(&self.identity.person, &self.identity.machine),
                )
            }
            StoreChoice::Postgres { config, .. } => Arc::new(
                PgApprovals::open(
                    (**config).clone(),
                    &self.identity.person,
                    &self.identity.machine,
                )
                .map_err(|e| BuildError::Team(e.into()))?,
            ),
        })
    }

    /// Where the log is, for messages: the file, or the database's URL.
    pub fn describe_log(&self, data: &DataDir) -> String {
        match &self.store {
            StoreChoice::Local => data.audit_db().display().to_string(),
            StoreChoice::Postgres { config, .. } => config.target().to_string(),
        }
    }
}

fn telemetry_settings(
    raw: RawTelemetry,
    file: &Path,
    home: &Path,
) -> Result<Option<TelemetrySettings>, TeamError> {
    if raw.enabled == Some(false) {
        return Ok(None);
    }
    let endpoint = match raw.endpoint {
        Some(e) if e.starts_with("http://") || e.starts_with("https://") => Some(e),
        Some(e) => {
            return Err(TeamError::Invalid(format!(
                "{}: [telemetry] endpoint {e:?} is not an http:// or https:// URL (the collector's OTLP/HTTP address, e.g. http://localhost:4318)",
                file.display()
            )));
        }
        None => None,
    };
    // Relative to the config file, as `[store] password_file` is.
    let certificate = match raw.certificate {
        Some(c) if c.trim().is_empty() || c.contains('\0') => {
            return Err(TeamError::Invalid(format!(
                "{}: [telemetry] certificate is empty; name the PEM file of the collector's CA, or remove it",
                file.display()
            )));
        }
        Some(c) => Some(relative(c.trim(), file, home)),
        None => None,
    };
    Ok(Some(TelemetrySettings {
        endpoint,
        include_arguments: raw.include_arguments.unwrap_or(false),
        certificate,
    }))
}

fn nonempty(v: Option<String>, key: &str) -> Result<Option<String>, TeamError> {
    match v {
        Some(s) if s.trim().is_empty() || s.contains('\0') => Err(TeamError::Invalid(format!(
            "[identity] {key} is empty; remove it to use the OS user and host"
        ))),
        other => Ok(other.map(|s| s.trim().to_string())),
    }
}

fn store_choice(raw: RawStore, file: &Path, home: &Path) -> Result<StoreChoice, TeamError> {
    let at = file.display();
    if raw.password.is_some() {
        return Err(TeamError::Invalid(format!(
            "{at}: [store] password is refused: config files are shared and copied; put the \
             password in a file only you can read and set password_file, or set password_env \
             to the name of an environment variable"
        )));
    }
    let Some(url) = raw.url else {
        return Err(TeamError::Invalid(format!(
            "{at}: [store] has no url; write url = \"postgres://USER@HOST:PORT/DATABASE\""
        )));
    };
    let password = match (raw.password_file, raw.password_env) {
        (Some(_), Some(_)) => {
            return Err(TeamError::Invalid(format!(
                "{at}: [store] sets both password_file and password_env; keep one"
            )));
        }
        (Some(f), None) => Some(read_password_file(&relative(&f, file, home), &at)?),
        (None, Some(name)) => Some(match std::env::var(&name) {
            Ok(v) if !v.trim().is_empty() => v.trim().to_string(),
            Ok(_) => {
                return Err(TeamError::Invalid(format!(
                    "{name} (password_env in {at}) is empty"
                )));
            }
            Err(_) => {
                return Err(TeamError::Invalid(format!(
                    "{name} (password_env in {at}) is not set in toolgate's environment"
                )));
            }
        }),
        (None, None) => None,
    };
    let config = PgConfig::parse(&url, password)
        .map_err(|e| TeamError::Invalid(format!("{at}: [store] url: {e}")))?;
    Ok(StoreChoice::Postgres {
        config: Box::new(config),
        origin: at.to_string(),
    })
}

fn relative(text: &str, file: &Path, home: &Path) -> PathBuf {
    if let Some(rest) = text.strip_prefix("~/") {
        return home.join(rest);
    }
    let p = Path::new(text);
    if p.is_absolute() {
        return p.to_path_buf();
    }
    file.parent().map_or_else(|| p.to_path_buf(), |d| d.join(p))
}

/// The first line of a password file only its owner can read.
fn read_password_file(path: &Path, at: &dyn std::fmt::Display) -> Result<String, TeamError> {
    let shown = path.display();
    let meta = std::fs::metadata(path).map_err(|e| {
        TeamError::Invalid(format!(
            "cannot read the database password file {shown} (password_file in {at}): {e}"
        ))
    })?;
    if !meta.is_file() {
        return Err(TeamError::Invalid(format!(
            "the database password file {shown} (password_file in {at}) is not a regular file"
        )));
    }
    let mode = meta.permissions().mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(TeamError::Invalid(format!(
            "the database password file {shown} (password_file in {at}) is open to other users \
             (mode {mode:o}); run `chmod 600 {shown}`"
        )));
    }
    let text = std::fs::read_to_string(path).map_err(|e| {
        TeamError::Invalid(format!(
            "cannot read the database password file {shown} (password_file in {at}): {e}"
        ))
    })?;
    let first = text.lines().next().unwrap_or("").trim().to_string();
    if first.is_empty() {
        return Err(TeamError::Invalid(format!(
            "the database password file {shown} (password_file in {at}) is empty"
        )));
    }
    Ok(first)
}

/// An audit log: events in, events and the chain's verdict out, whatever
/// holds it (the SQLite file or the team's database).
pub trait AuditLog: EventSink + EventQuery + std::fmt::Debug {
    /// Blocks until every event submitted so far is committed (or failed).
    fn flush(&self) -> Result<(), StoreError>;
    /// The largest seq in the log (0 when empty).
    fn last_seq(&self) -> Result<u64, StoreError>;
}

impl AuditLog for EventLog {
    fn flush(&self) -> Result<(), StoreError> {
        EventLog::flush(self)
    }
    fn last_seq(&self) -> Result<u64, StoreError> {
        EventLog::last_seq(self)
    }
}

impl AuditLog for PgEventLog {
    fn flush(&self) -> Result<(), StoreError> {
        PgEventLog::flush(self)
    }
    fn last_seq(&self) -> Result<u64, StoreError> {
        PgEventLog::last_seq(self)
    }
}

/// A log that fills in who, where and which agent on each event that does
/// not say.
#[derive(Debug)]
struct Stamped {
    inner: Arc<dyn AuditLog>,
    person: String,
    machine: String,
    agent: Option<String>,
    telemetry: Option<Arc<Telemetry>>,
}

impl Stamped {
    /// Whether this process serves its calls over MCP (`mcp`, `serve`).
    fn over_mcp(&self) -> bool {
        self.agent.as_deref() == Some("mcp")
    }

    fn stamp(&self, mut e: Event) -> Event {
        let p = &mut e.payload;
        if p.person.is_none() {
            p.person = Some(self.person.clone());
        }
        if p.machine.is_none() {
            p.machine = Some(self.machine.clone());
        }
        if p.agent.is_none() {
            p.agent.clone_from(&self.agent);
        }
        e
    }
}

impl EventSink for Stamped {
    fn submit(&self, event: Event) -> EventAck {
        let event = self.stamp(event);
        if let Some(t) = &self.telemetry {
            t.observe(&event, self.over_mcp());
        }
        self.inner.submit(event)
    }

    fn submit_batch(&self, events: Vec<Event>) -> EventAck {
        let events: Vec<Event> = events.into_iter().map(|e| self.stamp(e)).collect();
        if let Some(t) = &self.telemetry {
            for e in &events {
                t.observe(e, self.over_mcp());
            }
        }
        self.inner.submit_batch(events)
    }
}

impl EventQuery for Stamped {
    fn query(&self, filter: &EventFilter) -> Result<Vec<StoredEvent>, QueryError> {
        self.inner.query(filter)
    }

    fn verify(&self) -> Result<VerifyReport, QueryError> {
        self.inner.verify()
    }
}

impl AuditLog for Stamped {
    fn flush(&self) -> Result<(), StoreError> {
        let flushed = self.inner.flush();
        if let Some(t) = &self.telemetry {
            t.flush(std::time::Duration::from_secs(1));
        }
        flushed
    }
    fn last_seq(&self) -> Result<u64, StoreError> {
        self.inner.last_seq()
    }
}

/// Stamps `events` with `identity` and `agent` where they do not say (for
/// the short paths that append without an open log: `toolgate hook`).
pub fn stamp_all(events: &mut [Event], identity: &Identity, agent: Option<&str>) {
    for e in events {
        let p = &mut e.payload;
        p.person.get_or_insert_with(|| identity.person.clone());
        p.machine.get_or_insert_with(|| identity.machine.clone());
        if p.agent.is_none() {
            p.agent = agent.map(str::to_string);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_host_name_is_the_kernels_as_proc_shows_it() {
        let proc = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
        assert_eq!(kernel_host_name().as_deref(), Some(proc.trim()));
        assert_eq!(Identity::from_os().machine, proc.trim());
    }

    fn sources(user: &Path) -> PolicySources {
        let mut s = PolicySources::standard("/");
        s.user = Some(user.to_path_buf());
        s.managed = None;
        s.session_files = Vec::new();
        s
    }

    #[test]
    fn no_store_section_is_the_local_store_and_identity_defaults_to_the_os() {
        let dir = tempfile::tempdir().unwrap();
        let user = dir.path().join("config.toml");
        std::fs::write(&user, "mode = \"default\"\n").unwrap();
        let t = TeamConfig::load(&sources(&user)).unwrap();
        assert!(matches!(t.store, StoreChoice::Local));
        assert_eq!(t.identity, Identity::from_os());
        assert!(t.identity.person.contains('@'));
    }

    #[test]
    fn store_settings_are_checked_with_clear_errors() {
        let dir = tempfile::tempdir().unwrap();
        let user = dir.path().join("config.toml");
        let err = |text: &str| {
            std::fs::write(&user, text).unwrap();
            TeamConfig::load(&sources(&user)).unwrap_err().to_string()
        };
        let inline = err("[store]\nurl = \"postgres://tg@db/a\"\npassword = \"hunter2\"\n");
        assert!(inline.contains("password is refused"), "{inline}");
        assert!(!inline.contains("hunter2"), "{inline}");
        let in_url = err("[store]\nurl = \"postgres://tg:hunter2@db/a\"\n");
        assert!(in_url.contains("holds a password"), "{in_url}");
        assert!(!in_url.contains("hunter2"), "{in_url}");
        assert!(err("[store]\nurl = \"mysql://db/a\"\n").contains("not a PostgreSQL URL"));
        assert!(err("[store]\npassword_env = \"X\"\n").contains("has no url"));
        assert!(err("[store\nurl = 1\n").contains("invalid TOML"));
        assert!(err("[store]\nurl = \"postgres://tg@db/a\"\nport = 1\n").contains("unknown field"));
        let unset = err(
            "[store]\nurl = \"postgres://tg@db/a\"\npassword_env = \"TOOLGATE_SURELY_UNSET_VAR\"\n",
        );
        assert!(unset.contains("is not set"), "{unset}");
        let pw = dir.path().join("pw");
        std::fs::write(&pw, "secret\n").unwrap();
        std::fs::set_permissions(&pw, std::fs::Permissions::from_mode(0o644)).unwrap();
        let open = err("[store]\nurl = \"postgres://tg@db/a\"\npassword_file = \"pw\"\n");
        assert!(open.contains("open to other users"), "{open}");
        std::fs::set_permissions(&pw, std::fs::Permissions::from_mode(0o600)).unwrap();
        std::fs::write(
            &user,
            "[store]\nurl = \"postgres://tg@db/a\"\npassword_file = \"pw\"\n[identity]\nperson = \"ada\"\n",
        )
        .unwrap();
        let t = TeamConfig::load(&sources(&user)).unwrap();
        assert_eq!(t.identity.person, "ada");
        match t.store {
            StoreChoice::Postgres { config, .. } => {
                assert_eq!(config.target(), "postgres://tg@db:5432/a")
            }
            StoreChoice::Local => panic!("expected the team store"),
        }
    }
}
