//! The export thread: spans queue in a bounded queue (full: dropped, never
//! waited for), and one background thread sends them in batches over
//! OTLP/HTTP (protobuf), [`BATCH_DELAY`] after a batch starts or when
//! [`BATCH_MAX`] are waiting.

use std::sync::atomic::Ordering;
use std::sync::mpsc::SyncSender;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use super::Counts;
use super::otlp::{FinishedSpan, encode_request};

/// Spans sent in one request at most.
const BATCH_MAX: usize = 512;
/// How long a span waits for others before its batch is sent.
const BATCH_DELAY: Duration = Duration::from_millis(500);
/// The collector's time to answer one request, unless
/// `OTEL_EXPORTER_OTLP_TIMEOUT` says otherwise.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);

/// The spans waiting for export, shared by the callers and the export
/// thread. A caller only takes the lock and pushes; it wakes the thread only
/// when a batch starts (to time it) or fills, so a call does not pay for a
/// thread switch per span.
pub(super) struct Queue {
    state: Mutex<Waiting>,
    ready: Condvar,
    capacity: usize,
}

#[derive(Default)]
struct Waiting {
    spans: Vec<FinishedSpan>,
    flushes: Vec<SyncSender<()>>,
}

impl Queue {
    fn lock(&self) -> MutexGuard<'_, Waiting> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Queues a span; a full queue drops it (the call never waits).
    pub(super) fn offer(&self, span: FinishedSpan) {
        let mut w = self.lock();
        if w.spans.len() >= self.capacity {
            return;
        }
        w.spans.push(span);
        let n = w.spans.len();
        drop(w);
        if n == 1 || n == BATCH_MAX {
            self.ready.notify_one();
        }
    }

    /// Asks for what is queued to be sent now; `done` is answered after.
    pub(super) fn flush(&self, done: SyncSender<()>) {
        self.lock().flushes.push(done);
        self.ready.notify_one();
    }
}

/// Where and how spans are sent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Destination {
    /// The full URL requests are posted to (`…/v1/traces`).
    pub url: String,
    /// Extra request headers (`OTEL_EXPORTER_OTLP_HEADERS`).
    pub headers: Vec<(String, String)>,
    /// The time the collector has to answer.
    pub timeout: Duration,
}

impl Destination {
    /// The destination from `[telemetry] endpoint` (a base URL) or else the
    /// standard variables, read through `var`: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`
    /// (used as is), `OTEL_EXPORTER_OTLP_ENDPOINT` (a base URL), else
    /// `http://localhost:4318`; headers from `OTEL_EXPORTER_OTLP_HEADERS` and
    /// `…_TRACES_HEADERS` (`key=value,…`, values percent-decoded); timeout from
    /// `OTEL_EXPORTER_OTLP_TIMEOUT` / `…_TRACES_TIMEOUT` (milliseconds).
    pub fn resolve(endpoint: Option<&str>, var: impl Fn(&str) -> Option<String>) -> Destination {
        let traces = |base: &str| format!("{}/v1/traces", base.trim_end_matches('/'));
        let url = match endpoint {
            Some(base) => traces(base),
            None => match var("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT").filter(|v| !v.is_empty()) {
                Some(url) => url,
                None => traces(
                    &var("OTEL_EXPORTER_OTLP_ENDPOINT")
                        .filter(|v| !v.is_empty())
                        .unwrap_or_else(|| "http://localhost:4318".into()),
                ),
            },
        };
        let mut headers = Vec::new();
        for name in [
            "OTEL_EXPORTER_OTLP_HEADERS",
            "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
        ] {
            for pair in var(name).unwrap_or_default().split(',') {
                if let Some((k, v)) = pair.split_once('=') {
                    let (k, v) = (k.trim(), percent_decode(v.trim()));
                    if !k.is_empty() {
                        headers.retain(|(old, _): &(String, String)| !old.eq_ignore_ascii_case(k));
                        headers.push((k.to_string(), v));
                    }
                }
            }
        }
        let timeout = [
            "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT",
            "OTEL_EXPORTER_OTLP_TIMEOUT",
        ]
        .iter()
        .find_map(|n| var(n)?.trim().parse::<u64>().ok())
        .map_or(DEFAULT_TIMEOUT, Duration::from_millis);
        Destination {
            url,
            headers,
            timeout,
        }
    }
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        if b[i] == b'%' && i + 2 < b.len() {
            if let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Starts the export thread; spans go to the returned queue.
pub(super) fn start(
    destination: Destination,
    counts: Arc<Counts>,
    capacity: usize,
) -> Result<Arc<Queue>, String> {
    let queue = Arc::new(Queue {
        state: Mutex::new(Waiting::default()),
        ready: Condvar::new(),
        capacity,
    });
    let theirs = Arc::clone(&queue);
    std::thread::Builder::new()
        .name("toolgate-otlp".into())
        .spawn(move || run(&destination, &counts, &theirs))
        .map_err(|e| format!("cannot start the OTLP export thread: {e}"))?;
    Ok(queue)
}

fn run(destination: &Destination, counts: &Counts, queue: &Queue) {
    let sender = Sender::new(destination)
        .map_err(|e| set_error(counts, e))
        .ok();
    loop {
        let (mut batch, flushes) = {
            let mut w = queue.lock();
            while w.spans.is_empty() && w.flushes.is_empty() {
                w = queue.ready.wait(w).unwrap_or_else(PoisonError::into_inner);
            }
            // A batch waits for others at most BATCH_DELAY, less when it
            // fills or a flush is asked for.
            let deadline = Instant::now() + BATCH_DELAY;
            while w.spans.len() < BATCH_MAX && w.flushes.is_empty() {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    break;
                }
                w = queue
                    .ready
                    .wait_timeout(w, left)
                    .unwrap_or_else(PoisonError::into_inner)
                    .0;
            }
            (std::mem::take(&mut w.spans), std::mem::take(&mut w.flushes))
        };
        match &sender {
            Some(sender) => send(sender, counts, &mut batch),
            // Nothing can be sent (the error is recorded): drop.
            None => batch.clear(),
        }
        for done in flushes {
            let _ = done.send(());
        }
    }
}

fn send(sender: &Sender, counts: &Counts, batch: &mut Vec<FinishedSpan>) {
    for chunk in batch.chunks(BATCH_MAX) {
        let body = encode_request("toolgate", env!("CARGO_PKG_VERSION"), chunk);
        match sender.post(body) {
            Ok(()) => {
                counts
                    .delivered
                    .fetch_add(chunk.len() as u64, Ordering::Relaxed);
            }
            Err(e) => {
                tracing::debug!("OTLP export failed: {e}");
                set_error(counts, e);
            }
        }
    }
    batch.clear();
}

fn set_error(counts: &Counts, e: String) {
    *counts
        .last_error
        .lock()
        .unwrap_or_else(PoisonError::into_inner) = Some(e);
}

/// An HTTP client on the export thread's own single-threaded runtime, so
/// that export never uses the caller's.
struct Sender {
    runtime: tokio::runtime::Runtime,
    client: reqwest::Client,
    destination: Destination,
}

impl Sender {
    fn new(destination: &Destination) -> Result<Sender, String> {
        // The workspace builds reqwest with rustls and no default provider.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| format!("cannot start the OTLP exporter's runtime: {e}"))?;
        let client = reqwest::Client::builder()
            .timeout(destination.timeout)
            .build()
            .map_err(|e| format!("cannot start the OTLP exporter's HTTP client: {e}"))?;
        Ok(Sender {
            runtime,
            client,
            destination: destination.clone(),
        })
    }

    fn post(&self, body: Vec<u8>) -> Result<(), String> {
        let mut request = self
            .client
            .post(&self.destination.url)
            .header("content-type", "application/x-protobuf")
            .body(body);
        for (k, v) in &self.destination.headers {
            request = request.header(k.as_str(), v.as_str());
        }
        let url = &self.destination.url;
        self.runtime.block_on(async {
            let response = request
                .send()
                .await
                .map_err(|e| format!("OTLP export to {url} failed: {e}"))?;
            let status = response.status();
            // Read the body so the connection can be reused.
            let _ = response.bytes().await;
            if status.is_success() {
                Ok(())
            } else {
                Err(format!("the OTLP collector at {url} answered {status}"))
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |n| {
            pairs
                .iter()
                .find(|(k, _)| *k == n)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn the_configured_endpoint_wins_over_the_variables() {
        let d = Destination::resolve(
            Some("http://c:4318/"),
            vars(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://other:1")]),
        );
        assert_eq!(d.url, "http://c:4318/v1/traces");
    }

    #[test]
    fn the_traces_endpoint_is_used_as_is_and_the_base_gets_the_path() {
        let d = Destination::resolve(
            None,
            vars(&[
                ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "https://t/x"),
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://b"),
            ]),
        );
        assert_eq!(d.url, "https://t/x");
        let d = Destination::resolve(None, vars(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://b")]));
        assert_eq!(d.url, "http://b/v1/traces");
        let d = Destination::resolve(None, vars(&[]));
        assert_eq!(d.url, "http://localhost:4318/v1/traces");
    }

    #[test]
    fn headers_are_split_decoded_and_the_traces_ones_win() {
        let d = Destination::resolve(
            None,
            vars(&[
                (
                    "OTEL_EXPORTER_OTLP_HEADERS",
                    "api-key=a%20b, x-team=core,broken",
                ),
                ("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "API-KEY=c"),
                ("OTEL_EXPORTER_OTLP_TIMEOUT", "250"),
            ]),
        );
        assert_eq!(
            d.headers,
            vec![
                ("x-team".to_string(), "core".to_string()),
                ("API-KEY".to_string(), "c".to_string())
            ]
        );
        assert_eq!(d.timeout, Duration::from_millis(250));
    }

    #[test]
    fn a_bad_percent_escape_is_kept_as_written() {
        assert_eq!(percent_decode("a%2"), "a%2");
        assert_eq!(percent_decode("%zz%41"), "%zzA");
    }
}
