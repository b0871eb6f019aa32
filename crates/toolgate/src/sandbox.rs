//! The sandbox wired in: the adapter through which `bash` runs confined as
//! `[sandbox]` says, and the line to show at start when commands will not run
//! confined.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use toolgate_checkpoint::Checkpoints;
use toolgate_core::{StagedChange, StagedKind};

use toolgate_core::{EventSink, Failure};
use toolgate_policy::config::SandboxMode;
use toolgate_policy::policy::Policy;
use toolgate_sandbox::proxy::{
    DomainList, Proxy, ProxyConnection, ProxyService, Recorder, Resolver,
};
use toolgate_sandbox::{ChangeKind, ExitReport, LandingJournal, SandboxSpec, Staging, Support};
use toolgate_tools::process_tools::{CommandSandbox, ConfineRequest, ConfinedCommand, StagedRun};

use crate::data_dir::DataDir;

/// What the sandbox refuses, for the results of failed confined commands.
const REFUSES: &str = "shows a command the location, the system and only the toolchains and caches of the home directory (read-only); stages its writes to the location and lands each changed path only when the gate accepts it (protected paths, credentials and paths outside the location are refused or asked); masks credential files (~/.ssh, .env, keys, …) and host sockets; gives it a private /tmp and no network but the proxy to the hosts the call's allowed requests named and [sandbox] allow_domains (a refused host gets `403`); and refuses ptrace, mount and new namespaces";

/// Confines bash commands as `[sandbox]` says.
pub struct SandboxAdapter {
    support: Support,
    mode: SandboxMode,
    writable: Vec<PathBuf>,
    /// `[sandbox] readable`, besides the home directory's toolchains.
    readable: Vec<PathBuf>,
    /// `[sandbox] env`: variables passed in besides the allowlist.
    env: Vec<String>,
    /// Toolgate's own places, hidden from every confined command.
    hidden: Vec<PathBuf>,
    /// Where staged writes are kept; `None`: written directly.
    stage: Option<PathBuf>,
    /// Where landed change sets are recorded, for `toolgate undo`.
    checkpoints: Option<Arc<Checkpoints>>,
    /// `[sandbox] allow_domains`, parsed; empty: no proxy.
    domains: DomainList,
    /// The proxy, started on the first confined command that needs it.
    proxy: OnceLock<Result<ProxyService, Failure>>,
    /// Where the proxy's connections are recorded.
    events: Option<Arc<dyn EventSink>>,
    /// The sandbox's helper executable: by default the small one installed
    /// beside the running program ([`installed_helper`]); `None`: the
    /// running program.
    helper: Option<PathBuf>,
    /// Where walks for credential files are remembered between processes
    /// (the data directory's `scan-cache`, hidden with it).
    scan_cache: Option<PathBuf>,
    /// Whether bubblewrap reports each command's exit code before it exits
    /// itself ([`SandboxAdapter::with_exit_report`]).
    report_exit: bool,
}

impl std::fmt::Debug for SandboxAdapter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SandboxAdapter")
            .field("support", &self.support)
            .field("mode", &self.mode)
            .field("writable", &self.writable)
            .field("readable", &self.readable)
            .field("stage", &self.stage)
            .field("domains", &self.domains)
            .field("proxy", &self.proxy)
            .field("events", &self.events.is_some())
            .finish()
    }
}

impl SandboxAdapter {
    /// The adapter for a policy, on this machine. A detection that the data
    /// directory remembers as available is trusted (bubblewrap fails closed if
    /// it is wrong); otherwise the machine is probed.
    pub fn new(policy: &Policy, data: Option<&DataDir>) -> Self {
        let sb = policy.sandbox();
        let domains = DomainList::parse(&sb.allow_domains).unwrap_or_else(|e| {
            // The config parser admits only names and `*.suffix`, so this
            // does not happen; refusing every name is the safe reading.
            tracing::warn!("[sandbox] allow_domains: {e}; the proxy admits nothing");
            DomainList::default()
        });
        let support = support(data);
        let checkpoints = data.and_then(|d| match d.checkpoints() {
            Ok(store) => Some(store),
            Err(e) => {
                tracing::warn!("the checkpoint store cannot open, so writes are not staged: {e}");
                None
            }
        });
        let stage = match (&checkpoints, data) {
            (Some(_), Some(d)) if support.staging => Some(d.root().join("stage")),
            _ => None,
        };
        let mut hidden: Vec<PathBuf> = data
            .map(|d| vec![d.root().to_path_buf()])
            .unwrap_or_default();
        hidden.extend(policy.protected_paths().own().iter().cloned());
        SandboxAdapter {
            support,
            mode: sb.mode.unwrap_or_default(),
            writable: sb.writable.clone(),
            readable: sb.readable.clone(),
            env: sb.env.clone(),
            hidden,
            stage,
            checkpoints,
            domains,
            proxy: OnceLock::new(),
            events: None,
            helper: installed_helper(),
            scan_cache: data.map(|d| d.root().join("scan-cache")),
            report_exit: false,
        }
    }

    /// Has bubblewrap report each confined command's exit code as soon as
    /// the sandbox is empty, before bubblewrap exits (its exit unmounts the
    /// staging overlays, which takes milliseconds): the caller then takes
    /// the report from the guard with [`take_exit_report`] and reaps the
    /// command after settling its writes.
    pub fn with_exit_report(mut self) -> Self {
        self.report_exit = true;
        self
    }

    /// Uses `helper` as the sandbox's helper executable instead of the
    /// running program.
    pub fn with_helper(mut self, helper: PathBuf) -> Self {
        self.helper = Some(helper);
        self
    }

    /// Records the proxy's connections in `events` (the audit log).
    pub fn with_events(mut self, events: Arc<dyn EventSink>) -> Self {
        self.events = Some(events);
        self
    }

    /// Whether this machine confines commands and stages their writes
    /// (whatever `[sandbox] mode` says: the policy combines the two). Mode
    /// `auto` runs commands unasked only when both hold.
    pub fn available(&self) -> bool {
        self.support.available && self.stage.is_some()
    }

    /// The one line to print at start when commands will not run confined.
    pub fn startup_line(&self) -> Option<String> {
        match self.mode {
            SandboxMode::Off => Some(
                "toolgate: [sandbox] mode = \"off\": bash commands run unconfined, with your full authority".into(),
            ),
            _ if self.support.available => None,
            SandboxMode::Required => Some(format!(
                "toolgate: [sandbox] mode = \"required\" but this machine cannot sandbox ({}): bash will refuse to run",
                self.support.reasons.join("; ")
            )),
            SandboxMode::Auto => Some(format!(
                "toolgate: this machine cannot sandbox commands ({}): bash commands run unconfined",
                self.support.reasons.join("; ")
            )),
        }
    }

    /// What this machine can confine, as detected.
    pub fn support(&self) -> &Support {
        &self.support
    }

    /// A long-running upstream server's staged workspace writes, from the
    /// staging of its confined command: settled after each of its calls
    /// and at the end of the session, landing through the checkpoint
    /// store. `None` without a checkpoint store (nothing could land).
    pub fn upstream_writes(
        &self,
        staging: Staging,
        roots: Vec<PathBuf>,
    ) -> Option<Arc<dyn toolgate_mcp::gateway::UpstreamWrites>> {
        let store = Arc::clone(self.checkpoints.as_ref()?);
        Some(Arc::new(crate::upstream_writes::LiveWrites::new(
            toolgate_sandbox::LiveStaging::new(staging),
            store,
            toolgate_core::credential::home_dir(),
            roots,
        )))
    }

    /// Whether a command goes through the allowlisting proxy (whose
    /// connections need an event sink): when `allow_domains` is set or the
    /// call's allowed requests named hosts. A confined command never gets
    /// the machine's network itself.
    pub fn uses_proxy(&self, hosts: &[String]) -> bool {
        !self.domains.is_empty() || !hosts.is_empty()
    }

    /// The spec for commands in these roots: no network of their own,
    /// writes staged where the machine can.
    pub fn spec(&self, roots: Vec<PathBuf>, cwd: PathBuf) -> SandboxSpec {
        let mut spec = SandboxSpec::for_location(roots, None);
        spec.writable = self.writable.clone();
        spec.readable.extend(self.readable.iter().cloned());
        spec.hidden = self.hidden.clone();
        spec.stage = self.stage.clone();
        spec.network = false;
        spec.cwd = cwd;
        spec.helper = self.helper.clone();
        spec.scan_cache = self.scan_cache.clone();
        spec.report_exit = self.report_exit;
        spec
    }

    /// When the command goes through the proxy: a socket for this one run
    /// admitting `allow_domains` and `hosts`, whose connections are
    /// recorded for `session_id`/`call_id`.
    pub fn proxy_for(
        &self,
        hosts: &[String],
        session_id: &str,
        call_id: &str,
    ) -> Result<Option<Proxy>, Failure> {
        if !self.uses_proxy(hosts) {
            return Ok(None);
        }
        let service = self
            .proxy
            .get_or_init(|| {
                ProxyService::new(self.domains.clone(), Resolver::System).map_err(Failure::of)
            })
            .as_ref()
            .map_err(|e| {
                Failure::new(format!("the sandbox's proxy cannot start: {e}")).because(e.clone())
            })?;
        let record = recorder(self.events.clone(), session_id, call_id);
        service
            .serve_naming(record, hosts)
            .map(Some)
            .map_err(Failure::of)
    }
}

/// The name of the sandbox's own helper program (`src/sandbox_helper_main.rs`),
/// installed beside `toolgate`.
const HELPER_PROGRAM: &str = "toolgate-sandbox-helper";

/// The sandbox's helper installed beside the running program, when there is
/// one: it starts in a fraction of the whole executable's time, once per
/// confined command. Without it the running program is its own helper.
fn installed_helper() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let helper = exe.with_file_name(HELPER_PROGRAM);
    helper.is_file().then_some(helper)
}

/// What this machine can confine. A cached "available" (the data
/// directory's record of an earlier probe, valid while bubblewrap, the user,
/// the boot, Landlock and seccomp are unchanged) is trusted: were it wrong,
/// bubblewrap would fail and the command would not run, so it fails closed.
/// A cached "not available" is probed again, since acting on it would run
/// commands unconfined. This saves the two bubblewrap runs of a probe on
/// every `toolgate sandbox exec` and `toolgate call`.
fn support(data: Option<&DataDir>) -> Support {
    match data.map(|d| toolgate_sandbox::detect_cached(&d.sandbox_cache())) {
        Some(cached) if cached.available => cached,
        _ => toolgate_sandbox::detect(),
    }
}

/// Writes each connection to `events` as a `network.connection` event and
/// waits until it is durable, so that no byte goes through before its record
/// is stored; with no sink (or a failing one) an admitted connection is
/// refused.
fn recorder(events: Option<Arc<dyn EventSink>>, session_id: &str, call_id: &str) -> Recorder {
    let (session_id, call_id) = (session_id.to_string(), call_id.to_string());
    Arc::new(move |c: &ProxyConnection| {
        let Some(sink) = &events else {
            return Err("the audit log is not open".into());
        };
        let event = connection_event(c, &session_id, &call_id);
        futures::executor::block_on(sink.submit(event))
            .map(|_| ())
            .map_err(|e| e.to_string())
    })
}

/// What a run holds until its command has exited.
struct RunGuard {
    _proxy: Option<Proxy>,
    /// Bubblewrap's report of the exit code (it must be read, or held,
    /// until the command has exited).
    exit: Option<ExitReport>,
}

/// The exit report a [`SandboxAdapter::with_exit_report`] run holds in its
/// guard, taken out (the caller then holds it until the command has
/// exited).
pub fn take_exit_report(guard: &mut (dyn std::any::Any + Send)) -> Option<ExitReport> {
    guard.downcast_mut::<RunGuard>()?.exit.take()
}

impl CommandSandbox for SandboxAdapter {
    fn confine(&self, request: &ConfineRequest<'_>) -> Result<Option<ConfinedCommand>, Failure> {
        match self.mode {
            SandboxMode::Off => return Ok(None),
            SandboxMode::Auto if !self.support.available => return Ok(None),
            SandboxMode::Required if !self.support.available => {
                return Err(Failure::new(format!(
                    "[sandbox] mode = \"required\" and this machine cannot sandbox: {}",
                    self.support.reasons.join("; ")
                )));
            }
            _ => {}
        }
        let roots = request.location.roots().map(PathBuf::from).collect();
        let mut spec = self.spec(roots, request.workdir.to_path_buf());
        let proxy = self.proxy_for(request.hosts, request.session_id, request.call_id)?;
        spec.proxy = proxy.as_ref().map(|p| p.socket().to_path_buf());
        let mut confined = spec
            .command(&self.support, request.program, request.args)
            .map_err(Failure::of)?;
        let command = std::mem::replace(&mut confined.command, std::process::Command::new("false"));
        let staged: Option<Box<dyn StagedRun>> = match (confined.staging.take(), &self.checkpoints)
        {
            (Some(staging), Some(store)) => Some(Box::new(StagedWrites {
                staging,
                store: Arc::clone(store),
                call_id: request.call_id.to_string(),
                home: toolgate_core::credential::home_dir(),
                roots: request.location.roots().map(PathBuf::from).collect(),
                changes: Vec::new(),
            })),
            _ => None,
        };
        Ok(Some(ConfinedCommand {
            command,
            guard: Box::new(RunGuard {
                _proxy: proxy,
                exit: confined.exit_report.take(),
            }),
            refuses: REFUSES.into(),
            staged,
            env_allowlist: Some(self.env.clone()),
        }))
    }
}

/// A confined run's staged writes, landed through the checkpoint store.
struct StagedWrites {
    staging: Staging,
    store: Arc<Checkpoints>,
    call_id: String,
    home: PathBuf,
    /// The location's roots, so that a dot-path the shape rule protects
    /// gets its diff shown too.
    roots: Vec<PathBuf>,
    changes: Vec<toolgate_sandbox::Change>,
}

/// A small text file's diff is shown to the person asked; larger or binary
/// ones are named only.
const DIFF_LIMIT: u64 = 64 * 1024;

impl StagedRun for StagedWrites {
    fn changes(&mut self) -> Result<Vec<StagedChange>, Failure> {
        self.changes = self.staging.changes().map_err(Failure::of)?;
        Ok(staged_changes(
            &self.staging,
            &self.changes,
            &self.home,
            &self.roots,
        ))
    }

    fn land(&mut self, accepted: &[PathBuf]) -> Result<Option<String>, Failure> {
        let accepted: std::collections::HashSet<PathBuf> = accepted.iter().cloned().collect();
        let journal = self
            .store
            .begin(&self.call_id, "bash")
            .map_err(|e| Failure::new(format!("cannot record the change set: {e}")))?;
        self.staging
            .land(&self.changes, &accepted, Box::new(Journal(journal)))
            .map_err(Failure::of)
    }
}

/// The staged changes as the gate judges them: with what each writes
/// without naming it ([`crate::carried`]), and the diff of a small text file
/// a person may be asked about.
pub(crate) fn staged_changes(
    staging: &Staging,
    changes: &[toolgate_sandbox::Change],
    home: &Path,
    roots: &[PathBuf],
) -> Vec<StagedChange> {
    let facts = toolgate_core::protected::ProtectedPaths::new(home.to_path_buf(), [])
        .with_roots(roots.to_vec());
    let mut carried = crate::carried::Carried::new(staging, &facts, home, roots);
    changes
        .iter()
        .map(|c| {
            let also = carried.of(c, changes);
            // Only what a person may be asked about gets a diff.
            let notable = !c.dir
                && (facts.check_without_links(&c.path).is_some()
                    || toolgate_core::credential::is_credential(&c.path, home).is_some());
            StagedChange {
                path: c.path.clone(),
                certificates_only: certificates_only(staging, c),
                kind: match c.kind {
                    ChangeKind::Created => StagedKind::Created,
                    ChangeKind::Modified => StagedKind::Modified,
                    ChangeKind::Deleted => StagedKind::Deleted,
                },
                dir: c.dir,
                detail: notable.then(|| diff(staging, c)).flatten(),
                changed_outside: c.changed_outside,
                also,
            }
        })
        .collect()
}

/// The largest created PEM file whose content is read to see whether it is
/// certificates only (a CA bundle is a few hundred KiB).
const CERTIFICATES_READ_LIMIT: u64 = 8 * 1024 * 1024;

/// Whether `c` created a PEM file (`*.pem`) whose staged content is
/// certificates only ([`toolgate_core::credential::holds_only_certificates`]):
/// such a file is named as a secret and holds none.
fn certificates_only(staging: &Staging, c: &toolgate_sandbox::Change) -> bool {
    let pem = c
        .path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("pem"));
    if c.dir || c.kind != ChangeKind::Created || !pem {
        return false;
    }
    let Some(staged) = staging.staged_path(&c.path) else {
        return false;
    };
    // A regular file, not a link to one; never waiting on a FIFO.
    if !std::fs::symlink_metadata(&staged).is_ok_and(|m| m.is_file()) {
        return false;
    }
    match toolgate_core::small_file::read(&staged, CERTIFICATES_READ_LIMIT) {
        Ok(bytes) => toolgate_core::credential::holds_only_certificates(&bytes),
        Err(_) => false,
    }
}

/// A unified diff of a small text file's change.
fn diff(staging: &Staging, c: &toolgate_sandbox::Change) -> Option<String> {
    let before = match c.kind {
        ChangeKind::Created => String::new(),
        _ => read_small(&c.path)?,
    };
    let after = match c.kind {
        ChangeKind::Deleted => String::new(),
        _ => read_small(&staging.staged_path(&c.path)?)?,
    };
    let name = c.path.display().to_string();
    Some(
        similar::TextDiff::from_lines(&before, &after)
            .unified_diff()
            .header(&name, &name)
            .to_string(),
    )
}

fn read_small(p: &Path) -> Option<String> {
    let m = std::fs::symlink_metadata(p).ok()?;
    if !m.is_file() {
        return None;
    }
    // Checked again on the handle it reads: never waits on a FIFO.
    toolgate_core::small_file::read_text(p, DIFF_LIMIT).ok()
}

/// The checkpoint store's change set, as the sandbox's landing journal.
pub(crate) struct Journal(pub(crate) toolgate_checkpoint::Pending);

impl LandingJournal for Journal {
    fn save(&mut self, path: &Path) -> Result<(), String> {
        self.0.save(path).map_err(|e| e.to_string())
    }
    fn save_mode(&mut self, path: &Path) -> Result<(), String> {
        self.0.save_mode(path).map_err(|e| e.to_string())
    }
    fn fsync(&self) -> bool {
        self.0.fsync()
    }
    fn applying(&mut self) -> Result<(), String> {
        self.0.applying().map_err(|e| e.to_string())
    }
    fn landed(self: Box<Self>) -> Result<String, String> {
        self.0.landed().map_err(|e| e.to_string())
    }
    fn roll_back(self: Box<Self>) -> Result<(), String> {
        self.0.roll_back().map_err(|e| e.to_string())
    }
}

/// The audit event for one connection through the sandbox's proxy:
/// `network.connection`, resource `host:port`, decision allow or deny.
pub fn connection_event(
    c: &toolgate_sandbox::proxy::ProxyConnection,
    session_id: &str,
    call_id: &str,
) -> toolgate_core::Event {
    use toolgate_core::{Effect, EventKind, EventPayload};
    let payload = EventPayload {
        action: Some(format!("network {}", c.method)),
        resource: Some(format!("{}:{}", c.host, c.port)),
        decision: Some(if c.allowed && c.error.is_none() {
            Effect::Allow
        } else {
            Effect::Deny
        }),
        reason: Some(
            c.error
                .clone()
                .unwrap_or_else(|| format!("{} is in [sandbox] allow_domains", c.host)),
        ),
        actor: Some("sandbox proxy".into()),
        ..EventPayload::default()
    };
    toolgate_core::Event::now(EventKind::NetworkConnection, session_id, call_id, payload)
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::io::{Read, Write};
    use std::net::{IpAddr, Ipv4Addr, TcpListener};
    use std::os::unix::net::UnixStream;
    use std::sync::Arc;

    use toolgate_core::{Effect, EventKind, EventSink};
    use toolgate_sandbox::proxy::{DomainList, Proxy, ProxyConnection, Resolver};
    use toolgate_store::{Durability, EventFilter, EventLog};

    use super::connection_event;

    #[test]
    fn proxy_connections_allowed_and_refused_are_both_in_the_audit_log() {
        let server = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = server.local_addr().unwrap().port();
        std::thread::spawn(move || {
            if let Some(Ok(mut s)) = server.incoming().next() {
                let mut buf = [0u8; 1024];
                let _ = s.read(&mut buf);
                let _ = s.write_all(
                    b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok",
                );
            }
        });
        let dir = tempfile::tempdir().unwrap();
        let log = Arc::new(EventLog::open(dir.path().join("audit.db"), Durability::Full).unwrap());
        let pending: Arc<std::sync::Mutex<Vec<toolgate_core::Event>>> = Arc::default();
        let into = Arc::clone(&pending);
        let record = Arc::new(move |c: &ProxyConnection| {
            if let Ok(mut p) = into.lock() {
                p.push(connection_event(c, "s1", "call-1"));
            }
            Ok(())
        });
        let local = IpAddr::V4(Ipv4Addr::LOCALHOST);
        let fixed: HashMap<String, IpAddr> = [
            ("registry.test".to_string(), local),
            ("evil.test".to_string(), local),
        ]
        .into();
        let socket = dir.path().join("proxy.sock");
        let proxy = Proxy::start(
            &socket,
            DomainList::parse(&["registry.test".into()]).unwrap(),
            Resolver::Fixed(fixed),
            record,
        )
        .unwrap();
        let ask = |req: String| {
            let mut c = UnixStream::connect(&socket).unwrap();
            c.write_all(req.as_bytes()).unwrap();
            let mut out = String::new();
            c.read_to_string(&mut out).unwrap();
            out
        };
        let ok = ask(format!(
            "GET http://registry.test:{port}/ HTTP/1.1\r\nHost: registry.test\r\n\r\n"
        ));
        assert!(ok.ends_with("ok"), "{ok:?}");
        let refused = ask(format!("CONNECT evil.test:{port} HTTP/1.1\r\n\r\n"));
        assert!(refused.starts_with("HTTP/1.1 403"), "{refused}");
        drop(proxy);
        let batch = std::mem::take(&mut *pending.lock().unwrap());
        futures::executor::block_on(log.submit_batch(batch)).unwrap();
        let events = log
            .query(&EventFilter {
                kind: Some(EventKind::NetworkConnection),
                ..EventFilter::default()
            })
            .unwrap();
        let seen: Vec<(String, Option<Effect>)> = events
            .iter()
            .map(|e| {
                (
                    e.event.payload.resource.clone().unwrap_or_default(),
                    e.event.payload.decision,
                )
            })
            .collect();
        assert_eq!(
            seen,
            [
                (format!("registry.test:{port}"), Some(Effect::Allow)),
                (format!("evil.test:{port}"), Some(Effect::Deny)),
            ]
        );
        assert!(log.verify().unwrap().is_ok(), "the hash chain holds");
    }
}
