//! MCP over stdio: newline-delimited JSON-RPC on stdin/stdout, one session.
//!
//! The SDK reads and writes through `LineTransport`, which bounds input so
//! that bad input gets an answer instead of silence: a message over
//! [`StdioOptions::max_message_bytes`] is skipped without being buffered and
//! answered with `-32600` naming the size and the limit (with the request's id
//! when it appears early in the message); a line that is not JSON is answered
//! with `-32700`, and JSON that is not a JSON-RPC message with `-32600`.
//!
//! Messages go straight between the file descriptors and the SDK's service
//! loop: no relay tasks or in-memory pipes, so a call costs no thread
//! wake-ups for its transport beyond the event loop's own.

use std::sync::Arc;
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::service::{RoleServer, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{Mutex, Semaphore};
use toolgate_core::pipeline::CANCEL_GRACE;

use crate::error::ServeError;
use crate::frame::{INVALID_REQUEST, PARSE_ERROR, error_line, scan_id, syntax_error};
use crate::server::ToolgateServer;

mod stdio_fd;

/// How much of an oversized message is kept to find its id.
const ID_PREFIX: usize = 64 * 1024;
/// The read buffer: a pipe's capacity, so one read takes what is there.
const PIPE: usize = 256 * 1024;
/// Answers to bad input being written at once; past them the transport
/// reads no more input until one is written.
const REPLIES_IN_FLIGHT: usize = 16;

/// Limits of the stdio transport.
#[derive(Clone, Copy, Debug)]
pub struct StdioOptions {
    /// The largest message accepted, in bytes (default 16 MiB).
    pub max_message_bytes: usize,
}

impl Default for StdioOptions {
    fn default() -> Self {
        StdioOptions {
            max_message_bytes: 16 * 1024 * 1024,
        }
    }
}

/// Serves one MCP session on the process's stdin and stdout until stdin closes,
/// then waits for cancelled calls to record their end.
///
/// When stdin and stdout are pipes or sockets (as MCP clients start servers),
/// they are read and written on the runtime's worker threads, through the event
/// loop; `tokio::io::stdin`/`stdout` would hand every read and write to a
/// blocking-pool thread, two thread switches per message. A terminal or a file
/// falls back to those.
pub async fn serve_stdio(server: &ToolgateServer, options: StdioOptions) -> Result<(), ServeError> {
    let reader = stdio_fd::reader();
    let writer = stdio_fd::writer();
    serve_stdio_on(server, reader, writer, options).await
}

/// Like [`serve_stdio`], over any reader and writer.
pub async fn serve_stdio_on<R, W>(
    server: &ToolgateServer,
    reader: R,
    writer: W,
    options: StdioOptions,
) -> Result<(), ServeError>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let transport = LineTransport::new(reader, writer, options);
    let writer = Arc::clone(&transport.writer);
    let connection = server.connection();
    let session = connection.session_id().to_string();
    tracing::info!(session = %session, "MCP session on stdio");
    let outcome = match connection.serve(transport).await {
        Ok(running) => {
            let reason = running.waiting().await;
            tracing::info!(session = %session, ?reason, "MCP stdio session ended");
            Ok(())
        }
        Err(e) => Err(ServeError::Start(e.to_string())),
    };
    // Cancelled calls finish by recording `tool.failed`; wait for that.
    if !server.drain(CANCEL_GRACE + Duration::from_secs(1)).await {
        tracing::warn!("calls still running at shutdown");
    }
    let written = writer.lock().await.failed.take();
    match (outcome, written) {
        (Err(e), _) => Err(e),
        (Ok(()), Some(e)) => Err(e),
        _ => Ok(()),
    }
}

/// Newline-delimited JSON-RPC over a reader and a writer, with bounded input
/// (see the module docs).
struct LineTransport<R, W> {
    reader: BufReader<R>,
    /// The line being read. `receive` is polled in a `select!` and dropped
    /// whenever another branch is ready first, so a partial line lives here,
    /// not in the future, and the next `receive` goes on with it.
    line: Vec<u8>,
    /// Bytes of the current line so far (it may be past the limit).
    total: usize,
    writer: Arc<Mutex<LineWriter<W>>>,
    options: StdioOptions,
    /// An answer to bad input waiting for one of `reply_slots`: kept here, so
    /// that a dropped `receive` loses nothing.
    waiting_reply: Option<Vec<u8>>,
    /// [`REPLIES_IN_FLIGHT`] permits, one held by each answer being written.
    reply_slots: Arc<Semaphore>,
}

/// The write half, shared by the replies to calls and to bad input.
struct LineWriter<W> {
    out: W,
    /// The first write error: the session ends with it.
    failed: Option<ServeError>,
}

impl<W: AsyncWrite + Unpin> LineWriter<W> {
    /// Writes one whole line and flushes it.
    async fn write_line(&mut self, line: &[u8]) -> std::io::Result<()> {
        let written = async {
            self.out.write_all(line).await?;
            self.out.flush().await
        }
        .await;
        if let Err(e) = &written {
            if self.failed.is_none() {
                self.failed = Some(ServeError::io(
                    "writing to stdout",
                    std::io::Error::new(e.kind(), e.to_string()),
                ));
            }
        }
        written
    }
}

/// What one read step ended with.
enum Line {
    Eof,
    Complete,
    Oversized { prefix: Vec<u8>, total: usize },
}

impl<R, W> LineTransport<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    fn new(reader: R, writer: W, options: StdioOptions) -> Self {
        Self::with_buffer(reader, writer, options, PIPE)
    }

    fn with_buffer(reader: R, writer: W, options: StdioOptions, buffer: usize) -> Self {
        LineTransport {
            reader: BufReader::with_capacity(buffer, reader),
            line: Vec::new(),
            total: 0,
            writer: Arc::new(Mutex::new(LineWriter {
                out: writer,
                failed: None,
            })),
            options,
            waiting_reply: None,
            reply_slots: Arc::new(Semaphore::new(REPLIES_IN_FLIGHT)),
        }
    }

    /// Reads on with the current line, keeping at most the limit; past it,
    /// only a prefix is kept and the rest is counted and dropped. Safe to
    /// cancel: what was read is in `self`.
    async fn read_line(&mut self) -> std::io::Result<Line> {
        let max = self.options.max_message_bytes;
        loop {
            let buf = self.reader.fill_buf().await?;
            if buf.is_empty() {
                // A last line without a newline still counts.
                return Ok(match std::mem::take(&mut self.total) {
                    0 => Line::Eof,
                    total if total > max => Line::Oversized {
                        prefix: std::mem::take(&mut self.line),
                        total,
                    },
                    _ => Line::Complete,
                });
            }
            let (chunk, done) = match buf.iter().position(|&b| b == b'\n') {
                Some(i) => (&buf[..=i], true),
                None => (buf, false),
            };
            let was_over = self.total > max;
            self.total += chunk.len();
            if self.total > max {
                if !was_over {
                    self.line.truncate(ID_PREFIX);
                }
                let room = ID_PREFIX.saturating_sub(self.line.len());
                self.line.extend_from_slice(&chunk[..room.min(chunk.len())]);
            } else {
                self.line.extend_from_slice(chunk);
            }
            let used = chunk.len();
            self.reader.consume(used);
            if done {
                let total = std::mem::take(&mut self.total);
                if total > max {
                    return Ok(Line::Oversized {
                        prefix: std::mem::take(&mut self.line),
                        total,
                    });
                }
                return Ok(Line::Complete);
            }
        }
    }

    /// Queues the answer to bad input; [`Self::send_waiting_reply`] sends it
    /// before anything more is read.
    fn reply(&mut self, line: Vec<u8>) {
        self.waiting_reply = Some(line);
    }

    /// Writes the waiting answer on its own task once fewer than
    /// [`REPLIES_IN_FLIGHT`] are being written: a reply written here could
    /// be cut off when `receive` is dropped, and the shared writer keeps
    /// lines whole. Waiting here holds back a client that sends bad input
    /// and reads no answers, rather than a task per line piling up. Safe to
    /// cancel: the answer stays until a slot is taken.
    async fn send_waiting_reply(&mut self) {
        if self.waiting_reply.is_none() {
            return;
        }
        let Ok(slot) = Arc::clone(&self.reply_slots).acquire_owned().await else {
            return;
        };
        let Some(line) = self.waiting_reply.take() else {
            return;
        };
        let writer = Arc::clone(&self.writer);
        tokio::spawn(async move {
            let _ = writer.lock().await.write_line(&line).await;
            drop(slot);
        });
    }

    /// The next message, answering and skipping bad input; `None` at the end.
    async fn next_message(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            self.send_waiting_reply().await;
            match self.read_line().await {
                Ok(Line::Eof) => return None,
                Ok(Line::Complete) => {
                    let body = trim_line(&self.line);
                    if body.is_empty() {
                        self.line.clear();
                        continue;
                    }
                    if let Some(call) = crate::call_request::decode(body) {
                        self.line.clear();
                        return Some(call);
                    }
                    let reply = match serde_json::from_slice::<RxJsonRpcMessage<RoleServer>>(body) {
                        Ok(message) => {
                            // The buffer keeps its capacity for the next line.
                            self.line.clear();
                            return Some(message);
                        }
                        Err(_) => match syntax_error(body) {
                            Some(message) => {
                                tracing::debug!(%message, "unparsable message on stdin");
                                Some(error_line(
                                    None,
                                    PARSE_ERROR,
                                    &format!("Parse error: {message}"),
                                ))
                            }
                            None => invalid_message(body),
                        },
                    };
                    self.line.clear();
                    if let Some(reply) = reply {
                        self.reply(reply);
                    }
                }
                Ok(Line::Oversized { prefix, total }) => {
                    tracing::warn!(
                        bytes = total,
                        limit = self.options.max_message_bytes,
                        "oversized message on stdin"
                    );
                    let message = format!(
                        "request too large: {total} bytes exceeds the limit of {} bytes; nothing was run",
                        self.options.max_message_bytes
                    );
                    self.reply(error_line(scan_id(&prefix), INVALID_REQUEST, &message));
                }
                Err(e) => {
                    tracing::error!(error = %e, "reading stdin failed");
                    return None;
                }
            }
        }
    }
}

/// The answer to JSON that is not a JSON-RPC message the server knows: a
/// request (it has an id) gets `-32600`; a notification gets nothing, as
/// JSON-RPC has no way to answer one (clients send notifications of their
/// own that a server ignores).
fn invalid_message(body: &[u8]) -> Option<Vec<u8>> {
    let value: serde_json::Value = serde_json::from_slice(body).ok()?;
    let id = value.get("id").cloned();
    if id.is_none() && value.get("method").is_some() {
        tracing::debug!("ignoring a notification the server does not know");
        return None;
    }
    tracing::debug!("invalid JSON-RPC message on stdin");
    Some(error_line(
        id,
        INVALID_REQUEST,
        "Invalid request: not a JSON-RPC 2.0 message the server accepts",
    ))
}

impl<R, W> Transport<RoleServer> for LineTransport<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let writer = Arc::clone(&self.writer);
        let line = serde_json::to_vec(&item).map(|mut line| {
            line.push(b'\n');
            line
        });
        async move {
            let line = line.map_err(std::io::Error::other)?;
            writer.lock().await.write_line(&line).await
        }
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleServer>>> + Send {
        self.next_message()
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.writer.lock().await.out.flush().await
    }
}

pub(crate) fn trim_line(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    line.trim_ascii()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn transport(data: &'static str, max: usize) -> LineTransport<&'static [u8], tokio::io::Sink> {
        let options = StdioOptions {
            max_message_bytes: max,
        };
        LineTransport::with_buffer(data.as_bytes(), tokio::io::sink(), options, 16)
    }

    #[tokio::test]
    async fn lines_are_bounded_across_reads() {
        let data: &'static str =
            Box::leak(format!("{}\nshort\n{}", "a".repeat(100), "b".repeat(10)).into_boxed_str());
        let mut t = transport(data, 50);
        match t.read_line().await.unwrap() {
            Line::Oversized { prefix, total } => {
                assert_eq!(total, 101);
                assert_eq!(prefix.len(), 101.min(ID_PREFIX));
            }
            _ => panic!("expected oversized"),
        }
        assert!(matches!(t.read_line().await.unwrap(), Line::Complete));
        assert_eq!(t.line, b"short\n");
        t.line.clear();
        assert!(matches!(t.read_line().await.unwrap(), Line::Complete));
        assert_eq!(t.line, b"bbbbbbbbbb");
        t.line.clear();
        assert!(matches!(t.read_line().await.unwrap(), Line::Eof));
    }

    #[tokio::test]
    async fn a_partial_line_survives_a_dropped_receive() {
        // The service loop drops `receive` whenever another branch is ready:
        // what was read so far must not be lost.
        let (mut client, server) = tokio::io::duplex(64);
        let mut t =
            LineTransport::with_buffer(server, tokio::io::sink(), StdioOptions::default(), 8);
        client.write_all(br#"{"jsonrpc":"2.0","#).await.unwrap();
        let first = tokio::time::timeout(Duration::from_millis(50), t.next_message()).await;
        assert!(first.is_err(), "no message yet");
        client
            .write_all(br#""id":1,"method":"ping"}"#.as_slice())
            .await
            .unwrap();
        client.write_all(b"\n").await.unwrap();
        let message = t.next_message().await.expect("the message");
        let text = serde_json::to_string(&message).unwrap();
        assert!(text.contains("ping"), "{text}");
    }

    /// A client that sends bad input and reads none of the answers: each
    /// answer waited for the full pipe in a task of its own, one per line
    /// (5,000 here), the memory growing with the input. Now a few answers
    /// are in flight and the transport stops reading until one is written.
    #[tokio::test]
    async fn a_flood_of_bad_lines_whose_answers_are_never_read_is_held_back() {
        let mut input = Vec::new();
        for i in 0..5_000 {
            input.extend_from_slice(format!("{{\"id\":{i},\"what\":1}}\n").as_bytes());
        }
        // Room for one answer's first bytes only; the other end is never read.
        let (ours, _theirs) = tokio::io::duplex(16);
        let mut t = LineTransport::with_buffer(
            std::io::Cursor::new(input),
            ours,
            StdioOptions::default(),
            PIPE,
        );
        let metrics = tokio::runtime::Handle::current().metrics();
        let before = metrics.num_alive_tasks();
        let next = tokio::time::timeout(Duration::from_millis(200), t.next_message()).await;
        assert!(next.is_err(), "held back, not at the end of the input");
        tokio::task::yield_now().await;
        let alive = metrics.num_alive_tasks() - before;
        assert!(alive <= REPLIES_IN_FLIGHT, "{alive} answers in flight");
    }

    #[tokio::test]
    async fn answers_to_bad_lines_all_arrive_when_the_client_reads_them() {
        let mut input = Vec::new();
        for i in 0..200 {
            input.extend_from_slice(format!("{{\"id\":{i},\"what\":1}}\n").as_bytes());
        }
        input.extend_from_slice(b"not json\n");
        let (ours, theirs) = tokio::io::duplex(64);
        let reading = tokio::spawn(async move {
            let mut lines = BufReader::new(theirs).lines();
            let mut ids = Vec::new();
            while let Ok(Some(line)) = lines.next_line().await {
                let v: serde_json::Value = serde_json::from_str(&line).unwrap();
                ids.push(v["id"].clone());
                if ids.len() == 201 {
                    break;
                }
            }
            ids
        });
        let mut t = LineTransport::with_buffer(
            std::io::Cursor::new(input),
            ours,
            StdioOptions::default(),
            PIPE,
        );
        assert!(t.next_message().await.is_none());
        let ids = tokio::time::timeout(Duration::from_secs(20), reading)
            .await
            .expect("every answer written")
            .unwrap();
        let mut numbers: Vec<i64> = ids.iter().filter_map(serde_json::Value::as_i64).collect();
        numbers.sort_unstable();
        assert_eq!(numbers, (0..200).collect::<Vec<_>>());
        assert_eq!(
            ids.iter().filter(|v| v.is_null()).count(),
            1,
            "the parse error"
        );
    }

    #[test]
    fn json_that_is_no_message_is_answered_only_when_it_has_an_id() {
        let reply = invalid_message(br#"{"id":7,"what":1}"#).expect("a reply");
        let reply: serde_json::Value = serde_json::from_slice(&reply).unwrap();
        assert_eq!(reply["id"], 7);
        assert_eq!(reply["error"]["code"], INVALID_REQUEST);
        assert!(invalid_message(br#"{"jsonrpc":"2.0","method":"x/unknown"}"#).is_none());
        assert!(invalid_message(b"[1,2]").is_some());
    }
}
