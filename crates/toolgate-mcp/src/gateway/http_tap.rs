//! Streamable HTTP to an upstream, keeping each tool definition as sent.
//!
//! rmcp's HTTP client decodes a JSON answer into its own model before the
//! gateway sees it, and that model drops members it does not know (an `x-`
//! member a server adds to a definition). Pins hash a definition as sent, so
//! [`TappedHttp`] posts `tools/list` itself, keeps each definition of the
//! answer as received (JSON body or server-sent events) and hands rmcp the
//! same answer; every other message goes through rmcp's reqwest client
//! unchanged, and the events of every stream are looked into as well.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use futures::StreamExt;
use futures::stream::BoxStream;
use http::{HeaderName, HeaderValue, StatusCode};
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, JsonRpcMessage};
use rmcp::transport::common::http_header::{
    EVENT_STREAM_MIME_TYPE, HEADER_SESSION_ID, JSON_MIME_TYPE,
};
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use sse_stream::{Sse, SseStream};

use super::{RawTools, await_listing, keep_listing};

/// Redirects followed for one request (same origin, 307 and 308 only).
const MAX_REDIRECTS: usize = 10;

type HttpError = StreamableHttpError<reqwest::Error>;
type Events = BoxStream<'static, Result<Sse, SseError>>;

/// rmcp's reqwest client, with `tools/list` answers kept as sent in `raw`.
#[derive(Clone)]
pub(crate) struct TappedHttp {
    inner: reqwest::Client,
    raw: RawTools,
}

impl TappedHttp {
    /// A client keeping listings in `raw`. Like rmcp's own default client it
    /// keeps no idle connections and follows only same-origin 307/308
    /// redirects (which keep the method and body).
    pub(crate) fn new(raw: RawTools) -> Result<TappedHttp, reqwest::Error> {
        let policy = reqwest::redirect::Policy::custom(|attempt| {
            let same_origin = attempt
                .previous()
                .first()
                .is_some_and(|first| first.origin() == attempt.url().origin());
            let keeps_body = matches!(
                attempt.status(),
                StatusCode::TEMPORARY_REDIRECT | StatusCode::PERMANENT_REDIRECT
            );
            if same_origin && keeps_body && attempt.previous().len() <= MAX_REDIRECTS {
                attempt.follow()
            } else {
                attempt.stop()
            }
        });
        let inner = reqwest::Client::builder()
            .pool_max_idle_per_host(0)
            .redirect(policy)
            .build()?;
        Ok(TappedHttp { inner, raw })
    }

    /// Every event's data looked into for a listing.
    fn tap(&self, events: Events) -> Events {
        let raw = Arc::clone(&self.raw);
        events
            .inspect(move |event| {
                if let Ok(Sse {
                    data: Some(data), ..
                }) = event
                {
                    keep_listing(&raw, data.as_bytes());
                }
            })
            .boxed()
    }

    /// Posts a `tools/list` request and keeps the answer's definitions as
    /// received before rmcp decodes it.
    async fn post_listing(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        await_listing(&self.raw, &message);
        let mut request = self
            .inner
            .post(uri.as_ref())
            .header(
                http::header::ACCEPT,
                format!("{EVENT_STREAM_MIME_TYPE}, {JSON_MIME_TYPE}"),
            )
            .header(http::header::CONTENT_TYPE, JSON_MIME_TYPE);
        if let Some(token) = auth_token {
            request = request.bearer_auth(token);
        }
        for (name, value) in custom_headers {
            request = request.header(name, value);
        }
        if let Some(session) = &session_id {
            request = request.header(HEADER_SESSION_ID, session.as_ref());
        }
        let response = request
            .body(serde_json::to_vec(&message)?)
            .send()
            .await
            .map_err(StreamableHttpError::Client)?;
        let status = response.status();
        if status == StatusCode::NOT_FOUND && session_id.is_some() {
            return Err(StreamableHttpError::SessionExpired);
        }
        if !status.is_success() {
            return Err(StreamableHttpError::UnexpectedServerResponse(Cow::Owned(
                format!("HTTP {status} to tools/list"),
            )));
        }
        let session = response
            .headers()
            .get(HEADER_SESSION_ID)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let content_type = response
            .headers()
            .get(http::header::CONTENT_TYPE)
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
        let media = content_type
            .as_deref()
            .and_then(|ct| ct.split(';').next())
            .map(|m| m.trim().to_ascii_lowercase());
        match media.as_deref() {
            Some(EVENT_STREAM_MIME_TYPE) => {
                let bytes = bounded(response.bytes_stream(), limits.max_json_response_size);
                let events = SseStream::from_bytes_stream(bytes).boxed();
                Ok(StreamableHttpPostResponse::Sse(self.tap(events), session))
            }
            Some(JSON_MIME_TYPE) => {
                let body = read_bounded(response, limits.max_json_response_size).await?;
                keep_listing(&self.raw, &body);
                Ok(StreamableHttpPostResponse::Json(
                    serde_json::from_slice(&body)?,
                    session,
                ))
            }
            _ => Err(StreamableHttpError::UnexpectedContentType(content_type)),
        }
    }
}

/// Whether `message` asks for the tool list.
fn is_listing(message: &ClientJsonRpcMessage) -> bool {
    matches!(message, JsonRpcMessage::Request(r) if matches!(r.request, ClientRequest::ListToolsRequest(_)))
}

/// The body, refused past `max` bytes.
async fn read_bounded(mut response: reqwest::Response, max: usize) -> Result<Vec<u8>, HttpError> {
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(StreamableHttpError::Client)?
    {
        if body.len() + chunk.len() > max {
            return Err(StreamableHttpError::ResponseBodyTooLarge { max_size: max });
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// The bytes of a listing's event stream, ended with an error past `max`.
fn bounded<S>(
    stream: S,
    max: usize,
) -> impl futures::Stream<Item = Result<bytes::Bytes, std::io::Error>> + Send + 'static
where
    S: futures::Stream<Item = Result<bytes::Bytes, reqwest::Error>> + Send + 'static,
{
    let mut seen = 0usize;
    stream.map(move |chunk| {
        let chunk = chunk.map_err(std::io::Error::other)?;
        seen = seen.saturating_add(chunk.len());
        if seen > max {
            return Err(std::io::Error::other(format!(
                "the tools/list event stream passed {max} bytes"
            )));
        }
        Ok(chunk)
    })
}

impl StreamableHttpClient for TappedHttp {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_token,
            custom_headers,
            StreamableHttpResponseLimits::default(),
        )
        .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        let mut limits = StreamableHttpResponseLimits::default();
        limits.max_sse_event_size = max_sse_event_size;
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_token,
            custom_headers,
            limits,
        )
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        if is_listing(&message) {
            return self
                .post_listing(uri, message, session_id, auth_token, custom_headers, limits)
                .await;
        }
        let response = self
            .inner
            .post_message_with_response_limits(
                uri,
                message,
                session_id,
                auth_token,
                custom_headers,
                limits,
            )
            .await?;
        Ok(match response {
            StreamableHttpPostResponse::Sse(events, session) => {
                StreamableHttpPostResponse::Sse(self.tap(events), session)
            }
            other => other,
        })
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), HttpError> {
        self.inner
            .delete_session(uri, session_id, auth_token, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<Events, HttpError> {
        let events = self
            .inner
            .get_stream(uri, session_id, last_event_id, auth_token, custom_headers)
            .await?;
        Ok(self.tap(events))
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<Events, HttpError> {
        let events = self
            .inner
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_token,
                custom_headers,
                max_sse_event_size,
            )
            .await?;
        Ok(self.tap(events))
    }
}
