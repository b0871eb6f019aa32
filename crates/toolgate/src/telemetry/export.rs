//! The export thread: spans queue in a bounded queue (full: dropped, never
//! waited for), and one background thread sends them in batches over
//! OTLP/HTTP (protobuf), [`BATCH_DELAY`] after a batch starts or when
//! [`BATCH_MAX`] are waiting.

use std::sync::atomic::Ordering;
use std::sync::mpsc::SyncSender;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use super::Counts;
use super::otlp::{FinishedSpan, encode_batch, put_span_entry};

/// Spans sent in one request at most.
const BATCH_MAX: usize = 512;
/// How long a span waits for others before its batch is sent.
const BATCH_DELAY: Duration = Duration::from_millis(500);
/// The collector's time to answer one request, unless
/// `OTEL_EXPORTER_OTLP_TIMEOUT` says otherwise.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);

/// The spans waiting for export, shared by the callers and the export
/// thread. A caller encodes its span into the open batch's buffer under the
/// lock (no copy of its strings, nothing for another thread to free); it
/// wakes the thread only when a batch starts (to time it) or fills, so a call
/// does not pay for a thread switch per span.
pub(super) struct Queue {
    state: Mutex<Waiting>,
    ready: Condvar,
    capacity: usize,
}

/// Encoded spans, one batch's worth at most.
#[derive(Default)]
struct Batch {
    /// The spans, each as an entry of `ScopeSpans` ([`put_span_entry`]).
    entries: Vec<u8>,
    spans: usize,
}

#[derive(Default)]
struct Waiting {
    /// Batches that reached [`BATCH_MAX`].
    full: Vec<Batch>,
    /// The batch spans are added to.
    open: Batch,
    /// Spans in `full` and `open`.
    spans: usize,
    flushes: Vec<SyncSender<()>>,
}

impl Waiting {
    fn is_empty(&self) -> bool {
        self.spans == 0
    }
}

impl Queue {
    fn lock(&self) -> MutexGuard<'_, Waiting> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Queues a span; a full queue drops it (the call never waits).
    pub(super) fn offer(&self, span: &FinishedSpan<'_>) {
        let mut w = self.lock();
        if w.spans >= self.capacity {
            return;
        }
        put_span_entry(&mut w.open.entries, span);
        w.open.spans += 1;
        w.spans += 1;
        let filled = w.open.spans >= BATCH_MAX;
        if filled {
            let batch = std::mem::take(&mut w.open);
            w.full.push(batch);
        }
        let first = w.spans == 1;
        drop(w);
        if first || filled {
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
    /// PEM files for TLS to the collector.
    pub tls: TlsFiles,
}

/// PEM files for TLS to the collector: the CA to trust beside the system's
/// (`[telemetry] certificate`, `OTEL_EXPORTER_OTLP_CERTIFICATE`), and a
/// client certificate and key for mutual TLS
/// (`OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE` / `…_CLIENT_KEY`); each also in
/// its `…_TRACES_…` form, which wins.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct TlsFiles {
    /// The CA certificate(s) the collector's certificate chains to.
    pub ca: Option<std::path::PathBuf>,
    /// This client's certificate chain.
    pub client_certificate: Option<std::path::PathBuf>,
    /// Its private key.
    pub client_key: Option<std::path::PathBuf>,
}

impl Destination {
    /// The destination from `[telemetry] endpoint` (a base URL) or else the
    /// standard variables, read through `var`: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`
    /// (used as is), `OTEL_EXPORTER_OTLP_ENDPOINT` (a base URL), else
    /// `http://localhost:4318`; headers from `OTEL_EXPORTER_OTLP_HEADERS` and
    /// `…_TRACES_HEADERS` (`key=value,…`, values percent-decoded); timeout from
    /// `OTEL_EXPORTER_OTLP_TIMEOUT` / `…_TRACES_TIMEOUT` (milliseconds); TLS
    /// files as [`TlsFiles`] says (`certificate` is `[telemetry]`'s).
    pub fn resolve(
        endpoint: Option<&str>,
        certificate: Option<&std::path::Path>,
        var: impl Fn(&str) -> Option<String>,
    ) -> Destination {
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
        let file = |what: &str| {
            [
                format!("OTEL_EXPORTER_OTLP_TRACES_{what}"),
                format!("OTEL_EXPORTER_OTLP_{what}"),
            ]
            .iter()
            .find_map(|n| var(n).filter(|v| !v.trim().is_empty()))
            .map(std::path::PathBuf::from)
        };
        let tls = TlsFiles {
            ca: certificate
                .map(std::path::Path::to_path_buf)
                .or_else(|| file("CERTIFICATE")),
            client_certificate: file("CLIENT_CERTIFICATE"),
            client_key: file("CLIENT_KEY"),
        };
        Destination {
            url,
            headers,
            timeout,
            tls,
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
        let (batches, flushes) = {
            let mut w = queue.lock();
            while w.is_empty() && w.flushes.is_empty() {
                w = queue.ready.wait(w).unwrap_or_else(PoisonError::into_inner);
            }
            let deadline = Instant::now() + BATCH_DELAY;
            while w.full.is_empty() && w.flushes.is_empty() {
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
            let mut batches = std::mem::take(&mut w.full);
            let open = std::mem::take(&mut w.open);
            if open.spans > 0 {
                batches.push(open);
            }
            w.spans = 0;
            (batches, std::mem::take(&mut w.flushes))
        };
        if let Some(sender) = &sender {
            for batch in &batches {
                send(sender, counts, batch);
            }
        }
        for done in flushes {
            let _ = done.send(());
        }
    }
}

fn send(sender: &Sender, counts: &Counts, batch: &Batch) {
    let body = encode_batch("toolgate", env!("CARGO_PKG_VERSION"), &batch.entries);
    match sender.post(body) {
        Ok(()) => {
            counts
                .delivered
                .fetch_add(batch.spans as u64, Ordering::Relaxed);
        }
        Err(e) => {
            tracing::debug!("OTLP export failed: {e}");
            set_error(counts, e);
        }
    }
}

fn set_error(counts: &Counts, e: String) {
    *counts
        .last_error
        .lock()
        .unwrap_or_else(PoisonError::into_inner) = Some(e);
}

/// An HTTP client on the export thread's own single-threaded runtime, so
/// that export never uses the caller's.
/// `builder` trusting `tls`'s CA beside the system's, and presenting its
/// client certificate; a file that cannot be read or parsed is an error
/// naming it.
fn with_tls(
    builder: reqwest::ClientBuilder,
    tls: &TlsFiles,
) -> Result<reqwest::ClientBuilder, String> {
    let read = |what: &str, path: &std::path::Path| {
        std::fs::read(path).map_err(|e| format!("cannot read the {what} {}: {e}", path.display()))
    };
    let mut builder = builder;
    if let Some(ca) = &tls.ca {
        let pem = read("collector's CA certificate", ca)?;
        let certs = reqwest::Certificate::from_pem_bundle(&pem)
            .ok()
            .filter(|c| !c.is_empty())
            .ok_or_else(|| format!("{} holds no PEM certificate", ca.display()))?;
        builder = builder.tls_certs_merge(certs);
    }
    match (&tls.client_certificate, &tls.client_key) {
        (None, None) => {}
        (Some(cert), Some(key)) => {
            let mut pem = read("client certificate", cert)?;
            pem.push(b'\n');
            pem.extend(read("client key", key)?);
            let identity = reqwest::Identity::from_pem(&pem).map_err(|e| {
                format!(
                    "{} and {} are not a PEM certificate and its key: {e}",
                    cert.display(),
                    key.display()
                )
            })?;
            builder = builder.identity(identity);
        }
        _ => {
            return Err(
                "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE and OTEL_EXPORTER_OTLP_CLIENT_KEY go together: one is set without the other".into(),
            );
        }
    }
    Ok(builder)
}

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
        let client = with_tls(
            reqwest::Client::builder().timeout(destination.timeout),
            &destination.tls,
        )?
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

    fn queue(capacity: usize) -> Queue {
        Queue {
            state: Mutex::new(Waiting::default()),
            ready: Condvar::new(),
            capacity,
        }
    }

    fn span() -> FinishedSpan<'static> {
        FinishedSpan {
            trace_id: [1; 16],
            span_id: [2; 8],
            parent: None,
            name: "execute_tool read".into(),
            kind: super::super::otlp::SpanKind::Internal,
            start_ns: 1,
            end_ns: 2,
            attributes: Vec::new(),
            error: None,
        }
    }

    #[test]
    fn spans_fill_batches_of_the_batch_size_and_a_full_queue_drops() {
        let q = queue(10 * BATCH_MAX);
        for _ in 0..2 * BATCH_MAX + 3 {
            q.offer(&span());
        }
        let w = q.lock();
        assert_eq!(w.full.len(), 2);
        assert!(w.full.iter().all(|b| b.spans == BATCH_MAX));
        assert_eq!(w.open.spans, 3);
        assert_eq!(w.spans, 2 * BATCH_MAX + 3);
        let mut one = Vec::new();
        put_span_entry(&mut one, &span());
        assert_eq!(w.open.entries.len(), 3 * one.len());
        drop(w);

        let small = queue(5);
        for _ in 0..8 {
            small.offer(&span());
        }
        assert_eq!(small.lock().spans, 5);
    }

    #[test]
    fn the_configured_endpoint_wins_over_the_variables() {
        let d = Destination::resolve(
            Some("http://c:4318/"),
            None,
            vars(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://other:1")]),
        );
        assert_eq!(d.url, "http://c:4318/v1/traces");
    }

    #[test]
    fn the_traces_endpoint_is_used_as_is_and_the_base_gets_the_path() {
        let d = Destination::resolve(
            None,
            None,
            vars(&[
                ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "https://t/x"),
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://b"),
            ]),
        );
        assert_eq!(d.url, "https://t/x");
        let d = Destination::resolve(
            None,
            None,
            vars(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://b")]),
        );
        assert_eq!(d.url, "http://b/v1/traces");
        let d = Destination::resolve(None, None, vars(&[]));
        assert_eq!(d.url, "http://localhost:4318/v1/traces");
    }

    #[test]
    fn headers_are_split_decoded_and_the_traces_ones_win() {
        let d = Destination::resolve(
            None,
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
    fn tls_files_come_from_the_config_then_the_traces_variables_then_the_general_ones() {
        let d = Destination::resolve(
            None,
            Some(std::path::Path::new("/etc/ca.pem")),
            vars(&[
                ("OTEL_EXPORTER_OTLP_CERTIFICATE", "/env/ca.pem"),
                ("OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE", "/env/cert.pem"),
                (
                    "OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE",
                    "/t/cert.pem",
                ),
                ("OTEL_EXPORTER_OTLP_CLIENT_KEY", "/env/key.pem"),
            ]),
        );
        assert_eq!(
            d.tls.ca.as_deref(),
            Some(std::path::Path::new("/etc/ca.pem"))
        );
        assert_eq!(
            d.tls.client_certificate.as_deref(),
            Some(std::path::Path::new("/t/cert.pem"))
        );
        assert_eq!(
            d.tls.client_key.as_deref(),
            Some(std::path::Path::new("/env/key.pem"))
        );
        let d = Destination::resolve(
            None,
            None,
            vars(&[("OTEL_EXPORTER_OTLP_CERTIFICATE", "/env/ca.pem")]),
        );
        assert_eq!(
            d.tls.ca.as_deref(),
            Some(std::path::Path::new("/env/ca.pem"))
        );
        assert_eq!(
            Destination::resolve(None, None, vars(&[])).tls,
            TlsFiles::default()
        );
    }

    #[test]
    fn unreadable_or_mismatched_tls_files_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nope.pem");
        let not_pem = dir.path().join("junk.pem");
        std::fs::write(&not_pem, "not a certificate").unwrap();
        let err = |tls: TlsFiles| match with_tls(reqwest::Client::builder(), &tls) {
            Err(e) => e,
            Ok(_) => panic!("{tls:?} was accepted"),
        };
        let e = err(TlsFiles {
            ca: Some(missing.clone()),
            ..TlsFiles::default()
        });
        assert!(e.contains("nope.pem"), "{e}");
        let e = err(TlsFiles {
            ca: Some(not_pem.clone()),
            ..TlsFiles::default()
        });
        assert!(e.contains("junk.pem holds no PEM certificate"), "{e}");
        let e = err(TlsFiles {
            client_certificate: Some(not_pem.clone()),
            ..TlsFiles::default()
        });
        assert!(e.contains("go together"), "{e}");
        let e = err(TlsFiles {
            client_certificate: Some(not_pem.clone()),
            client_key: Some(not_pem),
            ..TlsFiles::default()
        });
        assert!(e.contains("not a PEM certificate and its key"), "{e}");
    }

    #[test]
    fn a_bad_percent_escape_is_kept_as_written() {
        assert_eq!(percent_decode("a%2"), "a%2");
        assert_eq!(percent_decode("%zz%41"), "%zzA");
    }
}
