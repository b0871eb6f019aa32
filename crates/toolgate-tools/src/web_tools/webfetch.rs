//! `webfetch`: fetches an http or https URL and returns it as markdown, text
//! or HTML.
//!
//! Redirects are followed by hand (at most [`MAX_REDIRECTS`]) so every hop is
//! checked by the network guard; the body is read in chunks and the call fails
//! as soon as it passes [`MAX_RESPONSE_BYTES`]. No proxy is used: a proxy would
//! resolve names itself and bypass the guard.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, LOCATION};
use reqwest::{Client, Response, Url};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolgate_core::{
    Content, Failure, Location, PermissionRequest, Risk, Tool, ToolContext, ToolError, ToolTraits,
};

use super::WebToolsConfig;
use super::html_text::{to_markdown, to_text};
use super::net_guard::{GuardedResolver, NetPolicy, Refused, Route, find_refusal};

/// The largest body webfetch reads: 5 MiB.
pub const MAX_RESPONSE_BYTES: usize = 5 * 1024 * 1024;
/// The most redirects one fetch follows.
pub const MAX_REDIRECTS: usize = 10;
/// Timeout when the call gives none: 30 seconds.
pub const DEFAULT_TIMEOUT_MS: u64 = 30_000;
/// The longest timeout a call may ask for: 2 minutes.
pub const MAX_TIMEOUT_MS: u64 = 120_000;
const MAX_URL_BYTES: usize = 8 * 1024;
const USER_AGENT: &str = concat!("toolgate/", env!("CARGO_PKG_VERSION"));

/// How the page is returned.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum FetchFormat {
    /// HTML converted to markdown (the default).
    #[default]
    Markdown,
    /// HTML reduced to its visible text.
    Text,
    /// The HTML as served.
    Html,
}

/// Input of `webfetch`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WebFetchInput {
    /// The http or https URL to fetch.
    pub url: String,
    /// `markdown` (default), `text` or `html`. Non-HTML text is returned as is.
    #[serde(default)]
    pub format: Option<FetchFormat>,
    /// Timeout in milliseconds for the whole fetch: default 30000, at most 120000.
    #[serde(default)]
    pub timeout_ms: Option<u64>,
}

/// Output of `webfetch`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct WebFetchOutput {
    /// The URL asked for.
    pub url: String,
    /// The URL the content came from, after redirects.
    pub final_url: String,
    /// Every redirect target, in order.
    pub redirects: Vec<String>,
    /// The HTTP status of the final response.
    pub status: u16,
    /// The `Content-Type` of the final response.
    pub content_type: Option<String>,
    /// The format of `content`.
    pub format: FetchFormat,
    /// Bytes of body received.
    pub bytes: u64,
    /// The page in the asked format (or as is, when it is not HTML).
    pub content: String,
}

/// The two HTTP clients: one that reaches any address (for allow-listed hosts
/// or when private networks are allowed), one whose resolver only returns
/// public addresses.
#[derive(Debug, Clone)]
struct Clients {
    open: Client,
    guarded: Client,
}

/// Builds an HTTP client: rustls, no proxy, no automatic redirects, optionally
/// with the guarded resolver.
pub(super) fn http_client(guarded: bool) -> Result<Client, Failure> {
    // reqwest is built without a bundled crypto provider; install ring unless
    // the host program installed one already (that one is then used).
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut builder = Client::builder()
        .user_agent(USER_AGENT)
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .connect_timeout(Duration::from_secs(15));
    if guarded {
        builder = builder.dns_resolver(GuardedResolver);
    }
    builder
        .build()
        .map_err(|e| Failure::caused("could not build the HTTP client", e))
}

/// The `webfetch` tool.
#[derive(Debug, Clone)]
pub struct WebFetchTool {
    policy: NetPolicy,
    max_bytes: usize,
    clients: Arc<OnceLock<Result<Clients, Failure>>>,
}

impl WebFetchTool {
    /// A webfetch tool with the network settings of `config`.
    pub fn new(config: &WebToolsConfig) -> Self {
        WebFetchTool {
            policy: NetPolicy::new(config.allow_private_network, &config.allowed_hosts),
            max_bytes: MAX_RESPONSE_BYTES,
            clients: Arc::new(OnceLock::new()),
        }
    }

    fn clients(&self) -> Result<&Clients, ToolError> {
        self.clients
            .get_or_init(|| {
                Ok(Clients {
                    open: http_client(false)?,
                    guarded: http_client(true)?,
                })
            })
            .as_ref()
            .map_err(|e| ToolError::Caused(e.clone()))
    }
}

fn check_timeout(timeout_ms: Option<u64>) -> Result<Duration, ToolError> {
    match timeout_ms {
        None => Ok(Duration::from_millis(DEFAULT_TIMEOUT_MS)),
        Some(ms) if (1..=MAX_TIMEOUT_MS).contains(&ms) => Ok(Duration::from_millis(ms)),
        Some(ms) => Err(ToolError::InvalidInput(format!(
            "timeout_ms must be between 1 and {MAX_TIMEOUT_MS} (2 minutes); got {ms}"
        ))),
    }
}

fn parse_url(text: &str) -> Result<Url, ToolError> {
    if text.len() > MAX_URL_BYTES {
        return Err(ToolError::InvalidInput(format!(
            "url is {} bytes; the limit is {MAX_URL_BYTES}",
            text.len()
        )));
    }
    let url = Url::parse(text.trim())
        .map_err(|e| ToolError::InvalidInput(format!("invalid url {text:?}: {e}")))?;
    if url.scheme() != "http" && url.scheme() != "https" {
        return Err(ToolError::InvalidInput(
            Refused::Scheme(url.scheme().to_string()).to_string(),
        ));
    }
    Ok(url)
}

/// `scheme://host/*`, what an approval of a fetch saves: the host, never
/// more. `None` (nothing saved) when the authority holds credentials or a
/// wildcard.
fn host_save_pattern(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let host = &rest[..end];
    if host.is_empty() || host.contains('@') || host.contains(['*', '?']) {
        return None;
    }
    Some(format!("{scheme}://{host}/*"))
}

fn refused(r: Refused) -> ToolError {
    ToolError::Failed(r.to_string())
}

/// Describes a request error, surfacing a guard refusal from deep in the chain.
fn request_error(url: &Url, err: reqwest::Error) -> ToolError {
    if let Some(r) = find_refusal(&err) {
        return refused(r);
    }
    let mut message = format!("fetching {url} failed: {err}");
    let mut source = std::error::Error::source(&err);
    while let Some(s) = source {
        message.push_str(&format!(": {s}"));
        source = s.source();
    }
    ToolError::Caused(Failure::new(message).because(err))
}

fn accept_header(format: FetchFormat) -> &'static str {
    match format {
        FetchFormat::Markdown => {
            "text/markdown;q=1.0, text/html;q=0.9, text/plain;q=0.8, */*;q=0.1"
        }
        FetchFormat::Text => "text/plain;q=1.0, text/html;q=0.9, */*;q=0.1",
        FetchFormat::Html => "text/html;q=1.0, application/xhtml+xml;q=0.9, */*;q=0.1",
    }
}

/// What kind of body this is, from its media type (or its first bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BodyKind {
    Html,
    Text,
    Binary,
}

fn body_kind(mime: &str, body: &[u8]) -> BodyKind {
    match mime {
        "text/html" | "application/xhtml+xml" => BodyKind::Html,
        "" => {
            let sample = &body[..body.len().min(8192)];
            if sample.contains(&0) {
                BodyKind::Binary
            } else {
                let head =
                    String::from_utf8_lossy(&sample[..sample.len().min(512)]).to_ascii_lowercase();
                let head = head.trim_start();
                if head.starts_with("<!doctype html") || head.starts_with("<html") {
                    BodyKind::Html
                } else {
                    BodyKind::Text
                }
            }
        }
        m if m.starts_with("text/")
            || m.ends_with("+json")
            || m.ends_with("+xml")
            || matches!(
                m,
                "application/json"
                    | "application/xml"
                    | "application/javascript"
                    | "application/x-javascript"
                    | "application/ecmascript"
                    | "application/x-sh"
                    | "application/toml"
                    | "application/yaml"
                    | "application/x-yaml"
            ) =>
        {
            BodyKind::Text
        }
        _ => BodyKind::Binary,
    }
}

/// The media type and charset of a `Content-Type` header.
fn media_type(headers: &HeaderMap) -> (Option<String>, String, Option<String>) {
    let Some(raw) = headers.get(CONTENT_TYPE).and_then(|v| v.to_str().ok()) else {
        return (None, String::new(), None);
    };
    let mut parts = raw.split(';');
    let mime = parts.next().unwrap_or("").trim().to_ascii_lowercase();
    let charset = parts.find_map(|p| {
        let (k, v) = p.split_once('=')?;
        k.trim()
            .eq_ignore_ascii_case("charset")
            .then(|| v.trim().trim_matches('"').to_string())
    });
    (Some(raw.to_string()), mime, charset)
}

fn decode(body: &[u8], charset: Option<&str>) -> String {
    let encoding = charset
        .and_then(|c| encoding_rs::Encoding::for_label(c.as_bytes()))
        .unwrap_or(encoding_rs::UTF_8);
    encoding.decode(body).0.into_owned()
}

impl WebFetchTool {
    async fn read_body(&self, url: &Url, mut response: Response) -> Result<Vec<u8>, ToolError> {
        let limit = self.max_bytes;
        if let Some(len) = response.content_length() {
            if len > limit as u64 {
                return Err(ToolError::Failed(format!(
                    "response from {url} is {len} bytes; the limit is {limit} bytes (5 MiB)"
                )));
            }
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| request_error(url, e))? {
            if body.len() + chunk.len() > limit {
                return Err(ToolError::Failed(format!(
                    "response from {url} is larger than the limit of {limit} bytes (5 MiB); stopped reading"
                )));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    }

    async fn fetch(&self, start: Url, format: FetchFormat) -> Result<WebFetchOutput, ToolError> {
        let clients = self.clients()?;
        let mut url = start.clone();
        let mut redirects = Vec::new();
        loop {
            let client = match self.policy.check(&url).map_err(refused)? {
                Route::Open => &clients.open,
                Route::Guarded => &clients.guarded,
            };
            tracing::debug!(%url, "webfetch request");
            let response = client
                .get(url.clone())
                .header(ACCEPT, accept_header(format))
                .send()
                .await
                .map_err(|e| request_error(&url, e))?;
            let status = response.status();
            if status.is_redirection() {
                if let Some(location) = response.headers().get(LOCATION) {
                    if redirects.len() == MAX_REDIRECTS {
                        return Err(ToolError::Failed(format!(
                            "too many redirects: more than {MAX_REDIRECTS} starting from {start}"
                        )));
                    }
                    let location = location.to_str().map_err(|_| {
                        ToolError::Failed(format!("redirect from {url} has an unreadable Location"))
                    })?;
                    let next = url.join(location).map_err(|e| {
                        ToolError::Failed(format!(
                            "redirect from {url} to {location:?} is not a valid URL: {e}"
                        ))
                    })?;
                    redirects.push(next.to_string());
                    url = next;
                    continue;
                }
            }
            if !status.is_success() {
                return Err(ToolError::Failed(format!("HTTP {status} fetching {url}")));
            }
            let (content_type, mime, charset) = media_type(response.headers());
            let body = self.read_body(&url, response).await?;
            let kind = body_kind(&mime, &body);
            let text = match kind {
                BodyKind::Binary => {
                    return Err(ToolError::Failed(format!(
                        "{url} returned {} content, which is not text; webfetch returns text and HTML only",
                        if mime.is_empty() { "binary" } else { &mime }
                    )));
                }
                _ => decode(&body, charset.as_deref()),
            };
            let content = match (kind, format) {
                (BodyKind::Html, FetchFormat::Markdown) => to_markdown(&text).map_err(|e| {
                    ToolError::caused(format!("converting {url} to markdown failed"), e)
                })?,
                (BodyKind::Html, FetchFormat::Text) => to_text(&text),
                _ => text,
            };
            return Ok(WebFetchOutput {
                url: start.to_string(),
                final_url: url.to_string(),
                redirects,
                status: status.as_u16(),
                content_type,
                format,
                bytes: body.len() as u64,
                content,
            });
        }
    }
}

impl Tool for WebFetchTool {
    type Input = WebFetchInput;
    type Output = WebFetchOutput;

    fn traits(&self) -> ToolTraits {
        ToolTraits::reads_the_network()
    }

    fn description(&self) -> String {
        "Fetches an http(s) URL and returns its content as markdown (default), text or html. \
         Responses over 5 MiB are refused; private and loopback addresses are refused; at most \
         10 redirects. Timeout 30 s by default, at most 120 s (`timeout_ms`)."
            .into()
    }

    fn intent(
        &self,
        input: &WebFetchInput,
        _location: &Location,
    ) -> Result<Vec<PermissionRequest>, ToolError> {
        check_timeout(input.timeout_ms)?;
        let url = parse_url(&input.url)?;
        // What the guard refuses from the URL alone (a private or loopback
        // literal) is refused here, before anyone is asked, with the message
        // `execute` would give; names are checked again when they resolve.
        self.policy.check(&url).map_err(refused)?;
        let url = url.to_string();
        let pattern = host_save_pattern(&url);
        Ok(vec![
            PermissionRequest::url("webfetch", url, Risk::Network).with_save_pattern(pattern),
        ])
    }

    async fn execute(
        &self,
        input: WebFetchInput,
        ctx: ToolContext,
    ) -> Result<WebFetchOutput, ToolError> {
        let timeout = check_timeout(input.timeout_ms)?;
        let url = parse_url(&input.url)?;
        // Refuse bad schemes and private literals before anything else.
        self.policy.check(&url).map_err(refused)?;
        let shown = url.to_string();
        tokio::select! {
            () = ctx.cancel.cancelled() => Err(ToolError::Cancelled),
            r = tokio::time::timeout(timeout, self.fetch(url, input.format.unwrap_or_default())) => {
                r.map_err(|_| ToolError::Failed(format!(
                    "timed out after {} ms fetching {shown}", timeout.as_millis()
                )))?
            }
        }
    }

    fn project(&self, output: &WebFetchOutput) -> Vec<Content> {
        vec![Content::text(output.content.clone())]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_from_media_type_and_sniffing() {
        assert_eq!(body_kind("text/html", b""), BodyKind::Html);
        assert_eq!(body_kind("application/json", b"{}"), BodyKind::Text);
        assert_eq!(body_kind("application/vnd.api+json", b"{}"), BodyKind::Text);
        assert_eq!(body_kind("image/png", b"\x89PNG"), BodyKind::Binary);
        assert_eq!(body_kind("", b"  <!DOCTYPE html><p>x"), BodyKind::Html);
        assert_eq!(body_kind("", b"plain"), BodyKind::Text);
        assert_eq!(body_kind("", b"a\0b"), BodyKind::Binary);
    }

    #[test]
    fn webfetch_saves_the_host_only() {
        assert_eq!(
            host_save_pattern("https://docs.rs/regex/latest?x=1"),
            Some("https://docs.rs/*".into())
        );
        assert_eq!(host_save_pattern("https://u:p@h/x"), None);
    }

    #[test]
    fn decodes_declared_charset() {
        assert_eq!(decode(b"caf\xe9", Some("iso-8859-1")), "café");
        assert_eq!(decode("café".as_bytes(), None), "café");
        assert_eq!(decode("x".as_bytes(), Some("no-such-charset")), "x");
    }

    #[test]
    fn timeout_and_url_checks() {
        assert!(check_timeout(Some(0)).is_err());
        assert!(
            check_timeout(Some(MAX_TIMEOUT_MS + 1))
                .unwrap_err()
                .to_string()
                .contains("between 1 and 120000")
        );
        assert_eq!(check_timeout(None).unwrap(), Duration::from_secs(30));
        assert!(
            parse_url("not a url")
                .unwrap_err()
                .to_string()
                .contains("invalid url")
        );
        let long = format!("http://a/{}", "x".repeat(MAX_URL_BYTES));
        assert!(parse_url(&long).unwrap_err().to_string().contains("limit"));
    }
}
