//! MCP over stdio: newline-delimited JSON-RPC on stdin/stdout, one session.
//!
//! Input passes through a filter before the SDK sees it, so that bad input gets
//! an answer instead of silence: a message over [`StdioOptions::max_message_bytes`]
//! is skipped without being buffered and answered with `-32600` naming the size
//! and the limit (with the request's id when it appears early in the message);
//! a line that is not JSON is answered with `-32700`.

use std::time::Duration;

use rmcp::ServiceExt;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;
use toolgate_core::pipeline::CANCEL_GRACE;

use crate::error::ServeError;
use crate::frame::{INVALID_REQUEST, PARSE_ERROR, error_line, scan_id, syntax_error};
use crate::server::ToolgateServer;

mod stdio_fd;

/// How much of an oversized message is kept to find its id.
const ID_PREFIX: usize = 64 * 1024;
const PIPE: usize = 256 * 1024;

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
    let (to_sdk, sdk_in) = tokio::io::duplex(PIPE);
    let (sdk_out, from_sdk) = tokio::io::duplex(PIPE);
    let (lines_tx, lines_rx) = mpsc::channel::<Vec<u8>>(64);

    let writer_task = tokio::spawn(write_lines(writer, lines_rx));
    let pump_task = tokio::spawn(pump_sdk_output(from_sdk, lines_tx.clone()));
    let filter_task = tokio::spawn(filter_input(reader, to_sdk, lines_tx, options));

    let connection = server.connection();
    let session = connection.session_id().to_string();
    tracing::info!(session = %session, "MCP session on stdio");
    let outcome = match connection.serve((sdk_in, sdk_out)).await {
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
    filter_task.abort();
    let _ = pump_task.await;
    let written = writer_task.await;
    match (outcome, written) {
        (Err(e), _) => Err(e),
        (Ok(()), Ok(Err(e))) => Err(e),
        _ => Ok(()),
    }
}

/// Writes whole lines in the order they come, flushing after each.
async fn write_lines<W: AsyncWrite + Unpin>(
    mut writer: W,
    mut lines: mpsc::Receiver<Vec<u8>>,
) -> Result<(), ServeError> {
    while let Some(line) = lines.recv().await {
        writer
            .write_all(&line)
            .await
            .map_err(|e| ServeError::io("writing to stdout", e))?;
        writer
            .flush()
            .await
            .map_err(|e| ServeError::io("flushing stdout", e))?;
    }
    Ok(())
}

/// Splits the SDK's output into lines for the writer.
async fn pump_sdk_output(from_sdk: tokio::io::DuplexStream, lines: mpsc::Sender<Vec<u8>>) {
    let mut reader = BufReader::new(from_sdk);
    loop {
        let mut line = Vec::new();
        match reader.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {
                if !line.ends_with(b"\n") {
                    line.push(b'\n');
                }
                if lines.send(line).await.is_err() {
                    return;
                }
            }
        }
    }
}

/// Reads client lines with a bound, answers oversized and unparsable ones, and
/// passes the rest to the SDK. Dropping `to_sdk` at EOF ends the session.
async fn filter_input<R: AsyncRead + Unpin>(
    reader: R,
    mut to_sdk: tokio::io::DuplexStream,
    replies: mpsc::Sender<Vec<u8>>,
    options: StdioOptions,
) {
    let mut reader = BufReader::with_capacity(PIPE, reader);
    loop {
        match read_bounded_line(&mut reader, options.max_message_bytes).await {
            Ok(Line::Eof) => return,
            Ok(Line::Complete(line)) => {
                let body = trim_line(&line);
                if body.is_empty() {
                    continue;
                }
                if let Some(message) = syntax_error(body) {
                    tracing::debug!(%message, "unparsable message on stdin");
                    let reply = error_line(None, PARSE_ERROR, &format!("Parse error: {message}"));
                    if replies.send(reply).await.is_err() {
                        return;
                    }
                    continue;
                }
                if to_sdk.write_all(&line).await.is_err() {
                    return;
                }
                if !line.ends_with(b"\n") && to_sdk.write_all(b"\n").await.is_err() {
                    return;
                }
            }
            Ok(Line::Oversized { prefix, total }) => {
                tracing::warn!(
                    bytes = total,
                    limit = options.max_message_bytes,
                    "oversized message on stdin"
                );
                let message = format!(
                    "request too large: {total} bytes exceeds the limit of {} bytes; nothing was run",
                    options.max_message_bytes
                );
                let reply = error_line(scan_id(&prefix), INVALID_REQUEST, &message);
                if replies.send(reply).await.is_err() {
                    return;
                }
            }
            Err(e) => {
                tracing::error!(error = %e, "reading stdin failed");
                return;
            }
        }
    }
}

fn trim_line(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    line.trim_ascii()
}

enum Line {
    Eof,
    Complete(Vec<u8>),
    Oversized { prefix: Vec<u8>, total: usize },
}

/// Reads one line, keeping at most `max` bytes; past that, only a prefix is
/// kept and the rest is counted and dropped.
async fn read_bounded_line<R: AsyncBufReadExt + Unpin>(
    reader: &mut R,
    max: usize,
) -> std::io::Result<Line> {
    let mut line = Vec::new();
    let mut total = 0usize;
    let mut oversized = false;
    loop {
        let buf = reader.fill_buf().await?;
        if buf.is_empty() {
            return Ok(match (total, oversized) {
                (0, _) => Line::Eof,
                (_, true) => Line::Oversized {
                    prefix: line,
                    total,
                },
                (_, false) => Line::Complete(line),
            });
        }
        let (chunk, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (&buf[..=i], true),
            None => (buf, false),
        };
        total += chunk.len();
        if !oversized && total > max {
            oversized = true;
            line.truncate(ID_PREFIX);
        }
        if oversized {
            let room = ID_PREFIX.saturating_sub(line.len());
            line.extend_from_slice(&chunk[..room.min(chunk.len())]);
        } else {
            line.extend_from_slice(chunk);
        }
        let used = chunk.len();
        reader.consume(used);
        if done {
            return Ok(if oversized {
                Line::Oversized {
                    prefix: line,
                    total,
                }
            } else {
                Line::Complete(line)
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn bounded_lines() {
        let data = format!("{}\nshort\n{}", "a".repeat(100), "b".repeat(10));
        let mut r = BufReader::with_capacity(16, data.as_bytes());
        match read_bounded_line(&mut r, 50).await.unwrap() {
            Line::Oversized { prefix, total } => {
                assert_eq!(total, 101);
                assert_eq!(prefix.len(), 101.min(ID_PREFIX));
            }
            _ => panic!("expected oversized"),
        }
        match read_bounded_line(&mut r, 50).await.unwrap() {
            Line::Complete(l) => assert_eq!(l, b"short\n"),
            _ => panic!("expected a line"),
        }
        match read_bounded_line(&mut r, 50).await.unwrap() {
            Line::Complete(l) => assert_eq!(l, b"bbbbbbbbbb"),
            _ => panic!("expected the last line"),
        }
        assert!(matches!(
            read_bounded_line(&mut r, 50).await.unwrap(),
            Line::Eof
        ));
    }
}
