//! The allowlisting proxy with a local HTTP server on 127.0.0.1 standing in
//! for a registry: a listed name passes, another is refused, and both are
//! recorded.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, TcpListener};
use std::os::unix::net::UnixStream;
use std::sync::{Arc, Mutex};

use toolgate_sandbox::proxy::{DomainList, Proxy, ProxyConnection, ProxyService, Resolver};

use crate::common;
use common::{Fixture, stderr, stdout};

/// A registry stand-in: answers each connection with one `200 ok`, for a
/// bounded number of connections.
fn registry(connections: usize) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().take(connections) {
            let mut s = stream.unwrap();
            let mut buf = [0u8; 4096];
            let mut got = Vec::new();
            while !got.windows(4).any(|w| w == b"\r\n\r\n") {
                let n = s.read(&mut buf).unwrap();
                if n == 0 {
                    break;
                }
                got.extend_from_slice(&buf[..n]);
            }
            let line = String::from_utf8_lossy(&got)
                .lines()
                .next()
                .unwrap_or("")
                .to_string();
            let body = format!("ok {line}");
            write!(
                s,
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            )
            .unwrap();
        }
    });
    port
}

fn exchange(socket: &std::path::Path, request: &str) -> String {
    let mut c = UnixStream::connect(socket).unwrap();
    c.write_all(request.as_bytes()).unwrap();
    let mut out = Vec::new();
    c.read_to_end(&mut out).unwrap();
    String::from_utf8_lossy(&out).into_owned()
}

#[test]
fn a_listed_name_passes_another_is_refused_and_both_are_recorded() {
    let port = registry(2);
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("proxy.sock");
    let local = IpAddr::V4(Ipv4Addr::LOCALHOST);
    let fixed: HashMap<String, IpAddr> = ["registry.test", "evil.test", "a.pkg.test"]
        .into_iter()
        .map(|n| (n.to_string(), local))
        .collect();
    let seen: Arc<Mutex<Vec<ProxyConnection>>> = Arc::default();
    let log = Arc::clone(&seen);
    let proxy = Proxy::start(
        &socket,
        DomainList::parse(&["registry.test".into(), "*.pkg.test".into()]).unwrap(),
        Resolver::Fixed(fixed),
        Arc::new(move |c: &ProxyConnection| {
            log.lock().unwrap().push(c.clone());
            Ok(())
        }),
    )
    .unwrap();

    // HTTPS-style: CONNECT, then the tunnelled request.
    let reply = exchange(
        &socket,
        &format!(
            "CONNECT registry.test:{port} HTTP/1.1\r\nHost: registry.test:{port}\r\n\r\nGET /pkg HTTP/1.1\r\nHost: registry.test\r\n\r\n"
        ),
    );
    assert!(
        reply.starts_with("HTTP/1.1 200 Connection established"),
        "{reply}"
    );
    assert!(reply.contains("ok GET /pkg HTTP/1.1"), "{reply}");

    // Plain HTTP with an absolute URL: forwarded in origin form.
    let reply = exchange(
        &socket,
        &format!("GET http://a.pkg.test:{port}/index.json HTTP/1.1\r\nHost: a.pkg.test\r\n\r\n"),
    );
    assert!(reply.contains("ok GET /index.json HTTP/1.1"), "{reply}");

    // A name not listed never reaches the server.
    let reply = exchange(
        &socket,
        &format!("CONNECT evil.test:{port} HTTP/1.1\r\n\r\n"),
    );
    assert!(reply.starts_with("HTTP/1.1 403"), "{reply}");
    assert!(
        reply.contains("evil.test is not in [sandbox] allow_domains"),
        "{reply}"
    );
    // Nor does an IP literal.
    let reply = exchange(
        &socket,
        &format!("CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n"),
    );
    assert!(reply.starts_with("HTTP/1.1 403"), "{reply}");

    drop(proxy);
    assert!(
        !socket.exists(),
        "the socket is removed when the proxy stops"
    );
    let seen = seen.lock().unwrap();
    let summary: Vec<(&str, bool)> = seen.iter().map(|c| (c.host.as_str(), c.allowed)).collect();
    assert_eq!(
        summary,
        [
            ("registry.test", true),
            ("a.pkg.test", true),
            ("evil.test", false),
            ("127.0.0.1", false)
        ]
    );
    assert!(seen.iter().all(|c| c.port == port));
}

/// A proxy service admitting `registry.test` (and mapping it, and
/// `evil.test`, to the local stand-in), recording into `seen`.
fn service() -> ProxyService {
    let local = IpAddr::V4(Ipv4Addr::LOCALHOST);
    let fixed: HashMap<String, IpAddr> = ["registry.test", "evil.test"]
        .into_iter()
        .map(|n| (n.to_string(), local))
        .collect();
    ProxyService::new(
        DomainList::parse(&["registry.test".into()]).unwrap(),
        Resolver::Fixed(fixed),
    )
    .unwrap()
}

type Seen = Arc<Mutex<Vec<ProxyConnection>>>;

fn recorder(seen: &Seen) -> toolgate_sandbox::proxy::Recorder {
    let into = Arc::clone(seen);
    Arc::new(move |c: &ProxyConnection| {
        into.lock().unwrap().push(c.clone());
        Ok(())
    })
}

#[test]
fn a_confined_command_reaches_a_listed_name_only_through_the_proxy() {
    let port = registry(3);
    let fx = Fixture::new();
    let svc = service();
    let seen: Seen = Arc::default();
    let run = svc.serve(recorder(&seen)).unwrap();
    let mut spec = fx.spec();
    spec.proxy = Some(run.socket().to_path_buf());
    // curl (CONNECT-less plain HTTP through the proxy), python's urllib
    // (reads the same variables), then a name that is not listed.
    let script = format!(
        "set -u; echo \"proxy=$HTTPS_PROXY no_proxy=[$NO_PROXY]\"; \
         curl -sS --max-time 20 http://registry.test:{port}/pkg.tgz; echo; \
         python3 -c 'import urllib.request as u; print(u.urlopen(\"http://registry.test:{port}/simple/\", timeout=20).read().decode())'; \
         curl -sS --max-time 20 -o /dev/null -w 'evil=%{{http_code}}\\n' http://evil.test:{port}/x; \
         curl -sS --max-time 20 https://evil.test:{port}/x || echo evil-https-refused"
    );
    let out = fx.run_spec(&spec, &script);
    let text = stdout(&out);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(text.contains("proxy=http://127.0.0.1:"), "{text}");
    assert!(text.contains("no_proxy=[]"), "{text}");
    assert!(
        text.contains("ok GET /pkg.tgz HTTP/1.1"),
        "curl passes: {text}"
    );
    assert!(
        text.contains("ok GET /simple/ HTTP/1.1"),
        "urllib passes: {text}"
    );
    assert!(
        text.contains("evil=403"),
        "plain HTTP to an unlisted name: {text}"
    );
    assert!(
        text.contains("evil-https-refused"),
        "CONNECT to an unlisted name: {text}"
    );
    drop(run);
    let seen = seen.lock().unwrap();
    let summary: Vec<(&str, &str, bool)> = seen
        .iter()
        .map(|c| (c.host.as_str(), c.method.as_str(), c.allowed))
        .collect();
    assert_eq!(
        summary,
        [
            ("registry.test", "GET", true),
            ("registry.test", "GET", true),
            ("evil.test", "GET", false),
            ("evil.test", "CONNECT", false),
        ]
    );
}

#[test]
fn bypassing_the_proxy_reaches_nothing() {
    let port = registry(1);
    let fx = Fixture::new();
    let svc = service();
    let seen: Seen = Arc::default();
    let run = svc.serve(recorder(&seen)).unwrap();
    let mut spec = fx.spec();
    spec.proxy = Some(run.socket().to_path_buf());
    // Straight to the host's listener, with the variables unset or ignored:
    // the sandbox's network namespace has only its own loopback, and Landlock
    // admits no TCP connection but to the forwarder's port.
    let out = fx.run_spec(
        &spec,
        &format!(
            "curl -sS --noproxy '*' --max-time 5 http://127.0.0.1:{port}/ && echo REACHED; \
             env -u HTTP_PROXY -u http_proxy python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}), 5)' && echo REACHED2; \
             python3 -c 'import socket; s=socket.socket(); s.bind((\"127.0.0.1\", 0)); print(\"BOUND\")'; \
             getent hosts example.com && echo RESOLVED; \
             curl -sS --max-time 5 -o /dev/null -w 'literal=%{{http_code}}\\n' http://127.0.0.1:{port}/; true"
        ),
    );
    let text = stdout(&out);
    assert!(!text.contains("REACHED"), "{text}");
    assert!(
        !text.contains("BOUND"),
        "binding a port is refused too: {text}"
    );
    assert!(!text.contains("RESOLVED"), "{text}");
    // Through the proxy, the host's loopback by address: refused.
    assert!(text.contains("literal=403"), "{text}");
    drop(run);
    let seen = seen.lock().unwrap();
    let summary: Vec<(&str, bool)> = seen.iter().map(|c| (c.host.as_str(), c.allowed)).collect();
    assert_eq!(
        summary,
        [("127.0.0.1", false)],
        "only the literal reached the proxy"
    );
}

#[test]
fn each_run_has_its_own_socket_in_a_private_directory() {
    use std::os::unix::fs::PermissionsExt;
    let svc = service();
    let mode = std::fs::metadata(svc.dir()).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o700, "{mode:o}");
    let a = svc.serve(recorder(&Arc::default())).unwrap();
    let b = svc.serve(recorder(&Arc::default())).unwrap();
    assert_ne!(a.socket(), b.socket());
    assert!(a.socket().starts_with(svc.dir()));
    let dir = svc.dir().to_path_buf();
    drop((a, b));
    drop(svc);
    assert!(!dir.exists(), "the directory goes with the service");
}

#[test]
fn connection_flood_is_refused_past_the_limit_and_recorded() {
    use toolgate_sandbox::proxy::MAX_CONNECTIONS;
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("proxy.sock");
    let seen: Arc<Mutex<Vec<ProxyConnection>>> = Arc::default();
    let log = Arc::clone(&seen);
    let _proxy = Proxy::start(
        &socket,
        DomainList::parse(&["registry.test".into()]).unwrap(),
        Resolver::Fixed(HashMap::new()),
        Arc::new(move |c: &ProxyConnection| {
            log.lock().unwrap().push(c.clone());
            Ok(())
        }),
    )
    .unwrap();
    // Connections that never send their head each hold a thread of the proxy.
    let held: Vec<UnixStream> = (0..MAX_CONNECTIONS)
        .map(|_| UnixStream::connect(&socket).unwrap())
        .collect();
    // The proxy counts a connection when it accepts it; give it time to.
    std::thread::sleep(std::time::Duration::from_millis(300));
    // The refusal may come before the request is written: only the reply counts.
    let mut c = UnixStream::connect(&socket).unwrap();
    let _ = c.write_all(b"CONNECT registry.test:443 HTTP/1.1\r\n\r\n");
    let mut reply = String::new();
    let _ = c.read_to_string(&mut reply);
    assert!(reply.starts_with("HTTP/1.1 503"), "{reply}");
    assert!(reply.contains("connections at once"), "{reply}");
    assert!(
        seen.lock()
            .unwrap()
            .iter()
            .any(|c| !c.allowed && c.error.as_deref().is_some_and(|e| e.contains("at once"))),
        "the refusal is recorded"
    );
    // Once they close, new connections are served again.
    drop(held);
    std::thread::sleep(std::time::Duration::from_millis(300));
    let reply = exchange(&socket, "CONNECT other.test:443 HTTP/1.1\r\n\r\n");
    assert!(reply.starts_with("HTTP/1.1 403"), "{reply}");
}
