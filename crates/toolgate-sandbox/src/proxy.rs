//! The allowlisting HTTP/HTTPS proxy a confined command's network may go
//! through (`[sandbox] allow_domains`).
//!
//! It listens on a unix socket (a path that can be bound into the sandbox,
//! whose network namespace stays private) and serves two kinds of request:
//! `CONNECT host:port` (HTTPS and anything tunnelled) and plain HTTP with an
//! absolute URL (`GET http://host/path`). A host is admitted only when a
//! [`DomainList`] entry names it — an exact name, or `*.suffix` for the names
//! under `suffix` — and is refused otherwise; IP literals are never admitted.
//! Every connection, admitted or refused, is reported to the caller's
//! recorder (the binary writes it to the audit log).

use std::collections::HashMap;
use std::io::{self, BufRead, BufReader, Write};
use std::net::{IpAddr, Shutdown, SocketAddr, TcpStream, ToSocketAddrs};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::SandboxError;
use toolgate_paths::address::is_public;

/// The longest request head the proxy reads.
const MAX_HEAD: usize = 16 * 1024;
/// How long a client may take to send its request head.
const HEAD_TIMEOUT: Duration = Duration::from_secs(30);
/// How long connecting upstream may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);
/// How many connections one socket serves at once (a thread each); more are
/// refused, so a confined command cannot exhaust toolgate's threads.
pub const MAX_CONNECTIONS: usize = 64;

/// The names a confined command may reach: exact names and `*.suffix`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DomainList {
    exact: Vec<String>,
    suffixes: Vec<String>,
}

impl DomainList {
    /// Parses `allow_domains` entries. An entry is a DNS name (letters,
    /// digits, `-` and `.`), optionally prefixed by `*.`; anything else is an
    /// error naming the entry.
    pub fn parse(entries: &[String]) -> Result<DomainList, SandboxError> {
        let mut list = DomainList::default();
        for entry in entries {
            let e = entry.trim().trim_end_matches('.').to_ascii_lowercase();
            let (name, suffix) = match e.strip_prefix("*.") {
                Some(rest) => (rest.to_string(), true),
                None => (e.clone(), false),
            };
            if !is_dns_name(&name) {
                return Err(SandboxError::Spec(format!(
                    "allow_domains entry {entry:?} is not a domain name or `*.suffix`"
                )));
            }
            if suffix {
                list.suffixes.push(name);
            } else {
                list.exact.push(name);
            }
        }
        Ok(list)
    }

    /// Whether `host` is admitted (case-insensitive; a trailing dot ignored;
    /// `*.example.com` admits `a.example.com`, not `example.com`).
    pub fn admits(&self, host: &str) -> bool {
        let h = host.trim_end_matches('.').to_ascii_lowercase();
        if !is_dns_name(&h) || h.parse::<IpAddr>().is_ok() {
            return false;
        }
        self.exact.contains(&h)
            || self.suffixes.iter().any(|s| {
                h.len() > s.len() + 1
                    && h.ends_with(s.as_str())
                    && h[..h.len() - s.len()].ends_with('.')
            })
    }

    /// No entry at all.
    pub fn is_empty(&self) -> bool {
        self.exact.is_empty() && self.suffixes.is_empty()
    }
}

fn is_dns_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 253
        && s.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-')
        })
}

/// How the proxy finds a host's addresses.
#[derive(Clone, Debug, Default)]
pub enum Resolver {
    /// The system resolver.
    #[default]
    System,
    /// Fixed addresses for the names given, and no others (tests stand a
    /// local server in for a registry with it).
    Fixed(HashMap<String, IpAddr>),
}

impl Resolver {
    fn resolve(&self, host: &str, port: u16) -> io::Result<Vec<SocketAddr>> {
        match self {
            Resolver::System => admit_addresses(host, (host, port).to_socket_addrs()?.collect()),
            Resolver::Fixed(map) => map
                .get(&host.to_ascii_lowercase())
                .map(|ip| vec![SocketAddr::new(*ip, port)])
                .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no fixed address")),
        }
    }
}

/// The addresses of `host` the proxy may connect to. A listed name's DNS
/// answer is chosen by whoever runs its zone: an answer of loopback or a
/// private network would let a confined command reach the host's own
/// services (DNS rebinding), so only public addresses are kept. The names
/// reserved for loopback (`localhost`, `*.localhost`, RFC 6761) are the
/// exception: they never come from DNS, and listing one is the user's own
/// choice to reach this machine.
fn admit_addresses(host: &str, addrs: Vec<SocketAddr>) -> io::Result<Vec<SocketAddr>> {
    let name = host.trim_end_matches('.').to_ascii_lowercase();
    if name == "localhost" || name.ends_with(".localhost") {
        return Ok(addrs.into_iter().filter(|a| a.ip().is_loopback()).collect());
    }
    let public: Vec<SocketAddr> = addrs.into_iter().filter(|a| is_public(a.ip())).collect();
    if public.is_empty() {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "{host} has no public address (loopback, private and link-local answers are refused)"
            ),
        ));
    }
    Ok(public)
}

/// One connection the proxy saw.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProxyConnection {
    /// The host asked for.
    pub host: String,
    /// The port asked for.
    pub port: u16,
    /// `CONNECT` or the HTTP method.
    pub method: String,
    /// Admitted by the allow list (and then connected, unless `error` says
    /// otherwise).
    pub allowed: bool,
    /// Why it was refused, or why the upstream connection failed.
    pub error: Option<String>,
}

/// Receives every connection the proxy saw, before any byte goes through
/// it. An `Err` (the record could not be stored) refuses an admitted
/// connection: nothing passes unrecorded.
pub type Recorder = Arc<dyn Fn(&ProxyConnection) -> Result<(), String> + Send + Sync>;

/// A running proxy; stopped and its socket removed when dropped.
pub struct Proxy {
    socket: PathBuf,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for Proxy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Proxy")
            .field("socket", &self.socket)
            .finish()
    }
}

/// One connection's place in a socket's count; given back when dropped (also
/// when the thread could not start: the closure, and the slot, are dropped).
struct ActiveSlot(Arc<AtomicUsize>);

impl ActiveSlot {
    fn take(active: &Arc<AtomicUsize>) -> ActiveSlot {
        active.fetch_add(1, Ordering::SeqCst);
        ActiveSlot(Arc::clone(active))
    }
}

impl Drop for ActiveSlot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The names and resolver a proxy serves with, shared by its sockets.
#[derive(Debug)]
struct Rules {
    domains: DomainList,
    resolver: Resolver,
    /// Hosts an allowed request of this run named (`curl http://127.0.0.1:8080`
    /// allowed by a rule): admitted exactly, at whatever address they
    /// resolve to, since a person allowed that very host.
    named: Vec<String>,
}

impl Proxy {
    /// Listens on the unix socket `socket` (which must not exist) and serves
    /// until dropped.
    pub fn start(
        socket: &Path,
        domains: DomainList,
        resolver: Resolver,
        record: Recorder,
    ) -> Result<Proxy, SandboxError> {
        Proxy::listen(
            socket,
            Arc::new(Rules {
                domains,
                resolver,
                named: Vec::new(),
            }),
            record,
        )
    }

    fn listen(socket: &Path, rules: Arc<Rules>, record: Recorder) -> Result<Proxy, SandboxError> {
        let listener = UnixListener::bind(socket).map_err(|e| {
            SandboxError::Setup(format!("cannot listen on {}: {e}", socket.display()))
        })?;
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = Arc::clone(&stop);
        let active = Arc::new(AtomicUsize::new(0));
        let thread = std::thread::Builder::new()
            .name("toolgate-proxy".into())
            .spawn(move || {
                for conn in listener.incoming() {
                    if stopping.load(Ordering::SeqCst) {
                        break;
                    }
                    let Ok(mut conn) = conn else { continue };
                    if active.load(Ordering::SeqCst) >= MAX_CONNECTIONS {
                        let why = format!("more than {MAX_CONNECTIONS} connections at once");
                        let seen = ProxyConnection {
                            host: String::new(),
                            port: 0,
                            method: String::new(),
                            allowed: false,
                            error: Some(why.clone()),
                        };
                        if let Err(e) = record(&seen) {
                            tracing::warn!("a refused proxy connection could not be recorded: {e}");
                        }
                        let _ = refuse(&mut conn, "503 Service Unavailable", &why);
                        continue;
                    }
                    let rules = Arc::clone(&rules);
                    let record = Arc::clone(&record);
                    let slot = ActiveSlot::take(&active);
                    let _ = std::thread::Builder::new()
                        .name("toolgate-proxy-conn".into())
                        .spawn(move || {
                            let _slot = slot;
                            if let Err(e) = serve(conn, &rules, &record) {
                                tracing::debug!("proxy connection ended: {e}");
                            }
                        });
                }
            })
            .map_err(|e| SandboxError::Setup(format!("cannot start the proxy thread: {e}")))?;
        Ok(Proxy {
            socket: socket.to_path_buf(),
            stop,
            thread: Some(thread),
        })
    }

    /// The socket it listens on.
    pub fn socket(&self) -> &Path {
        &self.socket
    }
}

/// The proxy of one process: its allow list, its resolver and a private
/// directory (mode 0700) for its sockets. Each confined run gets a socket of
/// its own ([`ProxyService::serve`]), so every connection is reported as
/// belonging to the run that made it. The directory is removed when dropped.
#[derive(Debug)]
pub struct ProxyService {
    dir: PathBuf,
    rules: Arc<Rules>,
    next: AtomicU64,
}

/// The longest unix socket path the kernel accepts, less the terminating NUL.
const MAX_SOCKET_PATH: usize = 107;

impl ProxyService {
    /// A service admitting `domains`, with its private directory under
    /// `$XDG_RUNTIME_DIR` when set (else the temporary directory).
    pub fn new(domains: DomainList, resolver: Resolver) -> Result<ProxyService, SandboxError> {
        let base = std::env::var_os("XDG_RUNTIME_DIR")
            .map(PathBuf::from)
            .filter(|d| d.is_absolute() && d.is_dir())
            .unwrap_or_else(std::env::temp_dir);
        let dir = private_dir(&base)?;
        if dir.join("run-18446744073709551615.sock").as_os_str().len() > MAX_SOCKET_PATH {
            let _ = std::fs::remove_dir(&dir);
            return Err(SandboxError::Setup(format!(
                "the proxy's directory {} is too long a path for a unix socket; set TMPDIR to a shorter one",
                dir.display()
            )));
        }
        Ok(ProxyService {
            dir,
            rules: Arc::new(Rules {
                domains,
                resolver,
                named: Vec::new(),
            }),
            next: AtomicU64::new(0),
        })
    }

    /// A new socket for one run; every connection on it goes to `record`.
    /// The socket is removed when the returned proxy is dropped.
    pub fn serve(&self, record: Recorder) -> Result<Proxy, SandboxError> {
        self.serve_naming(record, &[])
    }

    /// [`ProxyService::serve`], also admitting `named`: the hosts the run's
    /// allowed requests named, exactly (IP literals and loopback included:
    /// a person allowed a request to that very host).
    pub fn serve_naming(&self, record: Recorder, named: &[String]) -> Result<Proxy, SandboxError> {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let socket = self.dir.join(format!("run-{n}.sock"));
        let rules = if named.is_empty() {
            Arc::clone(&self.rules)
        } else {
            Arc::new(Rules {
                domains: self.rules.domains.clone(),
                resolver: self.rules.resolver.clone(),
                named: named.iter().map(|h| normal_host(h)).collect(),
            })
        };
        Proxy::listen(&socket, rules, record)
    }

    /// The names it admits.
    pub fn domains(&self) -> &DomainList {
        &self.rules.domains
    }

    /// Its private directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Drop for ProxyService {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A new directory under `base` that only this user may enter.
fn private_dir(base: &Path) -> Result<PathBuf, SandboxError> {
    use std::os::unix::fs::DirBuilderExt;
    let pid = std::process::id();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let mut last = None;
    for attempt in 0..16u32 {
        let dir = base.join(format!("toolgate-proxy-{pid}-{nanos:x}{attempt}"));
        match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => {
                return Err(SandboxError::Setup(format!(
                    "cannot create the proxy's directory {}: {e}",
                    dir.display()
                )));
            }
        }
    }
    Err(SandboxError::Setup(format!(
        "cannot create the proxy's directory under {}: {}",
        base.display(),
        last.map_or_else(|| "no name was free".to_string(), |e| e.to_string())
    )))
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so it sees the flag.
        let _ = UnixStream::connect(&self.socket);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        let _ = std::fs::remove_file(&self.socket);
    }
}

/// The request head: its first line split, and every byte read so far.
struct Head {
    method: String,
    target: String,
    version: String,
    bytes: Vec<u8>,
}

fn read_head(reader: &mut BufReader<UnixStream>) -> io::Result<Head> {
    let mut bytes = Vec::new();
    loop {
        let n = reader.read_until(b'\n', &mut bytes)?;
        if n == 0 {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "no request"));
        }
        if bytes.len() > MAX_HEAD {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "request head too long",
            ));
        }
        if bytes.ends_with(b"\r\n\r\n") || bytes.ends_with(b"\n\n") {
            break;
        }
    }
    let text = String::from_utf8_lossy(&bytes);
    let first = text.lines().next().unwrap_or_default();
    let mut parts = first.split_whitespace();
    let (Some(method), Some(target), Some(version)) = (parts.next(), parts.next(), parts.next())
    else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "bad request line",
        ));
    };
    Ok(Head {
        method: method.to_string(),
        target: target.to_string(),
        version: version.to_string(),
        bytes,
    })
}

/// `host:port` (a bracketed IPv6 literal stays bracketed, and is refused).
fn split_authority(authority: &str, default_port: u16) -> Option<(String, u16)> {
    if authority.starts_with('[') {
        let end = authority.find(']')?;
        let host = &authority[..=end];
        let port = match authority[end + 1..].strip_prefix(':') {
            Some(p) => p.parse().ok()?,
            None => default_port,
        };
        return Some((host.to_string(), port));
    }
    match authority.rsplit_once(':') {
        Some((h, p)) => Some((h.to_string(), p.parse().ok()?)),
        None => Some((authority.to_string(), default_port)),
    }
}

fn refuse(client: &mut UnixStream, status: &str, why: &str) -> io::Result<()> {
    let body = format!("toolgate sandbox proxy: {why}\n");
    let reply = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    client.write_all(reply.as_bytes())?;
    client.flush()
}

/// A host as compared: lowercase, no trailing dot, no IPv6 brackets.
fn normal_host(h: &str) -> String {
    h.trim_end_matches('.')
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_ascii_lowercase()
}

fn serve(client: UnixStream, rules: &Rules, record: &Recorder) -> io::Result<()> {
    let (domains, resolver) = (&rules.domains, &rules.resolver);
    client.set_read_timeout(Some(HEAD_TIMEOUT))?;
    let mut reader = BufReader::new(client.try_clone()?);
    let mut client = client;
    let head = read_head(&mut reader)?;
    let connect = head.method.eq_ignore_ascii_case("CONNECT");
    // CONNECT host:port, or an absolute http:// URL.
    let (authority, rest) = if connect {
        (head.target.clone(), String::new())
    } else if let Some(after) = head.target.strip_prefix("http://") {
        match after.find('/') {
            Some(i) => (after[..i].to_string(), after[i..].to_string()),
            None => (after.to_string(), "/".to_string()),
        }
    } else {
        refuse(
            &mut client,
            "400 Bad Request",
            "only CONNECT and absolute http:// URLs are proxied",
        )?;
        return Ok(());
    };
    let Some((host, port)) = split_authority(&authority, if connect { 443 } else { 80 }) else {
        refuse(&mut client, "400 Bad Request", "bad host:port")?;
        return Ok(());
    };
    let mut seen = ProxyConnection {
        host: host.clone(),
        port,
        method: head.method.clone(),
        allowed: false,
        error: None,
    };
    let named = rules.named.contains(&normal_host(&host));
    seen.allowed = named || domains.admits(&host);
    if !seen.allowed {
        let why = format!(
            "{host} is not in [sandbox] allow_domains nor named by an allowed request of this call"
        );
        seen.error = Some(why.clone());
        if let Err(e) = record(&seen) {
            tracing::warn!("a refused proxy connection could not be recorded: {e}");
        }
        refuse(&mut client, "403 Forbidden", &why)?;
        return Ok(());
    }
    let addrs = if named {
        let bare = normal_host(&host);
        match bare.parse::<IpAddr>() {
            Ok(ip) => Ok(vec![SocketAddr::new(ip, port)]),
            Err(_) => (bare.as_str(), port).to_socket_addrs().map(|a| a.collect()),
        }
    } else {
        resolver.resolve(&host, port)
    };
    let upstream = addrs.and_then(|addrs: Vec<SocketAddr>| {
        let mut last = io::Error::new(io::ErrorKind::NotFound, "no address");
        for a in addrs {
            match TcpStream::connect_timeout(&a, CONNECT_TIMEOUT) {
                Ok(s) => return Ok(s),
                Err(e) => last = e,
            }
        }
        Err(last)
    });
    let mut upstream = match upstream {
        Ok(s) => s,
        Err(e) => {
            let why = format!("cannot connect to {host}:{port}: {e}");
            seen.error = Some(why.clone());
            if let Err(e) = record(&seen) {
                tracing::warn!("a failed proxy connection could not be recorded: {e}");
            }
            refuse(&mut client, "502 Bad Gateway", &why)?;
            return Ok(());
        }
    };
    if let Err(e) = record(&seen) {
        let why = format!("the connection to {host}:{port} could not be recorded: {e}");
        refuse(&mut client, "503 Service Unavailable", &why)?;
        return Ok(());
    }
    client.set_read_timeout(None)?;
    if connect {
        client.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")?;
    } else {
        // The request line in origin form; the headers as they came.
        let head_text = String::from_utf8_lossy(&head.bytes);
        let headers = head_text.split_once('\n').map_or("", |(_, h)| h);
        // One write: a server may answer after its first read.
        let line = format!("{} {rest} {}\r\n{headers}", head.method, head.version);
        upstream.write_all(line.as_bytes())?;
    }
    // Whatever the client sent after the head, then both ways until closed.
    let buffered = reader.buffer().to_vec();
    upstream.write_all(&buffered)?;
    let mut up_read = upstream.try_clone()?;
    let mut down_write = client.try_clone()?;
    let back = std::thread::spawn(move || {
        let _ = io::copy(&mut up_read, &mut down_write);
        let _ = down_write.shutdown(Shutdown::Write);
    });
    let mut client_read = reader.into_inner();
    let _ = io::copy(&mut client_read, &mut upstream);
    let _ = upstream.shutdown(Shutdown::Write);
    let _ = back.join();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_names_and_suffixes_admit_only_what_they_name() {
        let l = DomainList::parse(&["crates.io".into(), "*.npmjs.org".into()]).unwrap();
        assert!(l.admits("crates.io"));
        assert!(l.admits("CRATES.IO."));
        assert!(!l.admits("static.crates.io"));
        assert!(l.admits("registry.npmjs.org"));
        assert!(!l.admits("npmjs.org"));
        assert!(!l.admits("evilnpmjs.org"));
        assert!(!l.admits("npmjs.org.evil.com"));
        assert!(!l.admits("127.0.0.1"));
        assert!(!l.admits("[::1]"));
        assert!(DomainList::parse(&["*".into()]).is_err());
        assert!(DomainList::parse(&["a b".into()]).is_err());
        assert!(DomainList::parse(&["http://x.org".into()]).is_err());
    }

    #[test]
    fn dns_rebinding_an_allowed_name_to_loopback_is_not_connected() {
        let at = |ip: &str| SocketAddr::new(ip.parse().unwrap(), 443);
        for private in ["127.0.0.1", "10.0.0.5", "169.254.169.254", "::1", "fd00::1"] {
            let err = admit_addresses("registry.example", vec![at(private)]).unwrap_err();
            assert!(
                err.to_string().contains("no public address"),
                "{private}: {err}"
            );
        }
        // A mixed answer keeps only the public part.
        let kept = admit_addresses(
            "registry.example",
            vec![at("127.0.0.1"), at("93.184.216.34")],
        );
        assert_eq!(kept.unwrap(), vec![at("93.184.216.34")]);
        // The loopback names are the user's own choice, and only loopback.
        for local in ["localhost", "LOCALHOST.", "registry.localhost"] {
            let kept = admit_addresses(local, vec![at("127.0.0.1"), at("93.184.216.34")]);
            assert_eq!(kept.unwrap(), vec![at("127.0.0.1")], "{local}");
        }
        // Through the system resolver (/etc/hosts): localhost is loopback.
        assert!(Resolver::System.resolve("localhost", 80).is_ok());
    }

    #[test]
    fn only_public_addresses_are_connected() {
        for private in [
            "127.0.0.1",
            "127.9.9.9",
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "255.255.255.255",
            "224.0.0.1",
            "::1",
            "::",
            "fe80::1",
            "fc00::1",
            "fd12::1",
            "ff02::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "64:ff9b::7f00:1",
            "2001:db8::1",
            // IPv4-compatible (deprecated), 6to4 and local-NAT64 forms of
            // loopback and private addresses; benchmarking and IETF ranges.
            "::127.0.0.1",
            "::10.0.0.1",
            "2002:7f00:1::",
            "2002:a00:1::",
            "64:ff9b:1::a00:1",
            "198.18.0.1",
            "192.0.0.8",
        ] {
            let ip: IpAddr = private.parse().unwrap();
            assert!(!is_public(ip), "{private} must not count as public");
        }
        for public in [
            "93.184.216.34",
            "151.101.1.137",
            "2606:4700::6810:84e5",
            "172.32.0.1",
        ] {
            let ip: IpAddr = public.parse().unwrap();
            assert!(is_public(ip), "{public} is public");
        }
    }
}
