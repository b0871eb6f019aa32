//! A client's `tools/call` request decoded without rmcp's message union.
//!
//! rmcp decodes every incoming message as an untagged union: the line is
//! buffered whole, its members checked, and the request tried as each kind
//! of client request in turn (a tool call is the fourteenth), each try
//! walking the buffered arguments again. A tool call is nearly every message
//! of a session, and that was a tenth of a forwarded call's CPU. Here a line
//! made of exactly `jsonrpc`, `id`, `method` and `params`, whose method is
//! `tools/call`, is decoded as rmcp's own `CallToolRequest` and header types
//! directly; anything else is left to the union, so both give the same
//! message (a test compares them over many shapes of request).

use std::borrow::Cow;

use rmcp::RoleServer;
use rmcp::model::{
    CallToolRequest, ClientRequest, JsonRpcMessage, JsonRpcRequest, JsonRpcVersion2_0, RequestId,
};
use rmcp::service::RxJsonRpcMessage;
use serde::Deserialize;
use serde::de::IgnoredAny;

/// The members a request has, and nothing else.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RequestShape<'a> {
    #[serde(rename = "jsonrpc")]
    _jsonrpc: IgnoredAny,
    #[serde(rename = "id")]
    _id: IgnoredAny,
    #[serde(borrow)]
    method: Cow<'a, str>,
    #[serde(rename = "params")]
    _params: IgnoredAny,
}

/// A request's envelope (its other members ignored).
#[derive(Deserialize)]
struct Envelope {
    jsonrpc: JsonRpcVersion2_0,
    id: RequestId,
}

/// The message, when `body` is a `tools/call` request with only a request's
/// members that decodes as one; `None` leaves it to rmcp's union.
pub(crate) fn decode(body: &[u8]) -> Option<RxJsonRpcMessage<RoleServer>> {
    let shape: RequestShape<'_> = serde_json::from_slice(body).ok()?;
    if shape.method != "tools/call" {
        return None;
    }
    let envelope: Envelope = serde_json::from_slice(body).ok()?;
    // rmcp's request reads `method` and `params` and ignores other members.
    let request: CallToolRequest = serde_json::from_slice(body).ok()?;
    Some(JsonRpcMessage::Request(JsonRpcRequest {
        jsonrpc: envelope.jsonrpc,
        id: envelope.id,
        request: ClientRequest::CallToolRequest(request),
    }))
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    /// Tool calls of many shapes: every combination of the params' members
    /// with values of each kind they take, ids of each kind, envelopes that
    /// are right and wrong, and messages that are something else.
    fn lines() -> Vec<String> {
        let members: [(&str, &[Value]); 5] = [
            ("name", &[json!("fs__read"), json!("a\u{202e}b"), json!(7)]),
            (
                "arguments",
                &[
                    json!({"path": "/etc/hosts", "n": [1, 2.5, {"deep": null}]}),
                    json!({}),
                    json!(null),
                    json!([1, 2]),
                    json!("text"),
                ],
            ),
            (
                "_meta",
                &[
                    json!({"progressToken": 3}),
                    json!({"progressToken": "t", "x": 1}),
                    json!(null),
                    json!(5),
                ],
            ),
            (
                "inputResponses",
                &[json!({}), json!({"a": {"b": 1}}), json!(2)],
            ),
            ("requestState", &[json!("opaque"), json!(9)]),
        ];
        let mut params = crate::member_combinations::member_combinations(&members);
        params.extend([
            json!({"name": "t", "arguments": {}, "task": {"ttl": 5}}),
            json!({"name": "t", "unknownMember": true}),
            json!(null),
            json!([]),
            json!("params"),
        ]);
        let mut out = Vec::new();
        for p in &params {
            for id in [json!(1), json!("a-7"), json!(-3), json!(1.5), json!(null)] {
                out.push(
                    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": p})
                        .to_string(),
                );
            }
            out.push(
                json!({"jsonrpc": "1.0", "id": 1, "method": "tools/call", "params": p}).to_string(),
            );
            out.push(json!({"id": 1, "method": "tools/call", "params": p}).to_string());
            out.push(json!({"jsonrpc": "2.0", "method": "tools/call", "params": p}).to_string());
            out.push(
                json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": p, "result": {}})
                    .to_string(),
            );
            out.push(
                json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": p}).to_string(),
            );
        }
        out.extend([
            r#"{"jsonrpc":"2.0","id":1,"method":"tools\/call","params":{"name":"t"}}"#.into(),
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call"}"#.into(),
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"},"id":2}"#
                .into(),
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","name":"b"}}"#
                .into(),
            r#"{"method":"tools/call","jsonrpc":"2.0","params":{"arguments":{"x":1},"name":"t"},"id":9}"#
                .into(),
        ]);
        out
    }

    #[test]
    fn a_tool_call_decodes_as_rmcps_union_decodes_it() {
        let mut fast = 0;
        for line in lines() {
            let union = serde_json::from_str::<RxJsonRpcMessage<RoleServer>>(&line);
            let Some(ours) = decode(line.as_bytes()) else {
                continue;
            };
            fast += 1;
            let union = union.unwrap_or_else(|e| panic!("{line}: only ours decoded it: {e}"));
            assert_eq!(
                serde_json::to_value(&ours).unwrap(),
                serde_json::to_value(&union).unwrap(),
                "{line}"
            );
            let JsonRpcMessage::Request(JsonRpcRequest {
                request: ClientRequest::CallToolRequest(union),
                ..
            }) = union
            else {
                panic!("{line}: the union decoded another kind");
            };
            let JsonRpcMessage::Request(JsonRpcRequest {
                request: ClientRequest::CallToolRequest(ours),
                ..
            }) = ours
            else {
                unreachable!()
            };
            assert_eq!(ours.params, union.params, "{line}");
            assert_eq!(
                ours.extensions
                    .get::<rmcp::model::RequestMetaObject>()
                    .map(|m| serde_json::to_value(m).unwrap()),
                union
                    .extensions
                    .get::<rmcp::model::RequestMetaObject>()
                    .map(|m| serde_json::to_value(m).unwrap()),
                "{line}"
            );
        }
        assert!(fast > 100, "the fast way decoded {fast} lines");
    }

    #[test]
    fn other_messages_are_left_to_the_union() {
        for line in [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"},"extra":1}"#,
            r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"t"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"content":[]}}"#,
            "[1,2]",
            "not json",
        ] {
            assert!(decode(line.as_bytes()).is_none(), "{line}");
        }
    }
}
