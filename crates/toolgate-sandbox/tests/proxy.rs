//! The allowlisting proxy with a local HTTP server on 127.0.0.1 standing in
//! for a registry: a listed name passes, another is refused, and both are
//! recorded.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, TcpListener};
use std::os::unix::net::UnixStream;
use std::sync::{Arc, Mutex};

use toolgate_sandbox::proxy::{DomainList, Proxy, ProxyConnection, Resolver};

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
        Arc::new(move |c: &ProxyConnection| log.lock().unwrap().push(c.clone())),
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
