//! The sandbox wired in: the adapter through which `bash` runs confined as
//! `[sandbox]` says, and the line to show at start when commands will not run
//! confined.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use toolgate_core::{EventSink, Failure};
use toolgate_policy::config::SandboxMode;
use toolgate_policy::policy::Policy;
use toolgate_sandbox::proxy::{
    DomainList, Proxy, ProxyConnection, ProxyService, Recorder, Resolver,
};
use toolgate_sandbox::{SandboxSpec, Support};
use toolgate_tools::process_tools::{CommandSandbox, ConfineRequest, ConfinedCommand};

use crate::data_dir::DataDir;

/// What the sandbox refuses, for the results of failed confined commands.
const REFUSES: &str = "lets a command write only inside the location (protected paths such as .git/config, .git/hooks and .toolgate read-only), a private /tmp and [sandbox] writable paths; masks credential files (~/.ssh, ~/.aws, .env, …); has no network unless the call's network request was allowed; and refuses ptrace, mount and new namespaces";

/// The same, when `[sandbox] allow_domains` routes the network through the proxy.
const REFUSES_PROXIED: &str = "lets a command write only inside the location (protected paths such as .git/config, .git/hooks and .toolgate read-only), a private /tmp and [sandbox] writable paths; masks credential files (~/.ssh, ~/.aws, .env, …); gives it no network but an HTTP(S) proxy that admits only the hosts in [sandbox] allow_domains (a refused host gets `403 … is not in [sandbox] allow_domains`), unless the call's network request was allowed; and refuses ptrace, mount and new namespaces";

/// Confines bash commands as `[sandbox]` says.
pub struct SandboxAdapter {
    support: Support,
    mode: SandboxMode,
    writable: Vec<PathBuf>,
    /// `[sandbox] allow_domains`, parsed; empty: no proxy.
    domains: DomainList,
    /// The proxy, started on the first confined command that needs it.
    proxy: OnceLock<Result<ProxyService, Failure>>,
    /// Where the proxy's connections are recorded.
    events: Option<Arc<dyn EventSink>>,
}

impl std::fmt::Debug for SandboxAdapter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SandboxAdapter")
            .field("support", &self.support)
            .field("mode", &self.mode)
            .field("writable", &self.writable)
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
        SandboxAdapter {
            support: support(data),
            mode: sb.mode.unwrap_or_default(),
            writable: sb.writable.clone(),
            domains,
            proxy: OnceLock::new(),
            events: None,
        }
    }

    /// Records the proxy's connections in `events` (the audit log).
    pub fn with_events(mut self, events: Arc<dyn EventSink>) -> Self {
        self.events = Some(events);
        self
    }

    /// Whether this machine confines commands (whatever `[sandbox] mode`
    /// says: the policy combines the two).
    pub fn available(&self) -> bool {
        self.support.available
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

    /// Whether a command run with (or without) the machine's network goes
    /// through the allowlisting proxy, whose connections need an event sink.
    pub fn uses_proxy(&self, network: bool) -> bool {
        !network && !self.domains.is_empty()
    }

    /// The spec for commands in these roots.
    pub fn spec(&self, roots: Vec<PathBuf>, cwd: PathBuf, network: bool) -> SandboxSpec {
        let mut spec = SandboxSpec::for_location(roots, None);
        spec.writable = self.writable.clone();
        spec.network = network;
        spec.cwd = cwd;
        spec
    }

    /// For a command without the machine's network, when `allow_domains`
    /// is set: a proxy socket for this one run, whose connections are
    /// recorded for `session_id`/`call_id`.
    pub fn proxy_for(
        &self,
        network: bool,
        session_id: &str,
        call_id: &str,
    ) -> Result<Option<Proxy>, Failure> {
        if !self.uses_proxy(network) {
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
        service.serve(record).map(Some).map_err(Failure::of)
    }
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
    _confined: toolgate_sandbox::Confined,
    _proxy: Option<Proxy>,
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
        let mut spec = self.spec(roots, request.workdir.to_path_buf(), request.network);
        let proxy = self.proxy_for(request.network, request.session_id, request.call_id)?;
        spec.proxy = proxy.as_ref().map(|p| p.socket().to_path_buf());
        let mut confined = spec
            .command(&self.support, request.program, request.args)
            .map_err(Failure::of)?;
        let command = std::mem::replace(&mut confined.command, std::process::Command::new("false"));
        let refuses = if proxy.is_some() {
            REFUSES_PROXIED
        } else {
            REFUSES
        };
        Ok(Some(ConfinedCommand {
            command,
            guard: Box::new(RunGuard {
                _confined: confined,
                _proxy: proxy,
            }),
            refuses: refuses.into(),
        }))
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
