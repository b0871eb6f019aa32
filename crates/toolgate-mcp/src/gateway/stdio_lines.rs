//! The transport to a stdio upstream: newline-delimited JSON-RPC over its
//! pipes, as rmcp's own stdio transport speaks it, with two differences.
//!
//! - It keeps each tool definition of every `tools/list` answer exactly as
//!   received (see [`super::keep_listing`]), for pinning: rmcp's model drops
//!   members it does not know.
//! - A tool call's answer is decoded straight into a `CallToolResult`.
//!   rmcp decodes every message as an untagged union, buffering it whole and
//!   trying each kind of result in turn (a call's result is the sixteenth):
//!   about a tenth of a forwarded call's CPU. A message goes this way only
//!   when it is a response whose result holds nothing but a call result's
//!   members; everything else is decoded by rmcp's union, so both give the
//!   same message (a test compares them over every combination of members).
//!
//! Lines are bounded like rmcp's ([`MAX_LINE`]); a longer one is dropped. A
//! line that is not JSON is skipped; JSON that is no message rmcp knows is
//! answered with an invalid-request error unless it is a notification.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use rmcp::RoleClient;
use rmcp::model::{
    CallToolResult, JsonRpcMessage, JsonRpcResponse, JsonRpcVersion2_0, RequestId, ServerResult,
};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde::Deserialize;
use serde::de::IgnoredAny;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;

use super::{RawTools, TAP_LINE_MAX, await_listing, keep_listing};

/// The longest line read from an upstream (rmcp's own limit).
pub(crate) const MAX_LINE: usize = 16 * 1024 * 1024;

/// Newline-delimited JSON-RPC to and from a stdio upstream.
pub(crate) struct UpstreamLines<R, W> {
    reader: BufReader<R>,
    /// The line being read: `receive` is dropped whenever another branch of
    /// rmcp's `select!` is ready first, so a partial line lives here.
    line: Vec<u8>,
    /// Whether the current line passed [`MAX_LINE`] (the rest is dropped).
    over: bool,
    /// The upstream's stdin; `None` once closed (the upstream sees EOF).
    writer: Arc<Mutex<Option<W>>>,
    /// Whether an answer to an invalid line is being written.
    answering: Arc<AtomicBool>,
    raw: RawTools,
}

impl<R, W> UpstreamLines<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    /// Speaks over `reader` (the upstream's stdout) and `writer` (its
    /// stdin), keeping listings in `raw`.
    pub(crate) fn new(reader: R, writer: W, raw: RawTools) -> Self {
        UpstreamLines {
            reader: BufReader::new(reader),
            line: Vec::new(),
            over: false,
            writer: Arc::new(Mutex::new(Some(writer))),
            answering: Arc::new(AtomicBool::new(false)),
            raw,
        }
    }

    /// Reads on with the current line; `Ok(false)` at the end of the
    /// output. Safe to cancel: what was read is in `self`.
    async fn read_line(&mut self) -> std::io::Result<bool> {
        loop {
            let buf = self.reader.fill_buf().await?;
            if buf.is_empty() {
                // A last line without its newline is not a whole message.
                return Ok(false);
            }
            let (chunk, done) = match memchr::memchr(b'\n', buf) {
                Some(i) => (&buf[..=i], true),
                None => (buf, false),
            };
            if self.line.len() + chunk.len() > MAX_LINE {
                self.over = true;
                self.line.clear();
            } else if !self.over {
                self.line.extend_from_slice(chunk);
            }
            let used = chunk.len();
            self.reader.consume(used);
            if done {
                return Ok(true);
            }
        }
    }

    /// Sends an invalid-request error to the upstream, on its own task so
    /// that a dropped `receive` cannot cut the line short.
    /// At most one answer is in flight: while one waits (an upstream that
    /// does not read its input), later invalid lines are skipped unanswered
    /// rather than each leaving a task behind.
    fn answer_invalid(&self) {
        if self.answering.swap(true, Ordering::AcqRel) {
            tracing::debug!("an answer to an upstream is still in flight; skipping");
            return;
        }
        let writer = Arc::clone(&self.writer);
        let answering = Arc::clone(&self.answering);
        tokio::spawn(async move {
            let reply = TxJsonRpcMessage::<RoleClient>::error(
                rmcp::ErrorData::invalid_request("Invalid request", None),
                None,
            );
            if let Ok(line) = encode(&reply) {
                let _ = write_line(&writer, &line).await;
            }
            answering.store(false, Ordering::Release);
        });
    }

    async fn next_message(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            match self.read_line().await {
                Ok(true) => {}
                Ok(false) => return None,
                Err(e) => {
                    tracing::error!(error = %e, "reading an upstream's output failed");
                    return None;
                }
            }
            if std::mem::take(&mut self.over) {
                tracing::error!(
                    limit = MAX_LINE,
                    "an upstream's message was too long; dropped"
                );
                continue;
            }
            let body = trim_line(&self.line);
            if body.is_empty() {
                self.line.clear();
                continue;
            }
            if body.len() <= TAP_LINE_MAX {
                keep_listing(&self.raw, body);
            }
            let decoded = decode(body);
            self.line.clear();
            match decoded {
                Decoded::Message(message) => return Some(*message),
                Decoded::Skip => {}
                Decoded::Invalid => self.answer_invalid(),
            }
        }
    }
}

impl<R, W> Transport<RoleClient> for UpstreamLines<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let writer = Arc::clone(&self.writer);
        await_listing(&self.raw, &item);
        let line = encode(&item);
        async move { write_line(&writer, &line?).await }
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        self.next_message()
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        drop(self.writer.lock().await.take());
        Ok(())
    }
}

/// A message as one line.
fn encode(message: &TxJsonRpcMessage<RoleClient>) -> std::io::Result<Vec<u8>> {
    let mut line = serde_json::to_vec(message).map_err(std::io::Error::other)?;
    line.push(b'\n');
    Ok(line)
}

/// Writes one whole line and flushes it.
async fn write_line<W: AsyncWrite + Unpin>(
    writer: &Mutex<Option<W>>,
    line: &[u8],
) -> std::io::Result<()> {
    let mut writer = writer.lock().await;
    let Some(out) = writer.as_mut() else {
        return Err(std::io::Error::new(
            std::io::ErrorKind::NotConnected,
            "the upstream's input is closed",
        ));
    };
    out.write_all(line).await?;
    out.flush().await
}

/// The line without its end, spaces and a byte-order mark (rmcp accepts one).
fn trim_line(line: &[u8]) -> &[u8] {
    let line = crate::stdio::trim_line(line);
    line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line)
}

/// What a line holds.
#[derive(Debug)]
enum Decoded {
    Message(Box<RxJsonRpcMessage<RoleClient>>),
    /// Not JSON, or a notification rmcp does not know: nothing to answer.
    Skip,
    /// JSON that is no message rmcp knows, not a notification.
    Invalid,
}

fn decode(body: &[u8]) -> Decoded {
    if let Some(message) = call_tool_response(body) {
        return Decoded::Message(Box::new(message));
    }
    match serde_json::from_slice::<RxJsonRpcMessage<RoleClient>>(body) {
        Ok(message) => Decoded::Message(Box::new(message)),
        Err(e) if e.is_syntax() || e.is_eof() => {
            tracing::debug!(error = %e, "skipping an upstream's line that is not JSON");
            Decoded::Skip
        }
        Err(e) => {
            #[derive(Deserialize)]
            struct Shape {
                id: Option<IgnoredAny>,
                method: Option<IgnoredAny>,
            }
            match serde_json::from_slice::<Shape>(body) {
                Ok(Shape {
                    id: None,
                    method: Some(_),
                }) => {
                    tracing::debug!(error = %e, "skipping an upstream's notification");
                    Decoded::Skip
                }
                _ => {
                    tracing::debug!(error = %e, "an upstream sent an invalid message");
                    Decoded::Invalid
                }
            }
        }
    }
}

/// A response made of `jsonrpc`, `id` and a `result` holding only members a
/// tool call's result has.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CallResponseShape {
    #[serde(rename = "jsonrpc")]
    _jsonrpc: IgnoredAny,
    #[serde(rename = "id")]
    _id: IgnoredAny,
    #[serde(rename = "result")]
    _result: CallResultShape,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CallResultShape {
    #[serde(rename = "resultType")]
    _result_type: Option<IgnoredAny>,
    #[serde(rename = "content")]
    _content: Option<IgnoredAny>,
    #[serde(rename = "structuredContent")]
    _structured_content: Option<IgnoredAny>,
    #[serde(rename = "isError")]
    _is_error: Option<IgnoredAny>,
    #[serde(rename = "_meta")]
    _meta: Option<IgnoredAny>,
}

/// The same response, decoded.
#[derive(Deserialize)]
struct CallResponse {
    jsonrpc: JsonRpcVersion2_0,
    id: RequestId,
    result: CallToolResult,
}

/// The message, when `body` is a response whose result has only a call
/// result's members and decodes as one; `None` leaves it to rmcp's union.
fn call_tool_response(body: &[u8]) -> Option<RxJsonRpcMessage<RoleClient>> {
    serde_json::from_slice::<CallResponseShape>(body).ok()?;
    let response: CallResponse = serde_json::from_slice(body).ok()?;
    Some(JsonRpcMessage::Response(JsonRpcResponse {
        jsonrpc: response.jsonrpc,
        id: response.id,
        result: ServerResult::CallToolResult(response.result),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    /// Every combination of a call result's members, with values of each
    /// kind they take, and a few results that are something else.
    fn results() -> Vec<Value> {
        let members: [(&str, &[Value]); 5] = [
            (
                "resultType",
                &[json!("complete"), json!("input_required"), json!(7)],
            ),
            (
                "content",
                &[
                    json!([]),
                    json!([{"type": "text", "text": "hi \u{202e} there"}]),
                    json!([{"type": "image", "data": "AAAA", "mimeType": "image/png"},
                           {"type": "resource_link", "uri": "file:///x", "name": "x"},
                           {"type": "resource", "resource": {"uri": "file:///y", "text": "y"}}]),
                    json!([{"type": "nonsense"}]),
                    json!("not a list"),
                ],
            ),
            (
                "structuredContent",
                &[json!({"a": 1}), json!(null), json!([1, 2])],
            ),
            ("isError", &[json!(true), json!(false), json!("yes")]),
            ("_meta", &[json!({"k": "v"}), json!(3)]),
        ];
        let mut out = crate::member_combinations::member_combinations(&members);
        out.extend([
            json!({"content": [], "task": {"taskId": "t"}}),
            json!({"tools": []}),
            json!({"content": [], "extra": 1}),
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "serverInfo": {"name": "s", "version": "1"}}),
        ]);
        out
    }

    #[test]
    fn a_call_result_decodes_as_rmcps_union_decodes_it() {
        let mut fast = 0;
        for result in results() {
            for id in [json!(1), json!("a-7")] {
                let line = json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string();
                let union = serde_json::from_slice::<RxJsonRpcMessage<RoleClient>>(line.as_bytes());
                let Some(ours) = call_tool_response(line.as_bytes()) else {
                    continue;
                };
                fast += 1;
                let union = union.unwrap_or_else(|e| panic!("{line}: only ours decoded it: {e}"));
                assert_eq!(
                    serde_json::to_value(&ours).unwrap(),
                    serde_json::to_value(&union).unwrap(),
                    "{line}"
                );
                assert!(
                    matches!(
                        union,
                        JsonRpcMessage::Response(JsonRpcResponse {
                            result: ServerResult::CallToolResult(_),
                            ..
                        })
                    ),
                    "{line}"
                );
            }
        }
        assert!(fast > 100, "the fast way decoded {fast} lines");
    }

    #[test]
    fn results_of_other_shapes_are_left_to_the_union() {
        for result in [
            json!({"content": [], "task": {"taskId": "t"}}),
            json!({"tools": []}),
            json!({}),
            json!({"_meta": {}}),
            json!({"resultType": "input_required"}),
        ] {
            let line = json!({"jsonrpc": "2.0", "id": 1, "result": result}).to_string();
            assert!(call_tool_response(line.as_bytes()).is_none(), "{line}");
        }
        let extra = r#"{"jsonrpc":"2.0","id":1,"result":{"content":[]},"method":"x"}"#;
        assert!(call_tool_response(extra.as_bytes()).is_none());
    }

    #[test]
    fn bad_lines_are_skipped_or_answered() {
        assert!(matches!(decode(b"{not json"), Decoded::Skip));
        assert!(matches!(
            decode(br#"{"jsonrpc":"2.0","method":"x/unknown","params":{"a":1}}"#),
            Decoded::Skip | Decoded::Message(_)
        ));
        assert!(matches!(
            decode(br#"{"jsonrpc":"2.0","id":5}"#),
            Decoded::Invalid
        ));
        assert!(matches!(decode(b"[1,2]"), Decoded::Invalid));
    }

    /// Listings are kept however the member is spelled; long lines are
    /// dropped, a partial last line is not a message, and what is read
    /// survives a dropped `receive`.
    #[tokio::test]
    async fn lines_are_read_whole_and_listings_kept() {
        let input = concat!(
            r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi"}]}}"#,
            "\r\n",
            "\n",
            r#"{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"a","x-v":1,"inputSchema":{}}]}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":3,"result":{"\u0074ools":[{"name":"b","x-w":2,"inputSchema":{}}]}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":4,"result":{"content":[]}}"#,
        );
        let raw = RawTools::default();
        let mut lines = UpstreamLines::new(input.as_bytes(), tokio::io::sink(), Arc::clone(&raw));
        for id in [2, 3] {
            lines.send(listing_request(id)).await.unwrap();
        }
        let mut ids = Vec::new();
        while let Some(message) = lines.receive().await {
            if let JsonRpcMessage::Response(r) = message {
                ids.push(r.id);
            }
        }
        assert_eq!(
            ids,
            [
                RequestId::Number(1),
                RequestId::Number(2),
                RequestId::Number(3)
            ]
        );
        let raw = raw.lock().unwrap();
        assert_eq!(raw.tools.len(), 2, "{raw:?}");
        assert_eq!(raw.tools["a"]["x-v"], 1);
        assert_eq!(raw.tools["b"]["x-w"], 2);
    }

    fn listing_request(id: i64) -> TxJsonRpcMessage<RoleClient> {
        serde_json::from_value(json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"})).unwrap()
    }

    /// An upstream sending listings no `tools/list` asked for (a response
    /// to an id never used, each with a new tool of a megabyte): each was
    /// kept for the whole session, 800 of them held 830 MB in toolgate.
    /// Only the answer to a listing request sent is kept, once.
    #[tokio::test]
    async fn listings_no_request_asked_for_are_not_kept() {
        let mut input = String::new();
        let big = "x".repeat(64 * 1024);
        for i in 0..200 {
            input.push_str(
                &json!({"jsonrpc": "2.0", "id": 1_000_000 + i, "result": {"tools": [
                    {"name": format!("fake{i}"), "description": big, "inputSchema": {}}]}})
                .to_string(),
            );
            input.push('\n');
        }
        for name in ["real", "again"] {
            input.push_str(
                &json!({"jsonrpc": "2.0", "id": 7, "result": {"tools": [
                    {"name": name, "inputSchema": {}}]}})
                .to_string(),
            );
            input.push('\n');
        }
        let raw = RawTools::default();
        let mut lines = UpstreamLines::new(
            std::io::Cursor::new(input.into_bytes()),
            tokio::io::sink(),
            Arc::clone(&raw),
        );
        lines.send(listing_request(7)).await.unwrap();
        while lines.receive().await.is_some() {}
        let raw = raw.lock().unwrap();
        let names: Vec<&String> = raw.tools.keys().collect();
        assert_eq!(names, ["real"], "kept: {} definitions", raw.tools.len());
        assert!(raw.awaited.is_empty());
    }

    /// An upstream that floods invalid messages and never reads its input
    /// gets one answer in flight at a time, not a task per line waiting on
    /// a full pipe.
    #[tokio::test]
    async fn a_flood_of_invalid_messages_keeps_one_answer_in_flight() {
        let mut input = Vec::new();
        for i in 0..5_000 {
            input.extend_from_slice(format!("{{\"jsonrpc\":\"2.0\",\"id\":{i}}}\n").as_bytes());
        }
        // Room for one answer's first bytes only; the other end is never read.
        let (ours, _theirs) = tokio::io::duplex(16);
        let mut lines = UpstreamLines::new(std::io::Cursor::new(input), ours, RawTools::default());
        let before = tokio::runtime::Handle::current()
            .metrics()
            .num_alive_tasks();
        assert!(lines.receive().await.is_none());
        tokio::task::yield_now().await;
        let alive = tokio::runtime::Handle::current()
            .metrics()
            .num_alive_tasks()
            - before;
        assert!(alive <= 1, "{alive} answers in flight");
    }

    #[tokio::test]
    async fn a_line_past_the_limit_is_dropped_and_the_next_read() {
        let mut input = vec![b'x'; MAX_LINE + 10];
        input.push(b'\n');
        input.extend_from_slice(br#"{"jsonrpc":"2.0","id":9,"result":{"content":[]}}"#);
        input.push(b'\n');
        let mut lines = UpstreamLines::new(
            std::io::Cursor::new(input),
            tokio::io::sink(),
            RawTools::default(),
        );
        let Some(JsonRpcMessage::Response(r)) = lines.receive().await else {
            panic!("the line after the long one was lost");
        };
        assert_eq!(r.id, RequestId::Number(9));
        assert!(lines.receive().await.is_none());
    }

    #[tokio::test]
    async fn sent_messages_are_lines_and_none_after_close() {
        let (ours, mut theirs) = tokio::io::duplex(1 << 16);
        let mut lines = UpstreamLines::new(tokio::io::empty(), ours, RawTools::default());
        let ping = TxJsonRpcMessage::<RoleClient>::error(
            rmcp::ErrorData::invalid_request("x", None),
            Some(RequestId::Number(3)),
        );
        lines.send(ping).await.unwrap();
        lines.close().await.unwrap();
        let err = lines
            .send(TxJsonRpcMessage::<RoleClient>::error(
                rmcp::ErrorData::invalid_request("x", None),
                None,
            ))
            .await
            .unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::NotConnected);
        let mut out = String::new();
        tokio::io::AsyncReadExt::read_to_string(&mut theirs, &mut out)
            .await
            .unwrap();
        assert!(out.ends_with('\n') && out.lines().count() == 1, "{out:?}");
        assert!(out.contains(r#""id":3"#), "{out}");
    }
}
