//! A small HTTP/1.1 server on 127.0.0.1 for the web tool tests: real sockets,
//! one thread per connection, every request recorded.

#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::thread;

/// A request as the server saw it.
#[derive(Clone, Debug)]
pub struct Seen {
    /// The request target (path and query).
    pub target: String,
    /// Header lines, lower-cased names: `name: value`.
    pub headers: Vec<(String, String)>,
}

impl Seen {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// What to send back.
pub enum Reply {
    /// A complete response with Content-Length.
    Full {
        status: u16,
        headers: Vec<(String, String)>,
        body: Vec<u8>,
    },
    /// `chunk` repeated `times`, no Content-Length, ended by closing.
    Endless {
        content_type: String,
        chunk: Vec<u8>,
        times: usize,
    },
    /// Waits this long, then closes without answering.
    Stall(std::time::Duration),
}

impl Reply {
    pub fn ok(content_type: &str, body: impl Into<Vec<u8>>) -> Self {
        Reply::Full {
            status: 200,
            headers: vec![("Content-Type".into(), content_type.into())],
            body: body.into(),
        }
    }

    pub fn redirect(status: u16, location: &str) -> Self {
        Reply::Full {
            status,
            headers: vec![("Location".into(), location.into())],
            body: Vec::new(),
        }
    }

    pub fn status(status: u16, body: &str) -> Self {
        Reply::Full {
            status,
            headers: vec![("Content-Type".into(), "text/plain".into())],
            body: body.as_bytes().to_vec(),
        }
    }
}

type Handler = dyn Fn(&Seen) -> Reply + Send + Sync;

/// A running server; it lives until the test process ends.
pub struct Server {
    pub addr: SocketAddr,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Server {
    pub fn start(handler: impl Fn(&Seen) -> Reply + Send + Sync + 'static) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let handler: Arc<Handler> = Arc::new(handler);
        let log = Arc::clone(&seen);
        thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let handler = Arc::clone(&handler);
                let log = Arc::clone(&log);
                thread::spawn(move || serve(stream, &*handler, &log));
            }
        });
        Server { addr, seen }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.addr, path)
    }

    pub fn host_port(&self) -> String {
        self.addr.to_string()
    }

    /// Requests received so far.
    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

fn serve(mut stream: TcpStream, handler: &Handler, log: &Mutex<Vec<Seen>>) {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match stream.read(&mut byte) {
            // Not HTTP (a TLS handshake, say): hang up at once.
            Ok(1) if head.is_empty() && !byte[0].is_ascii_uppercase() => return,
            Ok(1) => head.push(byte[0]),
            _ => return,
        }
        if head.len() > 64 * 1024 {
            return;
        }
    }
    let text = String::from_utf8_lossy(&head).into_owned();
    let mut lines = text.split("\r\n");
    let target = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .unwrap_or("/")
        .to_string();
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let seen = Seen { target, headers };
    log.lock().unwrap().push(seen.clone());
    match handler(&seen) {
        Reply::Full {
            status,
            headers,
            body,
        } => {
            let mut out = format!(
                "HTTP/1.1 {status} X\r\nContent-Length: {}\r\nConnection: close\r\n",
                body.len()
            );
            for (n, v) in headers {
                out.push_str(&format!("{n}: {v}\r\n"));
            }
            out.push_str("\r\n");
            let _ = stream.write_all(out.as_bytes());
            let _ = stream.write_all(&body);
        }
        Reply::Endless {
            content_type,
            chunk,
            times,
        } => {
            let out = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nConnection: close\r\n\r\n"
            );
            let _ = stream.write_all(out.as_bytes());
            for _ in 0..times {
                if stream.write_all(&chunk).is_err() {
                    return;
                }
            }
        }
        Reply::Stall(d) => thread::sleep(d),
    }
    let _ = stream.flush();
}
