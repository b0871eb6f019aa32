//! OTLP/HTTP's protobuf body for a batch of spans, written directly.
//!
//! An `ExportTraceServiceRequest` (opentelemetry-proto, `trace/v1`) with one
//! resource (`service.name`, `service.version`) and one instrumentation scope.
//! Only the fields toolgate sets are written: ids, parent, name, kind, start
//! and end times, string / bool / int attributes, and an error status.
//!
//! Why not the SDK's exporter: it converts every span into the generated
//! message types (a copy of every string) before encoding them, which was most
//! of what export cost a call (measured with `benches/otlp_overhead.rs`). The
//! wire format of these few messages is small and fixed, so toolgate writes it
//! from its own span records, sizes computed up front. A span is encoded
//! where it ends, from borrowed strings ([`put_span_entry`]), into the batch's
//! buffer; [`encode_batch`] wraps a batch's entries in the request.

/// Field numbers and wire types, from `opentelemetry/proto/trace/v1/trace.proto`,
/// `common/v1/common.proto`, `resource/v1/resource.proto` and
/// `collector/trace/v1/trace_service.proto`.
mod field {
    pub const REQUEST_RESOURCE_SPANS: u32 = 1;
    pub const RESOURCE_SPANS_RESOURCE: u32 = 1;
    pub const RESOURCE_SPANS_SCOPE_SPANS: u32 = 2;
    pub const RESOURCE_ATTRIBUTES: u32 = 1;
    pub const SCOPE_SPANS_SCOPE: u32 = 1;
    pub const SCOPE_SPANS_SPANS: u32 = 2;
    pub const SCOPE_NAME: u32 = 1;
    pub const SCOPE_VERSION: u32 = 2;
    pub const SPAN_TRACE_ID: u32 = 1;
    pub const SPAN_SPAN_ID: u32 = 2;
    pub const SPAN_PARENT_SPAN_ID: u32 = 4;
    pub const SPAN_NAME: u32 = 5;
    pub const SPAN_KIND: u32 = 6;
    pub const SPAN_START: u32 = 7;
    pub const SPAN_END: u32 = 8;
    pub const SPAN_ATTRIBUTES: u32 = 9;
    pub const SPAN_STATUS: u32 = 15;
    pub const STATUS_MESSAGE: u32 = 2;
    pub const STATUS_CODE: u32 = 3;
    pub const KEY_VALUE_KEY: u32 = 1;
    pub const KEY_VALUE_VALUE: u32 = 2;
    pub const ANY_STRING: u32 = 1;
    pub const ANY_BOOL: u32 = 2;
    pub const ANY_INT: u32 = 3;
}

use std::borrow::Cow;

const VARINT: u32 = 0;
const FIXED64: u32 = 1;
const LEN: u32 = 2;

/// `Status.code` of a failed span (`STATUS_CODE_ERROR`).
const STATUS_ERROR: u64 = 2;

/// A span's kind, as OTLP numbers it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpanKind {
    /// `SPAN_KIND_INTERNAL`: the tool's execution.
    Internal = 1,
    /// `SPAN_KIND_SERVER`: the MCP server's handling of a request.
    Server = 2,
}

/// An attribute's value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value<'a> {
    /// A string, borrowed from the event where it can be.
    Text(Cow<'a, str>),
    /// A boolean.
    Bool(bool),
    /// A signed integer.
    Int(i64),
}

/// One ended span, as toolgate records it (borrowing what it can).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FinishedSpan<'a> {
    /// The trace's id (16 random bytes).
    pub trace_id: [u8; 16],
    /// The span's id (8 random bytes).
    pub span_id: [u8; 8],
    /// The parent span's id, when it has one.
    pub parent: Option<[u8; 8]>,
    /// `execute_tool read`, `tools/call read`, …
    pub name: Cow<'a, str>,
    /// Its kind.
    pub kind: SpanKind,
    /// Start, nanoseconds since the Unix epoch.
    pub start_ns: u64,
    /// End, nanoseconds since the Unix epoch.
    pub end_ns: u64,
    /// Its attributes.
    pub attributes: Vec<(&'static str, Value<'a>)>,
    /// The error's description, when the span failed.
    pub error: Option<Cow<'a, str>>,
}

/// The body of one OTLP/HTTP export request holding `spans`, from a service
/// named `service` at `version`.
pub fn encode_request(service: &str, version: &str, spans: &[FinishedSpan<'_>]) -> Vec<u8> {
    let mut entries = Vec::new();
    for span in spans {
        put_span_entry(&mut entries, span);
    }
    encode_batch(service, version, &entries)
}

/// Appends `span` to `out` as one entry of a batch (the span, as a field of
/// `ScopeSpans`), for [`encode_batch`].
pub fn put_span_entry(out: &mut Vec<u8>, span: &FinishedSpan<'_>) {
    let len = span_len(span);
    out.reserve(field_len(field::SCOPE_SPANS_SPANS, len));
    put_len_header(out, field::SCOPE_SPANS_SPANS, len);
    put_span(out, span);
}

/// The body of one OTLP/HTTP export request around `entries` (spans written
/// by [`put_span_entry`]), from a service named `service` at `version`.
pub fn encode_batch(service: &str, version: &str, entries: &[u8]) -> Vec<u8> {
    let resource_attrs = [
        ("service.name", Value::Text(Cow::Borrowed(service))),
        ("service.version", Value::Text(Cow::Borrowed(version))),
    ];
    let resource_len: usize = resource_attrs
        .iter()
        .map(|(k, v)| field_len(field::RESOURCE_ATTRIBUTES, key_value_len(k, v)))
        .sum();
    let scope_len = field_len(field::SCOPE_NAME, service.len())
        + field_len(field::SCOPE_VERSION, version.len());
    let scope_spans_len = field_len(field::SCOPE_SPANS_SCOPE, scope_len) + entries.len();
    let resource_spans_len = field_len(field::RESOURCE_SPANS_RESOURCE, resource_len)
        + field_len(field::RESOURCE_SPANS_SCOPE_SPANS, scope_spans_len);
    let total = field_len(field::REQUEST_RESOURCE_SPANS, resource_spans_len);

    let mut out = Vec::with_capacity(total);
    put_len_header(&mut out, field::REQUEST_RESOURCE_SPANS, resource_spans_len);
    put_len_header(&mut out, field::RESOURCE_SPANS_RESOURCE, resource_len);
    for (k, v) in &resource_attrs {
        put_key_value(&mut out, field::RESOURCE_ATTRIBUTES, k, v);
    }
    put_len_header(&mut out, field::RESOURCE_SPANS_SCOPE_SPANS, scope_spans_len);
    put_len_header(&mut out, field::SCOPE_SPANS_SCOPE, scope_len);
    put_bytes(&mut out, field::SCOPE_NAME, service.as_bytes());
    put_bytes(&mut out, field::SCOPE_VERSION, version.as_bytes());
    out.extend_from_slice(entries);
    debug_assert_eq!(out.len(), total);
    out
}

fn span_len(s: &FinishedSpan<'_>) -> usize {
    let mut n = field_len(field::SPAN_TRACE_ID, 16) + field_len(field::SPAN_SPAN_ID, 8);
    if s.parent.is_some() {
        n += field_len(field::SPAN_PARENT_SPAN_ID, 8);
    }
    n += field_len(field::SPAN_NAME, s.name.len());
    n += tag_len(field::SPAN_KIND) + varint_len(s.kind as u64);
    n += 2 * (tag_len(field::SPAN_START) + 8);
    n += s
        .attributes
        .iter()
        .map(|(k, v)| field_len(field::SPAN_ATTRIBUTES, key_value_len(k, v)))
        .sum::<usize>();
    if let Some(message) = &s.error {
        n += field_len(field::SPAN_STATUS, status_len(message));
    }
    n
}

fn put_span(out: &mut Vec<u8>, s: &FinishedSpan<'_>) {
    put_bytes(out, field::SPAN_TRACE_ID, &s.trace_id);
    put_bytes(out, field::SPAN_SPAN_ID, &s.span_id);
    if let Some(parent) = &s.parent {
        put_bytes(out, field::SPAN_PARENT_SPAN_ID, parent);
    }
    put_bytes(out, field::SPAN_NAME, s.name.as_bytes());
    put_tag(out, field::SPAN_KIND, VARINT);
    put_varint(out, s.kind as u64);
    put_tag(out, field::SPAN_START, FIXED64);
    out.extend_from_slice(&s.start_ns.to_le_bytes());
    put_tag(out, field::SPAN_END, FIXED64);
    out.extend_from_slice(&s.end_ns.to_le_bytes());
    for (k, v) in &s.attributes {
        put_key_value(out, field::SPAN_ATTRIBUTES, k, v);
    }
    if let Some(message) = &s.error {
        put_len_header(out, field::SPAN_STATUS, status_len(message));
        put_bytes(out, field::STATUS_MESSAGE, message.as_bytes());
        put_tag(out, field::STATUS_CODE, VARINT);
        put_varint(out, STATUS_ERROR);
    }
}

fn status_len(message: &str) -> usize {
    field_len(field::STATUS_MESSAGE, message.len())
        + tag_len(field::STATUS_CODE)
        + varint_len(STATUS_ERROR)
}

fn any_value_len(v: &Value<'_>) -> usize {
    match v {
        Value::Text(s) => field_len(field::ANY_STRING, s.len()),
        Value::Bool(_) => tag_len(field::ANY_BOOL) + 1,
        Value::Int(i) => tag_len(field::ANY_INT) + varint_len(*i as u64),
    }
}

fn key_value_len(key: &str, v: &Value<'_>) -> usize {
    field_len(field::KEY_VALUE_KEY, key.len()) + field_len(field::KEY_VALUE_VALUE, any_value_len(v))
}

fn put_key_value(out: &mut Vec<u8>, field_no: u32, key: &str, v: &Value<'_>) {
    put_len_header(out, field_no, key_value_len(key, v));
    put_bytes(out, field::KEY_VALUE_KEY, key.as_bytes());
    put_len_header(out, field::KEY_VALUE_VALUE, any_value_len(v));
    match v {
        Value::Text(s) => put_bytes(out, field::ANY_STRING, s.as_bytes()),
        Value::Bool(b) => {
            put_tag(out, field::ANY_BOOL, VARINT);
            put_varint(out, u64::from(*b));
        }
        Value::Int(i) => {
            put_tag(out, field::ANY_INT, VARINT);
            // int64 is written as its two's complement, ten bytes when negative.
            put_varint(out, *i as u64);
        }
    }
}

/// A length-delimited field's whole size: tag, length, body.
fn field_len(field_no: u32, body: usize) -> usize {
    tag_len(field_no) + varint_len(body as u64) + body
}

fn tag_len(field_no: u32) -> usize {
    varint_len(u64::from(field_no << 3))
}

fn varint_len(mut v: u64) -> usize {
    let mut n = 1;
    while v >= 0x80 {
        v >>= 7;
        n += 1;
    }
    n
}

fn put_tag(out: &mut Vec<u8>, field_no: u32, wire: u32) {
    put_varint(out, u64::from((field_no << 3) | wire));
}

fn put_len_header(out: &mut Vec<u8>, field_no: u32, len: usize) {
    put_tag(out, field_no, LEN);
    put_varint(out, len as u64);
}

fn put_bytes(out: &mut Vec<u8>, field_no: u32, bytes: &[u8]) {
    put_len_header(out, field_no, bytes.len());
    out.extend_from_slice(bytes);
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span() -> FinishedSpan<'static> {
        FinishedSpan {
            trace_id: [7; 16],
            span_id: [9; 8],
            parent: Some([3; 8]),
            name: "execute_tool read".into(),
            kind: SpanKind::Internal,
            start_ns: 1_700_000_000_000_000_000,
            end_ns: 1_700_000_000_500_000_000,
            attributes: vec![
                ("gen_ai.operation.name", Value::Text("execute_tool".into())),
                ("toolgate.sandbox", Value::Bool(true)),
                ("toolgate.count", Value::Int(-3)),
                ("long", Value::Text("x".repeat(300).into())),
            ],
            error: Some("denied".into()),
        }
    }

    #[test]
    fn the_sizes_computed_up_front_are_the_sizes_written() {
        let spans = vec![span(), span()];
        let body = encode_request("toolgate", "0.1.0", &spans);
        let mut one = Vec::new();
        put_span(&mut one, &spans[0]);
        assert_eq!(one.len(), span_len(&spans[0]));
        assert!(body.len() > 2 * one.len());
    }

    #[test]
    fn a_batch_of_entries_is_the_request_of_its_spans() {
        let spans = vec![span(), span(), span()];
        let mut entries = Vec::new();
        for s in &spans {
            put_span_entry(&mut entries, s);
        }
        let body = encode_batch("toolgate", "0.1.0", &entries);
        let scope_spans = fields(&fields(&fields(&body)[0].1)[1].1);
        assert_eq!(
            scope_spans.iter().map(|f| f.0).collect::<Vec<_>>(),
            [1, 2, 2, 2]
        );
        assert_eq!(body, encode_request("toolgate", "0.1.0", &spans));
    }

    #[test]
    fn varints_are_minimal_and_negative_ints_take_ten_bytes() {
        for (v, n) in [(0u64, 1), (127, 1), (128, 2), (16_383, 2), (16_384, 3)] {
            let mut out = Vec::new();
            put_varint(&mut out, v);
            assert_eq!(out.len(), n, "{v}");
            assert_eq!(varint_len(v), n);
        }
        let mut out = Vec::new();
        put_varint(&mut out, -1i64 as u64);
        assert_eq!(
            out,
            [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]
        );
    }

    /// A small reader of the wire format, to check the body's structure field
    /// by field (the end-to-end test checks it against a real collector).
    fn fields(mut b: &[u8]) -> Vec<(u32, Vec<u8>)> {
        fn varint(b: &mut &[u8]) -> u64 {
            let mut v = 0u64;
            let mut shift = 0;
            loop {
                let byte = b[0];
                *b = &b[1..];
                v |= u64::from(byte & 0x7f) << shift;
                if byte & 0x80 == 0 {
                    return v;
                }
                shift += 7;
            }
        }
        let mut out = Vec::new();
        while !b.is_empty() {
            let tag = varint(&mut b);
            let (no, wire) = ((tag >> 3) as u32, tag & 7);
            let value = match wire {
                0 => varint(&mut b).to_le_bytes().to_vec(),
                1 => {
                    let v = b[..8].to_vec();
                    b = &b[8..];
                    v
                }
                2 => {
                    let len = varint(&mut b) as usize;
                    let v = b[..len].to_vec();
                    b = &b[len..];
                    v
                }
                other => panic!("wire type {other}"),
            };
            out.push((no, value));
        }
        out
    }

    #[test]
    fn a_request_nests_resource_scope_and_spans_as_the_proto_says() {
        let body = encode_request("toolgate", "0.1.0", &[span()]);
        let top = fields(&body);
        assert_eq!(top.len(), 1);
        assert_eq!(top[0].0, 1);
        let rs = fields(&top[0].1);
        assert_eq!(rs.iter().map(|f| f.0).collect::<Vec<_>>(), [1, 2]);
        let resource = fields(&rs[0].1);
        let first_kv = fields(&resource[0].1);
        assert_eq!(first_kv[0].1, b"service.name");
        assert_eq!(fields(&first_kv[1].1)[0].1, b"toolgate");
        let scope_spans = fields(&rs[1].1);
        assert_eq!(fields(&scope_spans[0].1)[0].1, b"toolgate");
        let span_fields = fields(&scope_spans[1].1);
        let numbers: Vec<u32> = span_fields.iter().map(|f| f.0).collect();
        assert_eq!(numbers, [1, 2, 4, 5, 6, 7, 8, 9, 9, 9, 9, 15]);
        assert_eq!(span_fields[0].1, [7; 16]);
        assert_eq!(span_fields[3].1, b"execute_tool read");
        assert_eq!(
            u64::from_le_bytes(span_fields[5].1.clone().try_into().unwrap()),
            1_700_000_000_000_000_000
        );
        let sandbox = fields(&span_fields[8].1);
        assert_eq!(sandbox[0].1, b"toolgate.sandbox");
        assert_eq!(fields(&sandbox[1].1)[0].0, 2);
        let status = fields(&span_fields[11].1);
        assert_eq!(status[0].1, b"denied");
        assert_eq!(status[1].1[0], 2);
    }
}
